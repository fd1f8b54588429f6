"""The long tail of ``torch.Tensor``'s surface: device predicates, ``new``, ``resize_``,
``put_``, ``fill_diagonal_``, comparisons that return Python bools, and small composites.

Each is written with ember ops (so autograd sees the in-place ones through ``index_put_``), and
installed on ``Tensor`` by ``install()``; the functional forms torch also has at the top level
(``ember.isclose``, ``ember.aminmax``, ...) are exported from ``ember/__init__.py``. The methods of
``dir(torch.Tensor)`` ember still lacks are listed, with the reason, in
``tests/test_tensor_surface.py``.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from . import _dtype as D
from ._size import Size
from ._tensor import Tensor, _make

# Devices ember never runs on: torch programs probe these flags to pick a device or dtype.
_FALSE_FLAGS = ("is_xpu", "is_mps", "is_meta", "is_ipu", "is_maia", "is_mtia", "is_mkldnn",
                "is_vulkan", "is_xla", "is_nested", "is_sparse_csr")


def _as_tensor(x, like):
    if isinstance(x, Tensor):
        return x
    return _make(np.asarray(x, dtype=like._data.dtype))


# ------------------------------------------------------------------ construction and size
def new(self, *args, dtype=None, device=None, requires_grad=False):
    """Legacy constructor of the tensor's dtype: ``new(2, 3)`` / ``new(Size)`` give a tensor of
    that shape, ``new(sequence)`` a tensor of that data, ``new(tensor)`` the same tensor."""
    import ember
    dtype = self.dtype if dtype is None else dtype
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0]
    if not args:
        return ember.empty(0, dtype=dtype, requires_grad=requires_grad)
    if all(isinstance(a, (int, np.integer)) for a in args) or isinstance(args[0], Size):
        return ember.zeros(*args, dtype=dtype, requires_grad=requires_grad)
    if len(args) == 1:
        return ember.tensor(args[0], dtype=dtype, requires_grad=requires_grad)
    raise TypeError(f"new(): expected sizes (ints or a Size), a sequence of data or a tensor; "
                    f"got {tuple(type(a).__name__ for a in args)}")


def resize_(self, *sizes, memory_format=None):
    """Give the tensor a new shape in place, keeping its first elements in row-major order;
    new elements are zero (torch leaves them uninitialised)."""
    if self.requires_grad:
        raise RuntimeError("resize_: cannot resize variables that require grad; got a tensor "
                           "with requires_grad=True. Resize a detached copy instead.")
    shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) \
        else tuple(int(s) for s in sizes)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"resize_: negative size in {list(shape)}")
    flat = self._data.reshape(-1)
    out = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=flat.dtype)
    n = min(flat.size, out.size)
    out[:n] = flat[:n]
    self._data = out.reshape(shape)
    self._vc[0] += 1
    return self


def resize_as_(self, the_template, memory_format=None):
    return resize_(self, *the_template.shape)


def resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return resize_(self.detach().clone(), *sizes)


def resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return resize_(self.detach().clone(), *tensor.shape)


def sum_to_size(self, *size):
    """Sum over the broadcast dims so the result has ``size`` (which must broadcast to self)."""
    from .ops.registry import sum_to
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    try:
        np.broadcast_shapes(tuple(shape), tuple(self.shape))
    except ValueError:
        raise RuntimeError(f"sum_to_size: size {list(shape)} is not expandable to size "
                           f"{list(self.shape)}") from None
    return sum_to(self, tuple(shape))


# ------------------------------------------------------------------ in-place writes
def _flat_to_index(self, index, op):
    idx = index.reshape(-1).to(D.int64)._data
    n = self.numel()
    if idx.size and (idx.max() >= n or idx.min() < -n):
        bad = int(idx.max() if idx.max() >= n else idx.min())
        raise IndexError(f"{op}: index {bad} is out of bounds for a tensor of {n} elements "
                         f"(shape {list(self.shape)}); expected -{n} <= index < {n}.")
    idx = np.where(idx < 0, idx + n, idx)
    if self.ndim == 0:
        return ()
    return tuple(_make(a.astype(np.int64)) for a in np.unravel_index(idx, tuple(self.shape)))


def put_(self, index, source, accumulate=False):
    """Write ``source`` at the flat (row-major) positions ``index``; add when accumulate."""
    if not isinstance(index, Tensor) or index.dtype is not D.int64:
        raise RuntimeError(f"put_: expected index to be a LongTensor; got "
                           f"{getattr(index, 'dtype', type(index).__name__)}")
    source = _as_tensor(source, self)
    if source.numel() != index.numel():
        raise RuntimeError(f"put_: source and index must have the same number of elements; got "
                           f"{source.numel()} and {index.numel()}")
    key = _flat_to_index(self, index, "put_")
    if self.ndim == 0:
        value = source.reshape(()) + (self if accumulate else 0)
        return self.copy_(value)
    return self.index_put_(key, source.reshape(-1).to(self.dtype), accumulate=accumulate)


def put(self, index, source, accumulate=False):
    return put_(self.clone(), index, source, accumulate)


def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal (all dims of equal length, or a 2-D matrix). For a tall matrix
    with wrap=True the diagonal starts again every ncols + 1 rows, as in torch."""
    if self.ndim < 2:
        raise RuntimeError(f"fill_diagonal_: dimensions must larger than 1; got "
                           f"{self.ndim}-D tensor of shape {list(self.shape)}")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError(f"fill_diagonal_: all dimensions of input must be of equal length; "
                           f"got shape {list(self.shape)}")
    n = self.numel()
    strides = np.cumprod((1,) + tuple(self.shape[:0:-1]))[::-1]
    step = int(strides.sum())
    if self.ndim == 2:
        rows, cols = self.shape
        stop = n if (wrap and rows > cols + 1) else min(rows, cols) * cols
        positions = np.arange(0, stop, cols + 1)
        positions = positions[positions < n]
        if not wrap:
            positions = positions[: min(rows, cols)]
    else:
        positions = np.arange(self.shape[0]) * step
    index = _make(positions.astype(np.int64))
    value = _make(np.full(positions.size, fill_value, dtype=self._data.dtype))
    return put_(self, index, value)


# ------------------------------------------------------------------ comparisons


def is_same_size(self, other):
    return tuple(self.shape) == tuple(other.shape)


def is_set_to(self, tensor):
    return self._data is tensor._data or (
        self._data.__array_interface__ == tensor._data.__array_interface__)


def is_nonzero(self):
    if self.numel() != 1:
        raise RuntimeError(f"is_nonzero: Boolean value of Tensor with {'no values' if self.numel() == 0 else 'more than one value'} is ambiguous")  # noqa: E501
    return bool(self._data.reshape(-1)[0])


# ------------------------------------------------------------------ small composites


def split_with_sizes(self, split_sizes, dim=0):
    if sum(split_sizes) != self.shape[dim]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{self.shape[dim]} (input tensor's size at dimension {dim}), but "
                           f"got split_sizes={list(split_sizes)}")
    return self.split(list(split_sizes), dim)


# ------------------------------------------------------------------ install
# conj, conj_physical, resolve_conj, resolve_neg, is_conj, is_neg, real: ops/complex.py
FUNCTIONS = {"split_with_sizes": split_with_sizes}


def _accept_numpy_kwargs(fn):
    """fn, also taking NumPy's axis=/keepdims= for dim=/keepdim= (torch's parser does this for
    its builtins; registered ops get it in ops/registry.py, these few are plain functions)."""
    from .ops.registry import numpy_kwargs

    def wrapper(*args, **kwargs):
        if "axis" in kwargs or "keepdims" in kwargs:
            kwargs = numpy_kwargs(kwargs)
        return fn(*args, **kwargs)
    functools.update_wrapper(wrapper, fn)
    return wrapper


_NUMPY_KWARG_FUNCTIONS = ("cat", "concat", "concatenate", "stack", "softmax", "log_softmax")


def install() -> None:
    for name in _FALSE_FLAGS:
        setattr(Tensor, name, False)
    Tensor.is_cpu = True
    methods = dict(FUNCTIONS)
    methods.update(new=new, resize_=resize_, resize_as_=resize_as_, resize=resize,
                   resize_as=resize_as, sum_to_size=sum_to_size, put_=put_, put=put,
                   fill_diagonal_=fill_diagonal_, is_same_size=is_same_size,
                   is_set_to=is_set_to, is_nonzero=is_nonzero)
    for name, fn in methods.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
    Tensor.is_distributed = lambda self: False
    Tensor.is_inference = lambda self: False
    import ember
    for name in _NUMPY_KWARG_FUNCTIONS:
        if hasattr(ember, name):
            setattr(ember, name, _accept_numpy_kwargs(getattr(ember, name)))
    for name in ("softmax", "log_softmax"):
        setattr(Tensor, name, _accept_numpy_kwargs(getattr(Tensor, name)))
    for name in ("multinomial", "bernoulli"):
        if not hasattr(Tensor, name):
            setattr(Tensor, name, getattr(ember, name))
