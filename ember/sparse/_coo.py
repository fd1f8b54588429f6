"""The sparse COO tensor: integer ``indices`` (sparse_dim, nnz) + ``values`` (nnz, *dense_shape).

A ``SparseTensor`` is an ``ember.Tensor`` (``isinstance`` and ``ember.is_tensor`` hold, as in
PyTorch) with ``is_sparse`` True and ``layout`` ``ember.sparse_coo``. Its values are an ordinary
dense ember Tensor, and every sparse operation is written with ember ops on them (or with an Op
whose backward is), so gradients reach ``values`` -- and through it whatever produced them --
with the ordinary autograd engine. The indices are a NumPy int64 array, never differentiated.

Dense ops do not accept sparse tensors: asking one for its dense storage raises a RuntimeError
that says to call ``.to_dense()``, instead of computing garbage.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._backend import CPU, check_device
from .._meta import refuse
from .._size import Size
from .._tensor import Tensor, _make, _warn_non_leaf_grad, _wrap_dim

_new = object.__new__


class layout:
    """A tensor memory layout: ``ember.strided`` (dense) or ``ember.sparse_coo``."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"ember.{self.name}"

    def __eq__(self, other):
        # dense tensors report their layout as the string "strided"; treat it as ember.strided
        if isinstance(other, str):
            return other == self.name
        return isinstance(other, layout) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __reduce__(self):
        return (_layout_by_name, (self.name,))


strided = layout("strided")
sparse_coo = layout("sparse_coo")


def _layout_by_name(name):
    import ember
    return {"strided": strided, "sparse_coo": sparse_coo}.get(name) or getattr(ember, name)


class SparseTensor(Tensor):
    """A COO sparse tensor; build one with ``ember.sparse_coo_tensor`` or ``Tensor.to_sparse()``.

    Differs from torch: the sparse tensor's gradient is kept on its values (``s.grad`` is the
    sparse tensor of those gradients at the same indices).
    """

    is_sparse = True
    layout = sparse_coo

    # ------------------------------------------------------------------ storage guards
    @property
    def _data(self):
        raise RuntimeError("this operation does not support sparse COO tensors (layout="
                           "ember.sparse_coo) in ember; convert with .to_dense() first, or use "
                           "an ember.sparse function (mm, sum, softmax).")

    @property
    def _vc(self):
        return self._v._vc

    @property
    def _requires_grad(self):
        return self._v._requires_grad

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self):
        return Size(self._size)

    def size(self, dim=None):
        if dim is None:
            return Size(self._size)
        return self._size[_wrap_dim(dim, len(self._size), "size")]

    @property
    def dtype(self):
        return self._v.dtype

    @property
    def device(self):
        return CPU

    @property
    def ndim(self):
        return len(self._size)

    def dim(self):
        return len(self._size)

    ndimension = dim

    def numel(self):
        return int(np.prod(self._size, dtype=np.int64))

    nelement = numel

    def element_size(self):
        return self._v.element_size()

    def is_floating_point(self):
        return self._v.is_floating_point()

    def sparse_dim(self):
        return self._i.shape[0]

    def dense_dim(self):
        return len(self._size) - self._i.shape[0]

    def _nnz(self):
        return self._i.shape[1]

    def is_coalesced(self):
        return self._coalesced

    def is_contiguous(self, memory_format=None):
        raise RuntimeError("is_contiguous: sparse COO tensors do not have is_contiguous")

    def type(self, dtype=None, non_blocking=False, **kw):
        if dtype is None:
            from ..ops.views import _TYPE_NAMES
            return _TYPE_NAMES[self.dtype].replace("ember.", "ember.sparse.")
        return self.to(dtype if not isinstance(dtype, type) else dtype.dtype)

    # ------------------------------------------------------------------ autograd state
    @property
    def requires_grad(self):
        return self._v.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        self._v.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._v.grad_fn

    @property
    def is_leaf(self):
        return self._v.is_leaf

    @property
    def grad(self):
        g = self._v._grad
        if g is None and not self._v._retains_grad and not self.is_leaf:
            _warn_non_leaf_grad(2)
        return None if g is None else _from_parts(self._i, g, self._size, self._coalesced)

    @grad.setter
    def grad(self, value):
        if value is None:
            self._v.grad = None
            return
        if not getattr(value, "is_sparse", False) or not np.array_equal(value._i, self._i):
            raise RuntimeError("assigning .grad of a sparse tensor: expected a sparse tensor with "
                               "the same indices (ember keeps sparse gradients on the values)")
        self._v.grad = value._v

    def detach(self):
        return _from_parts(self._i, self._v.detach(), self._size, self._coalesced)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        raise RuntimeError("backward: a sparse tensor is not a scalar loss; reduce it first "
                           "(e.g. ember.sparse.sum(s)) and call backward on the result")

    # ------------------------------------------------------------------ the COO parts
    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return _make(self._i)

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._v.view_as(self._v)

    def _indices(self):
        return _make(self._i)

    def _values(self):
        return self._v.view_as(self._v)

    def coalesce(self):
        """Sum the values of duplicate indices and sort the indices (lexicographically)."""
        if self._coalesced:
            return self
        sd = self.sparse_dim()
        nnz = self._nnz()
        if nnz == 0:
            return _from_parts(self._i, self._v, self._size, True)
        sizes = self._size[:sd]
        linear = np.ravel_multi_index(tuple(self._i), sizes) if sd else np.zeros(nnz, np.int64)
        uniq, inverse = np.unique(linear, return_inverse=True)
        idx = np.stack(np.unravel_index(uniq, sizes)).astype(np.int64) if sd else \
            np.zeros((0, len(uniq)), np.int64)
        zeros = _make(np.zeros((len(uniq),) + tuple(self._v.shape[1:]), self._v._data.dtype))
        vals = zeros.index_add(0, _make(inverse.reshape(-1).astype(np.int64)), self._v)
        return _from_parts(idx, vals, self._size, True)

    def to_dense(self, dtype=None, *, masked_grad=None):
        """The dense tensor (duplicates summed); differentiable w.r.t. the values."""
        sd = self.sparse_dim()
        sizes = self._size[:sd]
        dense_shape = self._size[sd:]
        nnz = self._nnz()
        linear = np.ravel_multi_index(tuple(self._i), sizes) if sd and nnz else \
            np.zeros(nnz, np.int64)
        flat = _make(np.zeros((int(np.prod(sizes, dtype=np.int64)),) + tuple(dense_shape),
                              self._v._data.dtype))
        out = flat.index_add(0, _make(np.asarray(linear, np.int64)), self._v)
        out = out.reshape(self._size)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(f"to_sparse: conversion from Sparse to Sparse with sparse_dim="
                               f"{sparse_dim} is not supported; the tensor has sparse_dim="
                               f"{self.sparse_dim()}")
        return self

    to_sparse_coo = to_sparse

    def to(self, *args, **kwargs):
        dev = kwargs.get("device")
        dt = kwargs.get("dtype")
        for a in args:
            if isinstance(a, D.dtype) or a in (float, int, bool):
                dt = a
            elif isinstance(a, Tensor):
                dt = a.dtype
            elif a is not None:
                dev = a
        if dev is not None:
            check_device(dev)
        if dt is None or D.to_dtype(dt) is self.dtype:
            return self
        return _from_parts(self._i, self._v.to(dt), self._size, self._coalesced)

    def float(self, memory_format=None):
        return self.to(D.float32)

    def double(self, memory_format=None):
        return self.to(D.float64)

    def half(self, memory_format=None):
        return self.to(D.float16)

    def bfloat16(self, memory_format=None):
        return self.to(D.bfloat16)

    def long(self, memory_format=None):
        return self.to(D.int64)

    def clone(self, memory_format=None):
        return _from_parts(self._i.copy(), self._v.clone(), self._size, self._coalesced)

    # ------------------------------------------------------------------ arithmetic
    def _sparse_mm(self, other):
        from ._ops import sparse_dense_mm
        return sparse_dense_mm(self, other)

    def mm(self, mat2):
        from ._ops import mm
        return mm(self, mat2)

    def matmul(self, other):
        return self._sparse_mm(other)

    def __matmul__(self, other):
        return self._sparse_mm(other)

    def sum(self, dim=None, keepdim=False, dtype=None):
        from ._ops import sum as sparse_sum
        if keepdim:
            raise RuntimeError("sum: keepdim=True is not supported for sparse COO tensors")
        return sparse_sum(self, dim, dtype=dtype)

    def t(self):
        if self.sparse_dim() != 2 or self.dense_dim() != 0:
            raise RuntimeError(f"t() expects a 2-D sparse tensor with no dense dims; got "
                               f"sparse_dim={self.sparse_dim()}, dense_dim={self.dense_dim()}")
        return self.transpose(0, 1)

    def transpose(self, dim0, dim1):
        sd = self.sparse_dim()
        d0, d1 = _wrap_dim(dim0, self.ndim, "transpose"), _wrap_dim(dim1, self.ndim, "transpose")
        if d0 >= sd or d1 >= sd:
            raise RuntimeError("transpose: only sparse dims of a sparse COO tensor can be "
                               f"swapped; got dims {dim0}, {dim1} with sparse_dim={sd}")
        order = list(range(len(self._size)))
        order[d0], order[d1] = order[d1], order[d0]
        idx = self._i.copy()
        idx[[d0, d1]] = idx[[d1, d0]]
        size = tuple(self._size[d] for d in order)
        return _from_parts(idx, self._v, size, self._coalesced and d0 == d1)

    def __mul__(self, other):
        if isinstance(other, (int, float, bool, np.number)) or (
                isinstance(other, Tensor) and not other.is_sparse and other.ndim == 0):
            return _from_parts(self._i, self._v * other, self._size, self._coalesced)
        raise RuntimeError("mul: a sparse COO tensor can only be multiplied by a scalar in "
                           "ember; convert with .to_dense() for elementwise products")

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, (int, float, np.number)) or (
                isinstance(other, Tensor) and not other.is_sparse and other.ndim == 0):
            return _from_parts(self._i, self._v / other, self._size, self._coalesced)
        raise RuntimeError("div: a sparse COO tensor can only be divided by a scalar in ember")

    def __neg__(self):
        return _from_parts(self._i, -self._v, self._size, self._coalesced)

    def __add__(self, other):
        if isinstance(other, SparseTensor):
            if other._size != self._size or other.sparse_dim() != self.sparse_dim():
                raise RuntimeError(f"add: sparse tensors must have the same size and sparse_dim;"
                                   f" got {list(self._size)} and {list(other._size)}")
            from ..ops.join import cat
            other_v = other._v.to(self.dtype) if other.dtype is not self.dtype else other._v
            vals = cat([self._v, other_v], 0)
            return _from_parts(np.concatenate([self._i, other._i], 1), vals, self._size, False)
        if isinstance(other, Tensor):
            return self.to_dense() + other
        raise RuntimeError("add: a sparse COO tensor can be added to a sparse or dense tensor; "
                           f"got {type(other).__name__}")

    __radd__ = __add__

    def __sub__(self, other):
        return self + (-other)

    # ------------------------------------------------------------------ Python protocol
    def __len__(self):
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    def __bool__(self):
        raise RuntimeError("Boolean value of a sparse tensor is ambiguous; use .to_dense()")

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to "
                               "Scalar")
        return self.to_dense().item()

    def numpy(self, *, force=False):
        raise RuntimeError("numpy(): can't convert a sparse COO tensor to a NumPy array; call "
                           ".to_dense().numpy(), or use .indices()/.values()")

    def __repr__(self):
        # torch's layout: the indices' and values' bodies (an empty one with its size), then
        # size on a new line, nnz, the dtype unless the values show it, layout, autograd state
        from .. import _format
        indent = len("tensor(")
        parts = []
        for name, arr, dt in (("indices", self._i, D.int64),
                              ("values", self._v._data, self._v.dtype)):
            body = _format.tensor_body(arr, dt, indent + len(f"{name}=tensor("))
            if arr.size == 0:
                body += f", size={arr.shape}"
            parts.append(f"{name}=tensor({body})")
        text = "tensor(" + (",\n" + " " * indent).join(parts)
        suffixes = [f"size={tuple(self._size)}", f"nnz={self._nnz()}"]
        if self.dtype not in _format.implied_dtypes():
            suffixes.append(f"dtype={self.dtype!r}")
        suffixes.append("layout=ember.sparse_coo")
        suffixes += _format.grad_suffixes(self._v)
        return _format._with_suffixes(text, suffixes, indent, force_newline=True)

    def __reduce_ex__(self, protocol):
        return (_rebuild_sparse, (self._i.copy(), self._v.detach().clone(), self._size,
                                  self._coalesced, self._v.requires_grad and self._v.is_leaf))

    def __deepcopy__(self, memo):
        out = _rebuild_sparse(self._i.copy(), self._v.detach().clone(), self._size,
                              self._coalesced, self._v.requires_grad and self._v.is_leaf)
        memo[id(self)] = out
        return out


def _from_parts(indices, values, size, coalesced):
    """A SparseTensor over int64 ``indices`` (ndarray) and ember Tensor ``values`` (no checks)."""
    s = _new(SparseTensor)
    s._i = indices
    s._v = values
    s._size = tuple(int(n) for n in size)
    s._coalesced = bool(coalesced)
    return s


def _rebuild_sparse(indices, values, size, coalesced, requires_grad):
    if requires_grad:
        values.requires_grad_(True)
    return _from_parts(indices, values, size, coalesced)


# ---------------------------------------------------------------------------------- creation

def _as_index_array(indices):
    if isinstance(indices, Tensor):
        if indices.is_sparse:
            raise TypeError("sparse_coo_tensor(): indices must be a dense tensor")
        arr = indices._data
    else:
        arr = np.asarray(indices)
    if arr.dtype == object:
        raise TypeError("sparse_coo_tensor(): indices must be a rectangular array of integers")
    if arr.dtype.kind not in "iubf":
        raise TypeError(f"sparse_coo_tensor(): indices must be integers; got dtype {arr.dtype}")
    if arr.ndim != 2:
        if arr.size == 0 and arr.ndim == 1:
            arr = arr.reshape(0, 0)
        else:
            raise RuntimeError(f"sparse_coo_tensor(): indices must be a 2-D (sparse_dim, nnz) "
                               f"tensor; got shape {list(arr.shape)}")
    return arr.astype(np.int64)  # PyTorch casts indices to int64 too (a copy: no aliasing)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with ``values[k]`` at position ``indices[:, k]``.

    Args:
        indices: integer array-like of shape (sparse_dim, nnz) (cast to int64).
        values: array-like or Tensor of shape (nnz, *dense_shape). A tensor that requires grad
            stays connected: gradients of sparse results flow back into it.
        size: the full shape; inferred from the largest index and the values when omitted.
        dtype: the values' dtype (default: inferred from values).
        requires_grad: make the sparse tensor a leaf that requires grad (its values do).
        is_coalesced: promise that indices are unique and sorted (unchecked, as in PyTorch).

    Example:
        >>> import ember
        >>> s = ember.sparse_coo_tensor([[0, 1], [2, 0]], [3.0, 4.0], (2, 3))
        >>> s.to_dense()
        tensor([[0., 0., 3.],
                [4., 0., 0.]])

    Differs from torch: the invariants (index range, shapes) are always checked.
    """
    if device is not None:
        check_device(device)
    idx = _as_index_array(indices)
    if isinstance(values, Tensor):
        vals = values
        if dtype is not None:
            vals = vals.to(dtype)
    else:
        from ..ops.creation import tensor
        vals = tensor(values, dtype=dtype)
    if vals.ndim == 0:
        raise RuntimeError("sparse_coo_tensor(): values must be at least 1-D (nnz, "
                           "*dense_shape); got a 0-d tensor")
    sd, nnz = idx.shape
    if vals.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {vals.shape[0]}")
    dense_shape = tuple(vals.shape[1:])
    if size is None:
        sparse_sizes = tuple(int(m) + 1 for m in idx.max(axis=1)) if nnz else (0,) * sd
        size = sparse_sizes + dense_shape
    size = tuple(int(s) for s in size)
    if len(size) != sd + len(dense_shape):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = "
                           f"{len(size)}, sparse_dim = {sd}, dense_dim = {len(dense_shape)}")
    if size[sd:] != dense_shape:
        raise RuntimeError(f"sparse_coo_tensor(): values have dense shape {list(dense_shape)} "
                           f"but size {list(size)} expects {list(size[sd:])} after the "
                           f"{sd} sparse dims")
    if nnz:
        lo, hi = idx.min(axis=1), idx.max(axis=1)
        for d in range(sd):
            if lo[d] < 0:
                raise RuntimeError(f"found negative index {lo[d]} for dim {d}")
            if hi[d] >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                                   f"{size[d]} but found index {hi[d]}")
    if requires_grad:
        if not vals.is_floating_point():
            raise RuntimeError("only Tensors of floating point dtype can require gradients; got "
                               f"dtype {vals.dtype}")
        vals = vals.detach().requires_grad_(True)
    coalesced = bool(is_coalesced) if is_coalesced is not None else nnz <= 1
    return _from_parts(idx, vals, size, coalesced)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """``Tensor.to_sparse()``: the COO tensor of the nonzero entries (coalesced).

    With ``sparse_dim`` < ndim, the trailing dims stay dense and a sparse entry is kept where
    any of its dense block is nonzero. Differentiable w.r.t. the dense input.
    """
    if layout is not None and layout != sparse_coo:
        raise RuntimeError(f"to_sparse: only layout=ember.sparse_coo is supported; got {layout}")
    if self._meta:
        refuse("to_sparse (the number of entries depends on the data)")
    nd = self.ndim
    sd = nd if sparse_dim is None else int(sparse_dim)
    if not 0 <= sd <= nd:
        raise RuntimeError(f"to_sparse: sparse_dim argument must be in [0, {nd}]; got {sd}")
    arr = self._data
    mask = arr != 0
    if sd < nd:
        mask = mask.reshape(arr.shape[:sd] + (-1,)).any(axis=-1)
    if sd == 0:
        nnz = int(bool(np.asarray(mask).any()))
        idx = np.zeros((0, nnz), np.int64)
        vals = self.unsqueeze(0)[:nnz]
    else:
        where = np.nonzero(mask)  # row-major order: the result is already coalesced
        idx = np.stack(where).astype(np.int64) if where else np.zeros((0, 0), np.int64)
        vals = self[tuple(_make(w.astype(np.int64)) for w in where)]
    return _from_parts(idx, vals, tuple(self.shape), True)
