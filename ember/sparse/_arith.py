"""Arithmetic between sparse COO tensors, and with dense ones, that optimizers' sparse-gradient
paths use (MADGRAD, D-Adaptation AdaGrad, SM3, Adagrad-style accumulators):

- ``dense + sparse``, ``dense - sparse`` and their in-place forms (``p.add_(update,
  alpha=-lr)``): the sparse entries are scattered into a copy of the dense tensor (dense
  result, as torch);
- ``sparse + sparse``: coalesced when both operands are (a merge), else the entries side by side;
- ``sparse * sparse``: the product where both have an entry (``grad * grad``);
- in place on a sparse tensor: ``add_``/``sub_`` of a sparse tensor, ``mul_``/``div_`` by a
  scalar or (mul_) a sparse tensor, ``zero_``, ``resize_as_``; ``zeros_like`` and ``new``.

NOTE [Sparse in-place arithmetic]
A SparseTensor's parts (indices, values, size, coalesced flag) are replaced by those of the
out-of-place result: the object keeps its identity (optimizer state holds it), but a view of
its old values (``s._values()``) no longer aliases it, as in torch after an add_ that grows nnz.
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _make
from ._coo import SparseTensor, _from_parts


def _empty_like_parts(size, sparse_dim, values):
    """Index and value parts of a sparse tensor of ``size`` with no entries."""
    dense = tuple(size[sparse_dim:])
    return (np.zeros((sparse_dim, 0), dtype=np.int64),
            values.new_zeros((0,) + dense))


def _linear(s):
    sd = s.sparse_dim()
    if not sd:
        return np.zeros(s._nnz(), np.int64)
    return np.ravel_multi_index(tuple(s._i), s._size[:sd])


def sparse_add(a, b, alpha=1):
    """a + alpha * b for sparse a and b of one size (see the module docstring)."""
    if a._size != b._size or a.sparse_dim() != b.sparse_dim():
        raise RuntimeError(f"add: sparse tensors must have the same size and sparse_dim; got "
                           f"{list(a._size)} (sparse_dim {a.sparse_dim()}) and "
                           f"{list(b._size)} (sparse_dim {b.sparse_dim()})")
    from ..ops.join import cat
    bv = b._v if alpha == 1 else b._v * alpha
    if bv.dtype is not a.dtype:
        bv = bv.to(a.dtype)
    out = _from_parts(np.concatenate([a._i, b._i], 1), cat([a._v, bv], 0), a._size, False)
    # torch merges two coalesced operands into a coalesced result (code then pairs the result's
    # values with another tensor's sparse_mask of the same indices)
    return out.coalesce() if a._coalesced and b._coalesced else out


def sparse_mul(a, b):
    """The elementwise product of two sparse tensors: entries where both have one."""
    if a._size != b._size or a.sparse_dim() != b.sparse_dim():
        raise RuntimeError(f"mul: sparse tensors must have the same size and sparse_dim; got "
                           f"{list(a._size)} and {list(b._size)}")
    flag = a._coalesced and b._coalesced
    a, b = a.coalesce(), b.coalesce()
    _, ia, ib = np.intersect1d(_linear(a), _linear(b), assume_unique=True,
                               return_indices=True)
    from ..ops.gather import index_select
    rows_a = index_select(a._v, 0, _make(ia.astype(np.int64)))
    rows_b = index_select(b._v, 0, _make(ib.astype(np.int64)))
    return _from_parts(a._i[:, ia], rows_a * rows_b, a._size, flag)


def dense_add_sparse(dense, sparse, alpha=1):
    """dense + alpha * sparse as a new dense tensor (differentiable in both)."""
    if tuple(dense.shape) != sparse._size:
        raise RuntimeError(f"add: a dense tensor of shape {list(dense.shape)} and a sparse "
                           f"tensor of size {list(sparse._size)}; expected the same shape")
    # duplicates are summed in the sparse tensor's dtype first, as torch does
    sparse = sparse.coalesce()
    values = sparse._v if sparse._v.dtype is dense.dtype else sparse._v.to(dense.dtype)
    if alpha != 1:   # scaled in the result's dtype, as torch
        values = values * alpha
    index = tuple(_make(row) for row in sparse._i)
    return dense.index_put(index, values, accumulate=True)


def _replace(self, other):
    self._i, self._v, self._size, self._coalesced = (other._i, other._v, other._size,
                                                     other._coalesced)
    return self


def _add_(self, other, *, alpha=1):
    if not isinstance(other, SparseTensor):
        raise RuntimeError("add_: a sparse COO tensor can add only a sparse tensor in place; "
                           f"got a dense {type(other).__name__}. Use dense.add_(sparse) instead.")
    return _replace(self, sparse_add(self, other, alpha))


def _sub_(self, other, *, alpha=1):
    return _add_(self, other, alpha=-alpha)


def _add(self, other, *, alpha=1):
    if isinstance(other, SparseTensor):
        return sparse_add(self, other, alpha)
    raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")


def _sub(self, other, *, alpha=1):
    return _add(self, other, alpha=-alpha)


def _mul(self, other):
    if isinstance(other, SparseTensor):
        return sparse_mul(self, other)
    return _SCALAR_MUL(self, other)


def _mul_(self, other):
    return _replace(self, _mul(self, other))


def _div_(self, other):
    return _replace(self, self / other)


def _zero_(self):
    self._i, self._v = _empty_like_parts(self._size, self.sparse_dim(), self._v)
    self._coalesced = True
    return self


def _resize_as_(self, other):
    """Take other's size with no entries (the form ``g.new().resize_as_(g)`` makes an empty
    sparse tensor of g's size)."""
    if not isinstance(other, SparseTensor):
        raise RuntimeError("resize_as_: a sparse COO tensor can take the size of a sparse "
                           f"tensor only; got a dense {type(other).__name__}")
    self._size = other._size
    self._i, self._v = _empty_like_parts(other._size, other.sparse_dim(), self._v)
    self._coalesced = True
    return self


def _new(self, *args):
    """``s.new()`` (empty), ``s.new(*sizes)`` and ``s.new(indices, values, size)``: sparse
    tensors of s's dtype (the values keep their own, as torch's legacy form)."""
    from ._coo import sparse_coo_tensor
    from ._legacy import _empty
    if len(args) in (2, 3) and isinstance(args[1], Tensor):
        return sparse_coo_tensor(args[0], args[1], tuple(args[2]) if len(args) == 3 else None)
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return _empty(tuple(int(a) for a in args) or (0,), self.dtype)
    raise TypeError("new(): a sparse COO tensor's new() takes sizes, or indices, values and "
                    f"a size; got ({', '.join(type(a).__name__ for a in args)})")


_SCALAR_MUL = SparseTensor.__mul__
_DENSE_ADD = SparseTensor.__add__


def _plus(self, other):
    if isinstance(other, SparseTensor):
        return sparse_add(self, other)
    return _DENSE_ADD(self, other)


SparseTensor.__add__ = SparseTensor.__radd__ = _plus
SparseTensor.__mul__ = SparseTensor.__rmul__ = SparseTensor.mul = _mul
SparseTensor.mul_ = _mul_
SparseTensor.add, SparseTensor.sub = _add, _sub
SparseTensor.add_, SparseTensor.sub_ = _add_, _sub_
SparseTensor.div_ = _div_
SparseTensor.zero_ = _zero_
SparseTensor.resize_as_ = _resize_as_
SparseTensor.new = _new
