"""Sparse COO operations: sparse x dense products, sums and softmax over the stored entries."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make
from ..autograd.function import Op
from ..ops.registry import norm_dims
from ._coo import SparseTensor, _from_parts


class SparseMM(Op):
    """``A @ dense`` for the 2-D COO matrix A = (rows, cols, values) of ``n_rows`` rows.

    One primitive (SciPy's CSR product) for speed; its backward is again ember ops and this Op,
    so double backward works:
        d values[k] = sum_j grad[rows[k], j] * dense[cols[k], j]
        d dense     = A^T @ grad   (the same product with rows and cols swapped)
    """

    @staticmethod
    def forward(ctx, values, dense, rows, cols, n_rows):
        import scipy.sparse
        ctx.rows, ctx.cols = rows, cols
        ctx.save_for_backward(values, dense)
        out_dtype = dense.dtype
        if out_dtype in (D.float16.np, D.bfloat16.np):  # SciPy has no half types: go via f32
            values, dense = values.astype(np.float32), dense.astype(np.float32)
        a = scipy.sparse.csr_matrix((values, (rows, cols)), shape=(n_rows, dense.shape[0]))
        return np.asarray(a @ dense).astype(out_dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        values, dense = ctx.saved_tensors
        rows, cols = _make(ctx.rows), _make(ctx.cols)
        gv = gd = None
        if ctx.needs_input_grad[0]:
            gv = (grad.index_select(0, rows) * dense.index_select(0, cols)).sum(-1)
        if ctx.needs_input_grad[1]:
            gd = SparseMM.apply(values, grad, rows=ctx.cols, cols=ctx.rows,
                                n_rows=dense.shape[0])
        return gv, gd


def sparse_dense_mm(sparse, dense):
    """``sparse @ dense`` for a 2-D COO ``sparse`` and a 1-D or 2-D dense tensor."""
    if not isinstance(dense, Tensor):
        raise TypeError(f"mm(): argument 'mat2' must be Tensor, not {type(dense).__name__}")
    if dense.is_sparse:
        return sparse_dense_mm(sparse, dense.to_dense()).to_sparse()  # sparse @ sparse: sparse
    if sparse.sparse_dim() != 2 or sparse.dense_dim() != 0:
        raise RuntimeError(f"mm: expected a 2-D sparse matrix with no dense dims; got sparse_dim="
                           f"{sparse.sparse_dim()}, dense_dim={sparse.dense_dim()} (shape "
                           f"{list(sparse.shape)})")
    if dense.ndim == 1:
        return sparse_dense_mm(sparse, dense.unsqueeze(-1)).squeeze(-1)
    m, k = sparse.shape
    if dense.ndim != 2:
        raise RuntimeError(f"mm: expected the dense operand to be 1-D or 2-D; got shape "
                           f"{list(dense.shape)}")
    if dense.shape[0] != k:
        raise RuntimeError(f"mm: mat1 and mat2 shapes cannot be multiplied ({m}x{k} and "
                           f"{dense.shape[0]}x{dense.shape[1]}); got sparse {[m, k]} @ dense "
                           f"{list(dense.shape)}, expected mat2.shape[0] == {k}.")
    if dense.dtype is not sparse.dtype:
        raise RuntimeError(f"mm: expected the dense operand to have the sparse tensor's dtype; "
                           f"got {sparse.dtype} (sparse) and {dense.dtype} (dense). Convert one "
                           "with .to(dtype).")
    if dense.dtype is D.bool_:
        raise RuntimeError("mm: sparse x dense products are not implemented for bool tensors")
    return SparseMM.apply(sparse._v, dense, rows=sparse._i[0], cols=sparse._i[1], n_rows=m)


def _check_sparse(x, name):
    if not isinstance(x, SparseTensor):
        raise TypeError(f"ember.sparse.{name}(): expected a sparse COO tensor as input; got "
                        f"{type(x).__name__}{' (dense)' if isinstance(x, Tensor) else ''}")


def mm(mat1, mat2, reduce=None):
    """``mat1 @ mat2`` where mat1 is sparse COO (2-D) and mat2 dense or sparse.

    Differentiable w.r.t. the dense operand and the sparse operand's values. A sparse mat2 gives
    a sparse result, as in PyTorch.

    Example:
        >>> import ember
        >>> s = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
        >>> ember.sparse.mm(s, ember.ones(2, 1))
        tensor([[2.],
                [3.]])
    """
    if reduce is not None:
        raise RuntimeError("ember.sparse.mm: the reduce argument is not supported yet")
    if isinstance(mat1, SparseTensor):
        return sparse_dense_mm(mat1, mat2)
    if isinstance(mat2, SparseTensor):  # dense @ sparse = (sparse^T @ dense^T)^T
        return sparse_dense_mm(mat2.t(), mat1.t()).t()
    raise TypeError("ember.sparse.mm(): expected at least one sparse COO operand; got "
                    f"{type(mat1).__name__} and {type(mat2).__name__}")


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` with a sparse mat1 and dense mat and mat2."""
    return mat * beta + mm(mat1, mat2) * alpha


def sum(input, dim=None, dtype=None):
    """Sum of a sparse tensor's entries over ``dim`` (all dims when None).

    Returns a dense tensor when every sparse dim is summed, else a coalesced sparse tensor over
    the remaining dims, as in PyTorch.
    """
    _check_sparse(input, "sum")
    vals = input._v if dtype is None else input._v.to(dtype)
    if dim is None:
        return vals.sum()
    dims = norm_dims(dim, input.ndim, "sparse.sum")
    sd = input.sparse_dim()
    summed_sparse = [d for d in dims if d < sd]
    summed_dense = tuple(d - sd + 1 for d in dims if d >= sd)  # values dim 0 is nnz
    if summed_dense:
        vals = vals.sum(dim=summed_dense)
    keep = [d for d in range(sd) if d not in summed_sparse]
    dense_size = [input._size[d] for d in range(sd, input.ndim) if d not in dims]
    if not keep:
        return vals.sum(0)
    size = [input._size[d] for d in keep] + dense_size
    out = _from_parts(input._i[keep], vals, size, input._coalesced and not summed_sparse)
    return out.coalesce()


def _groups(s, dim):
    """Group id of every stored entry: entries that differ only along ``dim`` share one."""
    sd = s.sparse_dim()
    others = [d for d in range(sd) if d != dim]
    if not others:
        return np.zeros(s._nnz(), np.int64), 1
    key = np.ravel_multi_index(tuple(s._i[others]), tuple(s._size[d] for d in others))
    uniq, inverse = np.unique(key, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), len(uniq)


def _log_softmax_values(s, dim, dtype):
    nd = s.ndim
    if not -nd <= dim < nd:
        raise IndexError(f"softmax: Dimension out of range (expected to be in range of "
                         f"[{-nd}, {nd - 1}], but got {dim})")
    dim %= nd
    if dim >= s.sparse_dim():
        raise RuntimeError("ember.sparse.softmax: dim must be a sparse dim of the input; got "
                           f"dim={dim} with sparse_dim={s.sparse_dim()}")
    s = s.coalesce()
    vals = s._v if dtype is None else s._v.to(dtype)
    group, n_groups = _groups(s, dim)
    g = _make(group)
    # shift by the per-group max for stability; the shift cancels, so it carries no gradient
    shift = np.full((n_groups,) + tuple(vals.shape[1:]), -np.inf, dtype=np.float64)
    np.maximum.at(shift, group, vals._data.astype(np.float64))
    shifted = vals - _make(shift.astype(vals._data.dtype))[group]
    expd = shifted.exp()
    sums = _make(np.zeros(shift.shape, vals._data.dtype)).index_add(0, g, expd)
    return s, shifted - sums.log().index_select(0, g)


def softmax(input, dim, *, dtype=None):
    """Softmax over ``dim`` of the stored entries (unstored entries count as -inf).

    Returns a sparse tensor with the input's (coalesced) indices; differentiable w.r.t. values.
    """
    _check_sparse(input, "softmax")
    s, logp = _log_softmax_values(input, dim, dtype)
    return _from_parts(s._i, logp.exp(), s._size, True)


def log_softmax(input, dim, *, dtype=None):
    """Log-softmax over ``dim`` of the stored entries (see ``softmax``)."""
    _check_sparse(input, "log_softmax")
    s, logp = _log_softmax_values(input, dim, dtype)
    return _from_parts(s._i, logp, s._size, True)

