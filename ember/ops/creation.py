"""Tensor creation: tensor, from_numpy, zeros/ones/full/empty (+ _like), arange, linspace, eye."""
from __future__ import annotations

import ctypes
import math

import numpy as np

from .. import _dtype as D
from .. import _meta
from .._backend import DEFAULT, check_device
from .._info import check_memory_format, preserve_format, preserved_empty
from .._size import int_sizes
from .._tensor import Tensor, UntypedStorage, _make
from ..autograd.grad_mode import _state
from .registry import check_inplace, export, write_into


def _dt(dtype, default=None):
    if dtype is None:
        return default or D.get_default_dtype()
    return D.to_dtype(dtype)


def _finish(arr, requires_grad, device=None):
    if (DEFAULT[0] if device is None else check_device(device)).type == "meta":
        return _meta.new(arr.shape, arr.dtype, requires_grad)
    t = _make(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _is_sequence(data) -> bool:
    """Python's sequence protocol, as torch.tensor reads it: lists and tuples, but also deque,
    range, array.array, memoryview and user classes with __len__ and __getitem__."""
    if isinstance(data, (str, bytes, bytearray, dict, Tensor, np.ndarray)):
        return False
    return hasattr(data, "__len__") and hasattr(data, "__getitem__")


def _infer_dtype(data):
    """dtype torch infers for nested Python data: bool, int64, or the default float."""
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, np.ndarray):
        return D.from_numpy_dtype(data.dtype)
    if isinstance(data, np.generic):
        return D.from_numpy_dtype(data.dtype)
    if isinstance(data, bool):
        return D.bool_
    if isinstance(data, int):
        return D.int64
    if isinstance(data, float):
        return D.get_default_dtype()
    if isinstance(data, complex):
        return D.get_default_complex_dtype()
    if isinstance(data, str):
        raise TypeError("tensor(): invalid data type 'str'")
    if _is_sequence(data):
        kinds = [_infer_dtype(d) for d in data]
        if not kinds:
            return D.get_default_dtype()
        out = kinds[0]
        for k in kinds[1:]:
            out = D.promote_types(out, k)
        return out
    # sets, dicts, generators, None: torch raises RuntimeError for these
    raise RuntimeError(f"tensor(): could not infer dtype of {type(data).__name__}")


def _unwrap(data):
    if isinstance(data, Tensor):
        return data._data
    if _is_sequence(data):
        return [_element(d) for d in data]
    return data


def _element(data):
    """An element of a sequence given to tensor(). A tensor there is read as one number, as
    torch reads it (`torch.tensor([t])` with t of shape (1,) is (1,), not (1, 1)): programs
    collect `[a]` for a one-element action tensor `a` and build a batch from the lists
    (minimalRL's ppo-continuous). NumPy arrays there stay sequences, as in torch."""
    if isinstance(data, Tensor):
        if data.numel() != 1:
            raise ValueError("tensor(): only one element tensors can be converted to Python "
                             f"scalars; got an element of shape {tuple(data.shape)}, expected "
                             "one element. Join tensors with torch.stack or torch.cat.")
        return data._data.reshape(()).item()
    if _is_sequence(data):
        return [_element(d) for d in data]
    return data


@export
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested lists, NumPy arrays, scalars, tensors)."""
    dt = _dt(dtype, _infer_dtype(data))
    values = _unwrap(data)
    try:
        arr = np.array(values, dtype=dt.np)
    except (ValueError, OverflowError) as e:
        raise ValueError(f"tensor(): could not build a tensor of dtype {dt} from the data: {e}")\
            from None
    if arr.dtype == object:
        raise TypeError("tensor(): nested data has inconsistent lengths")
    if device is None and isinstance(data, Tensor) and data._meta:
        device = "meta"  # a meta tensor's copy stays on meta, as in torch
    return _finish(arr, requires_grad, device)


@export
def as_tensor(data, dtype=None, device=None):
    """Share memory with ``data`` when it already is a tensor/array of that dtype, else copy."""
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or D.to_dtype(dtype).np == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


@export
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    if isinstance(obj, UntypedStorage):  # NOTE [Storages of files]: its bytes as `dtype`
        dt = np.dtype(D.to_dtype(D.int64 if dtype is None else dtype).np)  # as torch
        data = obj._bytes()
        t = _make(data[:data.shape[0] // dt.itemsize * dt.itemsize].view(dt))
    else:
        t = as_tensor(obj, dtype=dtype, device=device)
    if copy:
        t = t.clone()
    if requires_grad:
        t.requires_grad_(True)
    return t


@export
def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray`` (constant time; writes are seen both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy(): expected np.ndarray (got {type(ndarray).__name__})")
    if not ndarray.dtype.isnative:  # checked first, as torch does (ValueError, not TypeError)
        raise ValueError("from_numpy(): given numpy array has byte order different from the "
                         "native byte order. Conversion between byte orders is not supported.")
    D.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().)")
    if not ndarray.dtype.isnative:
        raise ValueError("from_numpy(): given numpy array has byte order different from the "
                         "native byte order. Conversion between byte orders is not supported.")
    return _make(ndarray)




class _Capsule:
    """Lets NumPy consume a bare DLPack capsule: it only accepts objects with __dlpack__."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: ember's capsules always describe host memory


# NOTE [Legacy DLPack capsules are writable]
# A bare capsule (to_dlpack's, torch.utils.dlpack.to_dlpack's) speaks the legacy DLPack protocol,
# which has no read-only flag. NumPy marks an array imported from one read-only to be safe; torch
# treats the memory as writable, and programs write through the alias (`from_dlpack(
# to_dlpack(t))[0] = 1` changes t). So the array NumPy made is re-wrapped as a writable view of the
# same bytes, which keeps the imported array (and through it the producer's memory) alive. A
# versioned import (an object with __dlpack__) keeps the read-only flag its producer sets.
def _writable_alias(arr):
    """A writable view of the memory of the read-only array ``arr`` (see NOTE above)."""
    if arr.flags.writeable or arr.size == 0:
        return arr
    lo, hi = np.lib.array_utils.byte_bounds(arr)
    memory = (ctypes.c_char * (hi - lo)).from_address(lo)
    memory.imported = arr  # its lifetime is the capsule's: freeing it releases the producer's
    return np.ndarray(arr.shape, arr.dtype, buffer=memory, offset=arr.ctypes.data - lo,
                      strides=arr.strides)


@export
def from_dlpack(ext_tensor):
    """A tensor sharing memory with any object that implements ``__dlpack__`` (no copy)."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    if type(ext_tensor).__name__ == "PyCapsule":  # a capsule from to_dlpack (legacy protocol)
        return _make(_writable_alias(np.from_dlpack(_Capsule(ext_tensor))))
    return _make(np.from_dlpack(ext_tensor))


def _size(size, size_kw=None, op="factory"):
    """The shape a factory was given: `f(2, 3)`, `f((2, 3))`, `f([2, 3])`, `f(Size)` or
    `f(size=...)` (torch accepts the keyword form for every `*size` factory)."""
    if size_kw:
        extra = sorted(set(size_kw) - {"size"})
        if extra:
            raise TypeError(f"{op}() got an unexpected keyword argument '{extra[0]}'")
        if size:
            raise TypeError(f"{op}(): size given both positionally and as size=; got {size} "
                            f"and size={size_kw['size']}, expected one of them.")
        size = (size_kw["size"],)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    elif len(size) == 1 and isinstance(size[0], Tensor) and size[0].dim() == 1:
        size = tuple(int(s) for s in size[0].tolist())
    out = int_sizes(size, op)
    if any(s < 0 for s in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: "
                           f"{list(out)}")
    return out


def _filled(fill, size, dtype, requires_grad, device, out=None, size_kw=None, op="factory"):
    shape = _size(size, size_kw, op)
    if out is None and (DEFAULT[0] if device is None else check_device(device)).type == "meta":
        return _meta.new(shape, _dt(dtype).np, requires_grad)
    try:
        arr = np.full(shape, fill, _dt(dtype).np)
    except (OverflowError, ValueError) as e:  # full((2,), 300, dtype=uint8); nan into int64
        raise RuntimeError(f"{op}: value {fill!r} cannot be converted to type {_dt(dtype)} "
                           f"without overflow ({e})") from None
    if out is not None:
        return _into(out, arr)
    return _finish(arr, requires_grad, device)


@export
def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, **size_kw):
    """A tensor of zeros. `size` is `*size`, one sequence/Size, or the keyword `size=`."""
    return _filled(0, size, dtype, requires_grad, device, out, size_kw, "zeros")


@export
def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, **size_kw):
    """A tensor of ones. `size` is `*size`, one sequence/Size, or the keyword `size=`."""
    return _filled(1, size, dtype, requires_grad, device, out, size_kw, "ones")


@export
def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None, **size_kw):
    """An uninitialised tensor (ember fills it with zeros: reading it is deterministic)."""
    return _filled(0, size, dtype, requires_grad, device, out, size_kw, "empty")


def _number_from_numpy(value: np.generic):
    """The Python number torch reads a NumPy scalar given for a Number argument as: its kind
    decides the dtype (an integer is int64, a float the default dtype, a complex the default
    complex dtype), not its width, unlike tensor(np.float64(1)) which keeps float64. torch
    reads np.bool_ as a float here (full([2], np.True_) is float32), and so does this."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.complexfloating):
        return complex(value)
    return float(value)


