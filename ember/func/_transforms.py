"""grad, vjp, jvp, jacrev, jacfwd, hessian and linearize as function transforms.

Each transform runs the function with ember's reverse-mode autograd: the differentiated
inputs enter as tensors that require grad, and the derivative is taken with
``autograd.grad``. When the caller is itself being differentiated (an outer transform, or
inputs that already require grad) the inner derivative is built with ``create_graph`` so that
transforms nest: ``grad(grad(f))`` is the second derivative.
"""

from __future__ import annotations

import functools

import numpy as np

import ember

from .._tensor import _make
from . import _vmap
from ._batched import is_batched, physical, sizes_of, wrap
from ._rules import _align
from ._tree import tree_flatten, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize"]


def _normalize_argnums(argnums, n):
    single = isinstance(argnums, int)
    if not single and not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: "
                           f"{type(argnums).__name__}")
    nums = (argnums,) if single else argnums
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(a).__name__}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    return single, tuple(a % n for a in nums)


def _enter(tree):
    """Leaves of ``tree`` as tensors that require grad (kept attached if they already do)."""
    leaves, spec = tree_flatten(tree)
    entered = []
    for leaf in leaves:
        if not isinstance(leaf, ember.Tensor):
            raise RuntimeError(f"Expected the differentiated inputs to be Tensors, got "
                               f"{type(leaf).__name__}")
        if not leaf.is_floating_point():
            raise RuntimeError(f"only Tensors of floating point dtype can require gradients; "
                               f"got {leaf.dtype}")
        if _vmap.ACTIVE:
            entered.append(_enter_batched(leaf))
        else:
            entered.append(leaf if leaf.requires_grad else _private_leaf(leaf))
    return entered, spec


def _private_leaf(t):
    """A transform's own differentiated input: a fresh leaf, marked so that an enclosing
    transform does not take it for a tensor the caller closed over (_reaches_other_leaves)."""
    leaf = t.detach().requires_grad_()
    leaf._transform_input = True
    return leaf


def _enter_batched(leaf):
    """A differentiated input inside vmap: a tensor batched over every running vmap level,
    whose physical tensor is what autograd differentiates. Inputs not batched at some level
    are expanded to it (a stride-0 view): the samples then get separate gradients, the
    per-sample gradients of NOTE [vmap batching]."""
    levels = tuple(_vmap.ACTIVE)
    if is_batched(leaf):
        phys, have = physical(leaf)
        phys = _align(phys, have, levels, expand=True)
    else:
        phys = leaf
        if leaf.requires_grad:
            phys = phys.expand(sizes_of(levels) + tuple(leaf.shape))
        else:
            phys = _make(np.broadcast_to(leaf._data, sizes_of(levels) + leaf._data.shape))
    if phys.requires_grad:
        phys = phys.view_as(phys)  # its own node: only the paths through this input count
    else:
        phys = _private_leaf(phys)
    return wrap(phys, levels)


def _tracked_outside(tree):
    """Whether a leaf of ``tree`` requires grad before a transform enters it, with grad mode on
    (the caller records): the transform's results must then stay differentiable for the
    caller's autograd (torch's rule)."""
    return ember.is_grad_enabled() and any(
        isinstance(x, ember.Tensor) and x.requires_grad for x in tree_flatten(tree)[0])


