"""vmap: map a function over a dimension of its inputs.

NOTE [vmap by slices]
ember has no per-op batching rules: ``vmap(f)(x)`` calls ``f`` once per slice of the mapped
dimension (``chunk_size`` slices at a time are only a grouping of those calls) and stacks the
results along ``out_dims``. This is exact for every function, random ones included (with
``randomness="same"`` each call sees the same random state), and composes with ember.func's
other transforms; its cost is that of a Python loop over the batch.
"""

from __future__ import annotations

import functools

import ember

from ._tree import broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap"]


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
        randomness: "error", "different" or "same" (each slice sees the same random state).
        chunk_size: accepted; slices are always evaluated one at a time (NOTE [vmap by slices]).

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
            if not -a.dim() <= d < max(a.dim(), 1):
                raise ValueError(f"vmap: Got in_dim={d} for some input, but that input is a "
                                 f"Tensor of dimensionality {a.dim()} so expected in_dim to "
                                 f"satisfy -{a.dim()} <= in_dim < {a.dim()}.")
        n = _batch_size(flat_args, flat_dims)
        state = ember.get_rng_state() if randomness == "same" else None
        results = []
        for i in range(n):
            if state is not None:
                ember.set_rng_state(state)
            sliced = [a.select(d, i) if d is not None else a
                      for a, d in zip(flat_args, flat_dims, strict=True)]
            results.append(func(*tree_unflatten(sliced, spec), **kwargs))
        return _stack_outputs(results, out_dims, n)

    return wrapped


def _stack_outputs(results, out_dims, n):
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
        stacked.append(ember.stack(values, dim=dim) if n else leaf.unsqueeze(dim)[:0])
    return tree_unflatten(stacked, spec)