@export
def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         pin_memory=False, requires_grad=False):
    """A tensor filled with fill_value; dtype inferred from the value like torch."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if isinstance(fill_value, np.generic):
        fill_value = _number_from_numpy(fill_value)
    if dtype is None:
        dtype = _infer_dtype(fill_value)
    if isinstance(fill_value, float) and not math.isfinite(fill_value) and not (
            D.to_dtype(dtype).is_floating_point or D.to_dtype(dtype).is_complex):
        raise RuntimeError(f"full: value {fill_value} cannot be converted to type "
                           f"{D.to_dtype(dtype)} without overflow")
    return _filled(fill_value, (tuple(size),) if not isinstance(size, int) else (size,), dtype,
                   requires_grad, device, out, op="full")


def _filled_like(op, fill, input, dtype, requires_grad, device, memory_format):
    """zeros_like & co: input's shape, dtype and device unless given; a permuted input
    (x.t(), channels-last) keeps its dim order, as torch's preserve_format does."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dt = input.dtype if dtype is None else D.to_dtype(dtype)
    check_memory_format(memory_format, input.ndim)
    if getattr(input, "is_sparse", False):
        return _sparse_filled_like(op, fill, input, dt, requires_grad)
    out = _filled(fill, tuple(input.shape), dt, requires_grad,
                  input.device if device is None else device, op=op)
    return preserve_layout(input, out, memory_format)


def _sparse_filled_like(op, fill, input, dtype, requires_grad):
    """zeros_like(sparse) / empty_like(sparse): a sparse tensor of input's size and sparse_dim
    with no entries (optimizer state for sparse gradients, e.g. SM3's momentum)."""
    if fill not in (0, None):
        raise RuntimeError(f"{op}: a sparse COO input gives a sparse result, which can only be "
                           "all zeros (use zeros_like, or .to_dense() first)")
    from ..sparse._coo import sparse_coo_tensor
    sd = input.sparse_dim()
    values = zeros((0,) + tuple(input.shape[sd:]), dtype=dtype)
    return sparse_coo_tensor(np.zeros((sd, 0), dtype=np.int64), values, tuple(input.shape),
                             requires_grad=requires_grad)


def preserve_layout(input, out, memory_format=None):
    """out (a fresh contiguous tensor of input's shape) with input's dim order when input is
    permuted (x.t()): torch's preserve_format for the *_like factories."""
    a = input._data
    if (a.ndim > 1 and not a.flags.c_contiguous and not input._meta and not out._meta and
            memory_format in (None, preserve_format) and a.size):
        arr = preserved_empty(a, out._data.dtype)  # NOTE [Layout of a preserve_format copy]
        np.copyto(arr, out._data)
        out._data = arr
    return out


def _like(fill, op):
    def fn(input, *, dtype=None, layout=None, device=None, requires_grad=False,
           memory_format=None, pin_memory=False):
        return _filled_like(op, fill, input, dtype, requires_grad, device, memory_format)

    fn.__name__ = op
    return fn


export(_like(0, "zeros_like"), name="zeros_like")
export(_like(1, "ones_like"), name="ones_like")
export(_like(0, "empty_like"), name="empty_like")


@export
def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    return _filled_like("full_like", fill_value, input, dtype, requires_grad, device,
                        memory_format)


def _new(fill, op):
    def m(self, *sizes, size=None, dtype=None, device=None, requires_grad=False, **kw):
        if size is not None:   # x.new_zeros(size=(2, 3)), a keyword form torch takes
            if sizes:
                raise TypeError(f"{op}(): got the size both positionally and as size=")
            sizes = (size,)
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        size = sizes
        return _filled(fill, size, dtype or self.dtype, requires_grad,
                       self.device if device is None else device, op=op)

    return m


Tensor.new_zeros = _new(0, "new_zeros")
Tensor.new_ones = _new(1, "new_ones")
Tensor.new_empty = _new(0, "new_empty")


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
              layout=None, pin_memory=False):
    return _filled(fill_value, tuple(size), dtype or self.dtype, requires_grad,
                   self.device if device is None else device)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None,
                pin_memory=False):
    return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


Tensor.new_full = _new_full
Tensor.new_tensor = _new_tensor


def _num(v):
    return v.item() if isinstance(v, Tensor) else v


