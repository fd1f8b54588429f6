"""vmap: map a function over a dimension of its inputs, with batched kernels.

``vmap(f)(x)`` calls ``f`` once on batched tensors (NOTE [vmap batching] in _batched.py): each
op runs one batched kernel through its batching rule (_rules.py), or once per sample when it
has none, and the outputs are unwrapped at ``out_dims``.

NOTE [vmap fallback]
Some functions cannot run on batched tensors: they read values (``.item()``, NumPy on a
tensor's data, data-dependent Python control flow), write in place, or draw random numbers.
ember then evaluates ``f`` once per slice and stacks the results, which is exact for every
function (this is what vmap did before it had batching rules):
* a batched tensor's values read outside an op raise ``Unbatchable``; vmap catches it, puts the
  random state back, and runs the slices. PyTorch raises an error in these cases instead.
* random numbers: when the batched call consumed the default generator, ``randomness="error"``
  raises as torch does; "different" and "same" rerun by slices, with "same" restoring the
  random state before each slice, so every slice sees the same draws.
``chunk_size`` splits the batch into chunks of that many samples, each one batched call.
"""

from __future__ import annotations

import functools

import ember

from .._meta import current_hook
from ..autograd import function as _function
from . import _batched, _rules  # noqa: F401 - _rules installs the rule table
from ._batched import SIZES, Unbatchable, is_batched, physical, wrap
from ._tree import broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap"]

ACTIVE: list[int] = []  # the levels of the vmaps now running, outermost first
RANDOMNESS: list[str] = []  # their randomness= (for a Function's vmap rule: info.randomness)
FALLBACKS = [0]  # how many vmap calls ran the function slice by slice (NOTE [vmap fallback])


def _batch_size(flat_args, flat_dims):
    sizes = {a.shape[d] for a, d in zip(flat_args, flat_dims, strict=True) if d is not None}
    if not sizes:
        raise ValueError("vmap: at least one input must be mapped (in_dims are all None, or "
                         "the mapped inputs are not Tensors)")
    if len(sizes) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sorted(sizes)} for the mapped dimension")
    return sizes.pop()


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dimension ``in_dims`` of its inputs; outputs stacked at ``out_dims``.

    Args:
        in_dims: an int (or None) for every input, or a structure matching the inputs.
        out_dims: an int for every output, or a tuple matching them.
        randomness: "error" (random ops raise), "different" (each sample draws its own) or
            "same" (every sample sees the same draws).
        chunk_size: evaluate this many samples per batched call (None: all at once).

    Example:
        >>> import ember
        >>> from ember.func import vmap
        >>> vmap(ember.dot)(ember.ones(3, 2), ember.ones(3, 2))
        tensor([2., 2., 2.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        flat_args, spec = tree_flatten(args)
        flat_dims = broadcast_prefix(in_dims, args, "in_dims")
        for a, d in zip(flat_args, flat_dims, strict=True):
            if d is None:
                continue
            if not isinstance(a, ember.Tensor):
                raise ValueError(f"vmap: Got in_dim={d} for an input but the input is of type "
                                 f"{type(a).__name__}. We cannot vmap over non-Tensor arguments")
            if not -a.dim() <= d < max(a.dim(), 1) or a.dim() == 0:
                raise ValueError(f"vmap: Got in_dim={d} for some input, but that input is a "
                                 f"Tensor of dimensionality {a.dim()} so expected in_dim to "
                                 f"satisfy -{a.dim()} <= in_dim < {a.dim()}.")
        flat_dims = [None if d is None else d % a.dim() for a, d in zip(flat_args, flat_dims)]
        n = _batch_size(flat_args, flat_dims)
        call = functools.partial(_call, func, spec, kwargs, out_dims, randomness)
        if chunk_size is None or chunk_size >= n:
            return call(flat_args, flat_dims, n)
        parts = []
        for start in range(0, n, chunk_size):
            m = min(chunk_size, n - start)
            chunk = [a.narrow(d, start, m) if d is not None else a
                     for a, d in zip(flat_args, flat_dims, strict=True)]
            parts.append(call(chunk, flat_dims, m))
        return _join_chunks(parts, out_dims)

    return wrapped


def _rng_state():
    gen = ember.default_generator
    return gen._np, gen._np.bit_generator.state


def _rng_used(before):
    gen = ember.default_generator
    return gen._np is not before[0] or gen._np.bit_generator.state != before[1]


def _rng_restore(before):
    gen = ember.default_generator
    gen._np = before[0]
    gen._np.bit_generator.state = before[1]


def _random_error():
    return RuntimeError("vmap: called random operation while in randomness error mode. Please "
                        "either use the 'same' or 'different' randomness flags on vmap or "
                        "perform the randomness operation out of vmap")


def _call(func, spec, kwargs, out_dims, randomness, flat_args, flat_dims, n):
    """One evaluation over ``n`` samples: batched, or by slices (NOTE [vmap fallback])."""
    before = _rng_state()
    RANDOMNESS.append(randomness)
    try:
        result = _batched_call(func, spec, kwargs, out_dims, flat_args, flat_dims, n)
    except Unbatchable:
        if ACTIVE and any(is_batched(a) for a in flat_args):
            raise  # an enclosing vmap's batch is involved: the outer one takes the slices
        _rng_restore(before)
        return _sliced_call(func, spec, kwargs, out_dims, randomness, flat_args, flat_dims, n)
    finally:
        RANDOMNESS.pop()
    if _rng_used(before):
        if randomness == "error":
            raise _random_error()
        _rng_restore(before)
        return _sliced_call(func, spec, kwargs, out_dims, randomness, flat_args, flat_dims, n)
    return result


def _batched_call(func, spec, kwargs, out_dims, flat_args, flat_dims, n):
    level = len(ACTIVE) + 1
    ACTIVE.append(level)
    SIZES[level] = n
    _function._batch_hook[0] = _batched.dispatch
    try:
        entered = [a if d is None else _enter(a, d, level)
                   for a, d in zip(flat_args, flat_dims, strict=True)]
        result = func(*tree_unflatten(entered, spec), **kwargs)
        return _exit(result, out_dims, level, n, func)
    finally:
        ACTIVE.pop()
        del SIZES[level]
        if not ACTIVE:
            _function._batch_hook[0] = current_hook()  # NOTE [Meta tensors]


def _enter(a, d, level):
    """Input ``a`` mapped over its logical dim ``d`` as a tensor batched at ``level``."""
    if is_batched(a):
        phys, levels = physical(a)
        k = len(levels)
        return wrap(phys.movedim(k + d, k) if d else phys, levels + (level,))
    return wrap(a.movedim(d, 0) if d else a, (level,))


def _exit(result, out_dims, level, n, func):
    leaves, spec = tree_flatten(result)
    dims = broadcast_prefix(out_dims, result, "out_dims")
    out = []
    for leaf, dim in zip(leaves, dims, strict=True):
        if not isinstance(leaf, ember.Tensor):
            if dim is None:
                out.append(leaf)
                continue
            raise ValueError(f"vmap: `{getattr(func, '__name__', 'func')}` must only return "
                             f"Tensors, got type {type(leaf).__name__}. Did you mean to set "
                             "out_dims= to None for output?")
        batched_here = is_batched(leaf) and level in physical(leaf)[1]
        if dim is None:
            if batched_here:
                raise ValueError("vmap: out_dims=None for an output that is batched over the "
                                 "mapped dimension; it has to be stacked at some dim")
            out.append(leaf)
            continue
        r = leaf.dim()
        if not -(r + 1) <= dim <= r:
            raise IndexError(f"vmap: out_dims={dim} is out of range for an output of "
                             f"{r} dims (expected -{r + 1} <= out_dim <= {r})")
        od = dim % (r + 1)
        if not batched_here:
            shape = list(leaf.shape)
            shape.insert(od, n)
            out.append(leaf.unsqueeze(od).expand(shape))
            continue
        phys, levels = physical(leaf)
        k = len(levels)
        i = levels.index(level)
        phys = phys.movedim(i, k - 1 + od) if i != k - 1 + od else phys
        rest = levels[:i] + levels[i + 1:]
        out.append(wrap(phys, rest) if rest else phys)
    return tree_unflatten(out, spec)


def _sliced_call(func, spec, kwargs, out_dims, randomness, flat_args, flat_dims, n):
    """f once per slice, results stacked: NOTE [vmap fallback]."""
    FALLBACKS[0] += 1
    before = _rng_state()
    results = []
    for i in range(n):
        if randomness == "same":
            _rng_restore(before)
        sliced = [a.select(d, i) if d is not None else a
                  for a, d in zip(flat_args, flat_dims, strict=True)]
        results.append(func(*tree_unflatten(sliced, spec), **kwargs))
    if randomness == "error" and _rng_used(before):
        raise _random_error()
    return _stack_outputs(results, out_dims, n)


def _stack_outputs(results, out_dims, n):
    if not results:
        raise ValueError("vmap: cannot evaluate a function slice by slice over an empty batch")
    leaves0, spec = tree_flatten(results[0])
    columns = [tree_flatten(r)[0] for r in results]
    dims = broadcast_prefix(out_dims, results[0], "out_dims")
    stacked = []
    for j, leaf in enumerate(leaves0):
        dim = dims[j]
        if not isinstance(leaf, ember.Tensor):
            if dim is None:
                stacked.append(leaf)
                continue
            raise ValueError(f"vmap: `{getattr(results[0], '__name__', 'func')}` must only "
                             f"return Tensors, got type {type(leaf).__name__}. Did you mean to "
                             "set out_dims= to None for output?")
        values = [col[j] for col in columns]
        if dim is None:
            stacked.append(values[0])
            continue
        stacked.append(ember.stack(values, dim=dim))
    return tree_unflatten(stacked, spec)


def _join_chunks(parts, out_dims):
    leaves0, spec = tree_flatten(parts[0])
    columns = [tree_flatten(p)[0] for p in parts]
    dims = broadcast_prefix(out_dims, parts[0], "out_dims")
    joined = []
    for j, leaf in enumerate(leaves0):
        if dims[j] is None or not isinstance(leaf, ember.Tensor):
            joined.append(leaf)
            continue
        joined.append(ember.cat([col[j] for col in columns], dim=dims[j]))
    return tree_unflatten(joined, spec)