def _reaches_other_leaves(outputs, own):
    """Whether the graph of ``outputs`` reaches a leaf requiring grad that is not one of the
    transform's own inputs ``own`` (a tensor the function closed over): the results must then
    stay differentiable for the caller, as torch keeps them. One walk over the graph's nodes."""
    from ..autograd.node import AccumulateGrad
    own_ids = {id(_phys(x)) for x in own}
    seen, stack = set(), [o.grad_fn for o in outputs
                          if isinstance(o, ember.Tensor) and o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is AccumulateGrad:
            var = node.variable
            if id(var) not in own_ids and not var.__dict__.get("_transform_input", False):
                return True
            continue
        stack.extend(nxt for nxt, _ in node.next_functions)
    return False


def _detach_tree(tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([x.detach() if isinstance(x, ember.Tensor) else x for x in leaves],
                          spec)


def _phys(t):
    """The tensor autograd sees for ``t`` (the physical one of a batched tensor)."""
    return physical(t)[0] if is_batched(t) else t


def _rewrap(grads, inputs):
    return [wrap(g, physical(i)[1]) if is_batched(i) else g
            for g, i in zip(grads, inputs, strict=True)]


_outer_level = [0]  # how many transforms enclose the current call


def _grads(outputs, inputs, cotangents, create_graph, retain_graph=None):
    if any(is_batched(t) for t in list(outputs) + list(inputs)):
        return _batched_grads(outputs, inputs, cotangents, create_graph, retain_graph)
    gs = ember.autograd.grad(outputs, inputs, cotangents, retain_graph=retain_graph,
                             create_graph=create_graph, allow_unused=True)
    return [ember.zeros_like(i) if g is None else g for g, i in zip(gs, inputs, strict=True)]


def _batched_grads(outputs, inputs, cotangents, create_graph, retain_graph):
    """Gradients of batched outputs: one backward over the physical tensors. The batch's
    samples never mix, so d(sum over samples)/d(physical input) holds every sample's own
    gradient."""
    outs, cots = [], []
    for i, o in enumerate(outputs):
        c = None if cotangents is None else cotangents[i]
        po = physical(o)[0] if is_batched(o) else o
        if c is None:
            pc = ember.ones_like(po)
        else:
            have = physical(o)[1] if is_batched(o) else ()
            pc = _align(*physical(c), have) if is_batched(c) else c.expand(po.shape)
            if tuple(pc.shape) != tuple(po.shape):
                pc = pc.expand(po.shape)
        outs.append(po)
        cots.append(pc)
    phys_in = [_phys(i) for i in inputs]
    gs = ember.autograd.grad(outs, phys_in, cots, retain_graph=retain_graph,
                             create_graph=create_graph, allow_unused=True)
    gs = [ember.zeros_like(p) if g is None else g for g, p in zip(gs, phys_in, strict=True)]
    return _rewrap(gs, inputs)


def grad_and_value(func, argnums=0, has_aux=False):
    """``func`` transformed to return (gradient of its scalar output wrt ``argnums``, output)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        single, nums = _normalize_argnums(argnums, len(args))
        args = list(args)
        outer_grad = ember.is_grad_enabled()
        outside = any(_tracked_outside(args[a]) for a in nums)
        entered = []
        for a in nums:
            leaves, spec = _enter(args[a])
            entered.append((leaves, spec))
            args[a] = tree_unflatten(leaves, spec)
        create_graph = _outer_level[0] > 0 or outside or any(
            x.requires_grad and _phys(x).grad_fn is not None
            for leaves, _ in entered for x in leaves)
        _outer_level[0] += 1
        try:
            with ember.enable_grad():
                result = func(*args, **kwargs)
        finally:
            _outer_level[0] -= 1
        if has_aux and not (isinstance(result, tuple) and len(result) == 2):
            raise RuntimeError("grad_and_value(f)(*args): output of function f should be a "
                               "tuple: (output, aux) if has_aux is True")
        output, aux = result if has_aux else (result, None)
        if not isinstance(output, ember.Tensor) or output.numel() != 1:
            shape = tuple(output.shape) if isinstance(output, ember.Tensor) else type(output)
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                               f"Tensor, got tensor with {len(shape)} dims. Maybe you wanted "
                               f"to use the vjp or jacrev APIs instead?" if isinstance(
                                   output, ember.Tensor) else
                               f"grad_and_value(f)(*args): Expected f(*args) to return a "
                               f"Tensor, got {shape}")
        flat_inputs = [x for leaves, _ in entered for x in leaves]
        if not create_graph and output.requires_grad and outer_grad:
            create_graph = _reaches_other_leaves([output], flat_inputs)
        if not output.requires_grad:
            gs = [ember.zeros_like(x) for x in flat_inputs]
        else:
            gs = _grads([output], flat_inputs, None, create_graph)
        trees, start = [], 0
        for leaves, spec in entered:
            trees.append(tree_unflatten(gs[start:start + len(leaves)], spec))
            start += len(leaves)
        g = trees[0] if single else tuple(trees)
        value = output if create_graph else output.detach()
        if has_aux:
            return g, (value, aux if create_graph else _detach_tree(aux))
        return g, value

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of ``func``'s scalar output with respect to ``argnums``.

    Example:
        >>> import ember
        >>> from ember.func import grad
        >>> grad(lambda x: (x ** 3).sum())(ember.tensor([1.0, 2.0]))
        tensor([ 3., 12.])
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives the vector-Jacobian products."""
    outer_grad = ember.is_grad_enabled()
    outside = _tracked_outside(primals)
    leaves, spec = _enter(primals)
    args = tree_unflatten(leaves, spec)
    # build differentiable VJPs only when something outside will differentiate them
    nested = _outer_level[0] > 0 or outside or any(x.requires_grad and x.grad_fn is not None
                                                   for x in leaves)
    _outer_level[0] += 1
    try:
        with ember.enable_grad():
            result = func(*args)
    finally:
        _outer_level[0] -= 1
    output, aux = result if has_aux else (result, None)
    out_leaves, out_spec = tree_flatten(output)
    for o in out_leaves:
        if isinstance(o, ember.Tensor) and not (o.is_floating_point() or o.is_complex()):
            raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or complex "
                               f"Tensors, got Tensor with dtype {o.dtype}")
    if not nested and outer_grad:
        nested = _reaches_other_leaves(out_leaves, leaves)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        cot_leaves, cot_spec = tree_flatten(cotangents)
        if len(cot_leaves) != len(out_leaves):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function; got "
                               f"{len(cot_leaves)} cotangents for {len(out_leaves)} outputs")
        pairs = [(o, c) for o, c in zip(out_leaves, cot_leaves, strict=True) if o.requires_grad]
        if not pairs:
            gs = [ember.zeros_like(x) for x in leaves]
        else:
            cg = nested if create_graph is None else create_graph
            gs = _grads([o for o, _ in pairs], leaves, [c for _, c in pairs], cg,
                        retain_graph=retain_graph or cg)
        return tree_unflatten(gs, spec)

    # what the caller sees is detached unless the caller's autograd can reach it (the inner
    # graph stays with vjp_fn)
    shown = output if nested else _detach_tree(output)
    if has_aux:
        return shown, vjp_fn, (aux if nested else _detach_tree(aux))
    return shown, vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the Jacobian-vector product with ``tangents``), by two reverse passes."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be "
                           "tuples")
    if len(primals) != len(tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           f"the same python structure; got {len(primals)} and {len(tangents)}")
    result = vjp(func, *primals, has_aux=has_aux)
    output, vjp_fn = result[0], result[1]
    out_leaves, out_spec = tree_flatten(output)
    # d/du <vjp(u), t> = J t: differentiate the VJP with respect to a dummy cotangent u
    # (entered as a differentiated input is: inside vmap each sample then gets its own dummy,
    # where a batched zeros_like(o).requires_grad_() summed the samples' products)
    dummies = _enter([ember.zeros_like(o) for o in out_leaves])[0]
    with ember.enable_grad():
        vjps = vjp_fn(tree_unflatten(dummies, out_spec), create_graph=True)
        vjp_leaves = tree_flatten(vjps)[0]
        tan_leaves = tree_flatten(tangents)[0]
        pairs = [(v, t) for v, t in zip(vjp_leaves, tan_leaves, strict=True) if v.requires_grad]
        if pairs:
            jvps = _grads([v for v, _ in pairs], dummies, [t for _, t in pairs],
                          create_graph=_outer_level[0] > 0)
        else:
            jvps = [ember.zeros_like(o) for o in out_leaves]
    out = tree_unflatten([o.detach() if _outer_level[0] == 0 else o for o in out_leaves],
                         out_spec)
    tangent_out = tree_unflatten(jvps, out_spec)
    if has_aux:
        return out, tangent_out, result[2]
    return out, tangent_out


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` with respect to ``argnums``, row by row in reverse mode.

    For one input and one output the result has shape ``output.shape + input.shape``.
    """

    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"jacrev: `chunk_size` should be greater than 0; got {chunk_size!r}.")

    @functools.wraps(func)
    def wrapper(*args):
        single, nums = _normalize_argnums(argnums, len(args))
        diff = tuple(args[a] for a in nums)

        def partial(*chosen):
            full = list(args)
            for a, value in zip(nums, chosen, strict=True):
                full[a] = value
            return func(*full)

        result = vjp(partial, *diff, has_aux=has_aux)
        output, vjp_fn = result[0], result[1]
        out_leaves, out_spec = tree_flatten(output)
        in_leaves, in_spec = tree_flatten(diff)
        per_output = []
        for j, out in enumerate(out_leaves):
            rows = []
            for k in range(out.numel()):
                basis = [ember.zeros_like(o) for o in out_leaves]
                basis[j].view(-1)[k] = 1
                rows.append(tree_flatten(vjp_fn(tree_unflatten(basis, out_spec)))[0])
            blocks = []
            for i, x in enumerate(in_leaves):
                if rows:
                    stacked = ember.stack([r[i] for r in rows])
                else:
                    stacked = x.new_zeros((0,) + tuple(x.shape))
                blocks.append(stacked.reshape(tuple(out.shape) + tuple(x.shape)))
            tree = tree_unflatten(blocks, in_spec)
            per_output.append(tree[0] if single else tree)
        jac = tree_unflatten(per_output, out_spec)
        if has_aux:
            return jac, result[2]
        return jac

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` (same values as jacrev; ember computes it in reverse mode)."""
    inner = jacrev(func, argnums, has_aux=has_aux)

    @functools.wraps(func)
    def wrapper(*args):
        _, nums = _normalize_argnums(argnums, len(args))
        for a in nums:  # forward mode's check of its primals, as torch words it
            for x in tree_flatten(args[a])[0]:
                if isinstance(x, ember.Tensor) and not (x.is_floating_point() or x.is_complex()):
                    raise ValueError(f"jacfwd: Expected primal to be floating point or complex, "
                                     f"but got: {x.dtype}")
        return inner(*args)

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of ``func``'s scalar output with respect to ``argnums``."""
    return jacfwd(jacrev(func, argnums), argnums)


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) gives the Jacobian-vector product."""
    output = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn
