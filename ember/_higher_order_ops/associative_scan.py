"""ember._higher_order_ops.associative_scan: an inclusive scan with a user combine function.

torch lowers it to a parallel tree of combines under torch.compile; ember runs the scan in
order, one combine per step along ``dim`` (the combine function must be associative, so the
values are the same), and autograd follows the calls as it does any other Python code."""
from __future__ import annotations

from ..utils._pytree import tree_flatten, tree_unflatten


def associative_scan(combine_fn, xs, dim, reverse=False, combine_mode="pointwise"):
    """Scan the tensors of the pytree ``xs`` along ``dim``: element i of the result is
    ``combine_fn`` folded over elements 0..i (n-1..i when ``reverse``). ``combine_fn(left,
    right)`` takes and returns pytrees shaped like ``xs`` holding slices of size 1 along dim."""
    if combine_mode not in ("pointwise", "generic"):
        raise ValueError(f"associative_scan: combine_mode must be 'pointwise' or 'generic', but "
                         f"got {combine_mode!r}")
    leaves, spec = tree_flatten(xs)
    if not leaves:
        raise ValueError("associative_scan: xs holds no tensors")
    if combine_mode == "pointwise":  # as torch on a CPU
        raise ValueError("associative_scan: combine_mode='pointwise' needs every input tensor "
                         "on CUDA or XPU; ember runs on the CPU (use combine_mode='generic')")
    ndim = leaves[0].ndim
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"associative_scan: dim {dim} is out of range for tensors of "
                         f"{ndim} dimensions")
    d = dim % max(ndim, 1)
    n = leaves[0].shape[d]
    if any(leaf.ndim != ndim or leaf.shape[d] != n for leaf in leaves):
        raise ValueError(f"associative_scan: every tensor of xs needs the same size along dim "
                         f"{dim}; got shapes {[tuple(leaf.shape) for leaf in leaves]}")
    steps = range(n - 1, -1, -1) if reverse else range(n)
    acc, outs = None, []
    for i in steps:
        cur = [leaf.narrow(d, i, 1) for leaf in leaves]
        if acc is not None:
            cur = tree_flatten(combine_fn(tree_unflatten(acc, spec),
                                          tree_unflatten(cur, spec)))[0]
            if len(cur) != len(leaves):
                raise ValueError(f"associative_scan: combine_fn returned {len(cur)} tensors "
                                 f"for xs of {len(leaves)}")
        acc = cur
        outs.append(cur)
    if reverse:
        outs.reverse()
    if n == 0:
        return tree_unflatten([leaf.clone() for leaf in leaves], spec)
    from .. import cat
    return tree_unflatten([cat([o[k] for o in outs], d) for k in range(len(leaves))], spec)