@export
def arange(start=None, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Values from start to end (exclusive) by step; int64 unless any argument is a float."""
    start, end, step = _num(start), _num(end), _num(step)
    if start is None and end is None:
        raise TypeError("arange() missing required argument 'end' (pos 1)")
    if end is None:
        start, end = 0, start
    elif start is None:
        start = 0
    if dtype is None:
        is_float = any(isinstance(v, (float, np.floating)) for v in (start, end, step))
        dtype = D.get_default_dtype() if is_float else D.int64
    dt = D.to_dtype(dtype)
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise RuntimeError(f"arange: unsupported range: {start} -> {end} (step {step})")
    if not (dt.is_floating_point or dt.is_complex):
        # an integer arange takes its bounds and step as integers first (truncated), as torch
        if int(step) == 0 and step != 0:  # arange(0, 1, 0.3, dtype=int64): torch's ValueError
            raise ValueError("arange: step must be nonzero; the step truncated to an integer is 0")
        start, end, step = int(start), int(end), int(step)
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange: upper bound and larger bound inconsistent with step sign; got "
                           f"start={start}, end={end}, step={step}")
    n = max(int(math.ceil((end - start) / step)), 0)
    # computed in float64 (or int64) then cast, so float32 endpoints do not drift
    if dt.is_floating_point:
        arr = (start + np.arange(n, dtype=np.float64) * step).astype(dt.np)
    else:
        arr = (start + np.arange(n, dtype=np.int64) * step).astype(dt.np)
    return _finish(arr, requires_grad, device) if out is None else _into(out, arr)


def _into(out, arr):
    """A factory's result stored in out= as torch stores it: in out's dtype, into out's memory
    when the shape is out's (views of out see it), else out takes new memory of the new shape.
    The version bump goes through the method, where a compile capture sees the write."""
    arr = arr.astype(out._data.dtype, copy=False)
    if arr.shape == out._data.shape and out._data.flags.writeable:
        np.copyto(out._data, arr)
    else:
        out._data = np.array(arr)
    out._bump_version()
    return out


@export(name="range")
def range_(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Deprecated torch.range: start to end INCLUSIVE by step (use arange)."""
    # always floating (default dtype) unless dtype= says otherwise: torch.range(0, 3) is float
    return arange(start, end + step if end is not None else start + step, step, out=out,
                  dtype=dtype or D.get_default_dtype(), layout=layout, device=device,
                  requires_grad=requires_grad)


@export
def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """``steps`` evenly spaced values from start to end inclusive."""
    start, end, dt = _spaced(start, end, steps, dtype, "linspace")
    arr = np.linspace(start, end, int(steps), dtype=np.complex128 if dt.is_complex else
                      np.float64).astype(dt.np)
    return _finish(arr, requires_grad, device) if out is None else _into(out, arr)


def _spaced(start, end, steps, dtype, op):
    """linspace/logspace's checked arguments: (start, end, dtype); complex ends make the
    default complex dtype."""
    if steps < 0:
        raise RuntimeError(f"{op}: number of steps must be non-negative; got {steps}")
    start, end = _num(start), _num(end)
    if dtype is None and (isinstance(start, complex) or isinstance(end, complex)):
        return start, end, D.get_default_complex_dtype()
    return start, end, _dt(dtype)


@export
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    start, end, dt = _spaced(start, end, steps, dtype, "logspace")
    arr = np.power(base, np.linspace(start, end, int(steps))).astype(dt.np)
    return _finish(arr, requires_grad, device) if out is None else _into(out, arr)


@export
def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False):
    """Identity matrix of n rows and m (default n) columns."""
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"eye: n must be greater or equal to 0, got {n}")
    arr = np.eye(n, m, dtype=_dt(dtype).np)
    return _finish(arr, requires_grad, device) if out is None else _into(out, arr)


@export
def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    return _finish(np.asarray(s, dtype=_dt(dtype).np), requires_grad, device)


@export
def is_tensor(obj):
    return isinstance(obj, Tensor)


@export
def is_floating_point(input):
    return input.is_floating_point()


@export
def numel(input):
    return input.numel()


def _fill_(self, value):
    if not isinstance(value, Tensor):  # NOTE [Numbers that do not fit the dtype]
        D.check_fits("fill_", value, self.dtype)
    if _state.enabled and self._requires_grad or isinstance(value, Tensor) and \
            value._requires_grad and _state.enabled:
        from .indexing import _copy_
        v = value if isinstance(value, Tensor) else _make(np.asarray(value, self._data.dtype))
        return _copy_(self, v.expand(self.shape) if v.ndim == 0 else v)
    check_inplace(self, "fill_")
    if self._meta:
        return self
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        value = value.item()
    write_into(self, np.asarray(value).astype(self._data.dtype), "fill_")
    return self


Tensor.fill_ = _fill_
Tensor.zero_ = lambda self: _fill_(self, 0)
