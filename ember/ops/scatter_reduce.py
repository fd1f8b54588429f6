"""``scatter_reduce``: reduce ``src`` into ``input`` at ``index`` along ``dim`` with 'sum',
'prod', 'mean', 'amax' or 'amin', with or without the input's own value (``include_self``).

Every reduction is built from ``scatter`` (whose 'sum' is differentiable). Without the input's
own value, the scattered positions of the input are first set to the reduction's identity
(0, 1, -inf / +inf) and only the untouched positions keep it.

Gradients of 'amax' / 'amin' / 'prod' (NOTE [scatter_reduce gradients]): the value is the exact
forward ``out``; the gradient rides on ``expr - expr.detach()`` where ``expr`` is linear in the
input and ``src`` with constant coefficients, equal to torch's derivative: for 'amax' / 'amin'
1 / (number of tied winners) for each element equal to the result, 0 for the others; for 'prod'
the product of the other elements of the group. So first derivatives match torch; the second
derivative of 'prod' comes out 0 (torch's is not) - see docs/DEVIATIONS.md.
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _make, _wrap_dim
from ..autograd.grad_mode import is_grad_enabled, no_grad

_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _hit_mask(shape, index, dim):
    """Bool array of ``shape``: True where some element of ``index`` scatters to."""
    from .gather import _along
    hit = np.zeros(shape, bool)
    if index.size:
        hit[_along(index, dim)] = True
    return hit


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "b":
        return reduce == "amin"
    big = np.iinfo(dtype).max if dtype.kind in "iu" else np.inf
    return -big if reduce == "amax" else big


def _src_part(src, index):
    """The part of ``src`` that ``index`` covers (src may be larger than index)."""
    if tuple(src.shape) == tuple(index.shape):
        return src
    return src[tuple(slice(0, s) for s in index.shape)]


def _with_gradient(out, expr):
    """``out``'s value with ``expr``'s gradient (see NOTE [scatter_reduce gradients])."""
    return out.detach() + (expr - expr.detach())


def _tied_gradient(input, dim, index, idx, src, out, self_in):
    """amax / amin: each element equal to the result gets 1 / (number of such elements)."""
    from .gather import _along
    x, o = input.detach().numpy(), out.detach().numpy()
    part = _src_part(src, index)
    eq_self = self_in & (x == o)
    # (indexing with _along, not take_along_axis: an index smaller than the input on another
    # dim would be broadcast up to the input's size there)
    eq_src = part.detach().numpy() == o[_along(idx, dim)]
    count = eq_self.astype(np.float64)
    np.add.at(count, _along(idx, dim), eq_src)
    share_src = np.where(eq_src, 1.0 / np.maximum(count, 1)[_along(idx, dim)],
                         0.0)
    share_self = np.where(eq_self, 1.0 / np.maximum(count, 1), 0.0)
    return _linear(input, dim, index, part, share_self, share_src)


def _product_gradient(input, dim, index, idx, src, self_in):
    """prod: each element's coefficient is the product of the other elements of its group."""
    from .gather import _along
    x = np.where(self_in, input.detach().numpy(), 1)
    part = _src_part(src, index)
    s = part.detach().numpy()
    key = _along(idx, dim)
    nonzero = np.where(x != 0, x, 1).astype(np.float64)
    zeros = (x == 0).astype(np.int64)
    np.multiply.at(nonzero, key, np.where(s != 0, s, 1))
    np.add.at(zeros, key, (s == 0).astype(np.int64))

    def others(values, prod_nz, n_zero):
        safe = np.where(values != 0, values, 1)
        return np.where(n_zero == 0, prod_nz / safe,
                        np.where((n_zero == 1) & (values == 0), prod_nz, 0.0))

    coef_self = np.where(self_in, others(x, nonzero, zeros), 0.0)
    coef_src = others(s, nonzero[key], zeros[key])
    return _linear(input, dim, index, part, coef_self, coef_src)


def _linear(input, dim, index, part, coef_self, coef_src):
    dt = input.dtype.np
    zeros = _make(np.zeros(input.shape, dt))
    return input * _make(coef_self.astype(dt)) + zeros.scatter_add(
        dim, index, part * _make(coef_src.astype(dt)))


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """out = input with ``src`` reduced in at ``index`` along ``dim`` ('sum', 'prod', 'mean',
    'amax', 'amin'); with ``include_self=False`` the input's value at a position that receives
    values takes no part in its reduction. Differentiable with respect to input and src."""
    from .gather import _along, _check_index, scatter
    # torch also takes 'max' / 'min' (undocumented, the names of scatter's old reductions)
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce not in _REDUCES:
        raise RuntimeError(f"scatter_reduce(): reduce argument must be one of {_REDUCES}; got "
                           f"{reduce!r}")
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): argument 'src' must be Tensor, not "
                        f"{type(src).__name__}")
    _check_index("scatter_reduce", input, dim, index)
    if reduce in ("amax", "amin") and input.is_complex():  # complex numbers have no order
        raise NotImplementedError(f"scatter_reduce(): '{reduce}' is not implemented for complex "
                                  f"tensors; got {input.dtype}")
    if input.ndim == 0:
        flat = scatter_reduce(input.reshape(1), 0, index.reshape(-1), src.reshape(-1), reduce,
                              include_self=include_self)
        return flat.reshape(())
    if index.ndim == 0:   # NOTE [0-d index] (ops/gather.py)
        index, src = index.reshape(1), src.reshape(-1) if src.ndim == 0 else src
    d = _wrap_dim(dim, input.ndim, "scatter_reduce")
    if src.dtype != input.dtype:
        src = src.to(input.dtype)
    idx = index._data.astype(np.int64, copy=False)
    hit = _hit_mask(input.shape, idx, d)
    base = input
    if not include_self and hit.any():
        base = input.masked_fill(_make(hit), _identity(reduce, input.dtype.np))
    if reduce == "mean":
        total = scatter(base, d, index, src, reduce="sum")
        counts = np.ones(input.shape, np.int64) if include_self else (~hit).astype(np.int64)
        np.add.at(counts, _along(idx, d), 1)
        count = _make(counts.astype(input.dtype.np))
        if not (input.is_floating_point() or input.is_complex()):  # integers: floor division
            return total.div(count, rounding_mode="floor")
        return total / count
    if reduce == "sum":
        return scatter(base, d, index, src, reduce="sum")
    with no_grad():
        out = scatter(base, d, index, src, reduce=reduce)
    wants_grad = input.requires_grad or src.requires_grad
    if not wants_grad or not is_grad_enabled() or not input.is_floating_point():
        return out
    self_in = np.ones(input.shape, bool) if include_self else ~hit
    if reduce == "prod":
        expr = _product_gradient(input, d, index, idx, src, self_in)
    else:
        expr = _tied_gradient(input, d, index, idx, src, out, self_in)
    return _with_gradient(out, expr)
