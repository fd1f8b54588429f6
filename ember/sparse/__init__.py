"""``ember.sparse``: COO sparse tensors.

``ember.sparse_coo_tensor(indices, values, size)`` and ``Tensor.to_sparse()`` build them;
``coalesce()``, ``indices()``, ``values()``, ``to_dense()``, ``_nnz()``, ``sparse_dim()`` and
``dense_dim()`` inspect them; ``ember.sparse.mm`` / ``ember.spmm`` / ``ember.mm`` / ``@`` multiply
a sparse matrix by a dense one (SciPy's CSR kernels) with gradients for the dense operand and
the sparse values; ``ember.sparse.sum``, ``softmax`` and ``log_softmax`` reduce over the stored
entries.
"""
from __future__ import annotations

from .._tensor import Tensor
from . import _arith  # noqa: F401  (sparse arithmetic methods on SparseTensor)
from ._coo import (SparseTensor, layout, sparse_coo, sparse_coo_tensor,  # noqa: F401
                   strided, to_sparse)
from ._legacy import (BFloat16Tensor, ByteTensor, CharTensor, DoubleTensor,
                      FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor)
from ._ops import addmm, log_softmax, mm, softmax, sum

__all__ = ["SparseTensor", "sparse_coo_tensor", "mm", "addmm", "sum", "softmax", "log_softmax",
           "spmm", "check_sparse_tensor_invariants",
           # the legacy constructors (ember/sparse/_legacy.py)
           "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
           "IntTensor", "ShortTensor", "CharTensor", "ByteTensor"]

Tensor.to_sparse = to_sparse
Tensor.to_sparse_coo = to_sparse


def spmm(input, mat2):
    """``ember.spmm(sparse, dense)``: the same product as ``ember.sparse.mm``; two dense
    operands give their dense product, as torch."""
    if not (getattr(input, "is_sparse", False) or getattr(mat2, "is_sparse", False)):
        import ember
        return ember.mm(input, mat2)
    return mm(input, mat2)


class check_sparse_tensor_invariants:
    """PyTorch's switch for validating sparse tensors on construction. ember always validates
    them, so this context manager / decorator only exists for compatibility."""

    def __init__(self, enable=True):
        self._enable = enable

    @staticmethod
    def is_enabled():
        return True

    @staticmethod
    def enable():
        """No-op: always enabled in ember."""

    @staticmethod
    def disable():
        """No-op: ember always checks sparse invariants."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn
