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
_FALSE_FLAGS = ("is_xpu", "is_mps", "is_ipu", "is_maia", "is_mtia", "is_mkldnn",
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
    device = self.device if device is None else device
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0]
    if not args:
        return ember.empty(0, dtype=dtype, requires_grad=requires_grad, device=device)
    if all(isinstance(a, (int, np.integer)) for a in args) or isinstance(args[0], Size):
        return ember.zeros(*args, dtype=dtype, requires_grad=requires_grad, device=device)
    if len(args) == 1:
        return ember.tensor(args[0], dtype=dtype, requires_grad=requires_grad)
    raise TypeError(f"new(): expected sizes (ints or a Size), a sequence of data or a tensor; "
                    f"got {tuple(type(a).__name__ for a in args)}")


def resize_(self, *sizes, size=None, memory_format=None):
    """Give the tensor a new shape in place, keeping its first elements in memory order (as
    torch reads its storage: a clone of x.t() keeps x's order); new elements are zero (torch
    leaves them uninitialised)."""
    if self.requires_grad:
        raise RuntimeError("resize_: cannot resize variables that require grad; got a tensor "
                           "with requires_grad=True. Resize a detached copy instead.")
    if size is not None:
        sizes = (size,) + sizes
    shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) \
        else tuple(int(s) for s in sizes)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"resize_: negative size in {list(shape)}")
    flat = self._data.ravel(order="K")
    out = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=flat.dtype)
    n = min(flat.size, out.size)
    out[:n] = flat[:n]
    self._data = out.reshape(shape)
    self._bump_version()
    return self


def resize_as_(self, the_template, memory_format=None):
    return resize_(self, *the_template.shape)


def resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return resize_(self.detach().clone(), *sizes)


def resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return resize_(self.detach().clone(), *tensor.shape)


def sum_to_size(self, *size_args, size=None):
    """Sum over the broadcast dims so the result has ``size`` (which must broadcast to self)."""
    from .ops.registry import sum_to
    if size is not None:
        size_args = (size,) + size_args
    shape = tuple(size_args[0]) if len(size_args) == 1 and isinstance(
        size_args[0], (tuple, list)) else size_args
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
    if isinstance(source, Tensor) and source.dtype != self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {self.dtype} and source.dtype = {source.dtype}")
    source = _as_tensor(source, self)
    if source.numel() != index.numel():  # torch's IndexError
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements; got {source.numel()} and {index.numel()}")
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


def split_with_sizes(input, split_sizes, dim=0):
    self = input
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor; got a 0-d tensor")
    if sum(split_sizes) != self.shape[dim]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{self.shape[dim]} (input tensor's size at dimension {dim}), but "
                           f"got split_sizes={list(split_sizes)}")
    return self.split(list(split_sizes), dim)


# ------------------------------------------------------------------ in-place forms
def _inplace_of(name, check=None):
    """``Tensor.<name>_``: the out-of-place method's result written into self (autograd and
    the dtype rule of in-place ops come from registry.apply_inplace)."""
    from .ops.registry import apply_inplace

    def method(self, *args, **kwargs):
        if check is not None:
            check(self, *args, **kwargs)
        return apply_inplace(self, getattr(Tensor, name), name + "_", *args, **kwargs)

    method.__name__ = name + "_"
    method.__doc__ = f"In-place ``{name}``: ``self`` is overwritten with the result."
    return method


def _float_power_check(self, exponent):
    complex_ = self.is_complex() or isinstance(exponent, complex) or (
        isinstance(exponent, Tensor) and exponent.is_complex())
    want = D.complex128 if complex_ else D.float64
    if self.dtype is not want:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype} but the "
                           f"operation's result requires dtype {want}")


def _integer_check(name):
    def check(self, other):
        if not (self.is_floating_point() or self.is_complex()) and isinstance(other, Tensor) \
                and other.is_floating_point():
            raise RuntimeError(f"{name}_: result type {other.dtype} can't be cast to the "
                               f"desired output type {self.dtype}")
    return check


_INPLACE_FORMS = {"gcd": _integer_check("gcd"), "lcm": _integer_check("lcm"),
                  "ldexp": _integer_check("ldexp"), "heaviside": None, "nextafter": None,
                  "float_power": _float_power_check, "renorm": None, "mvlgamma": None,
                  "index_reduce": None}


def _view_inplace(name, view):
    """``Tensor.<name>``: self becomes ``view(self, ...)`` (same storage, new shape/strides);
    a tensor with history takes the view's grad_fn, as torch's in-place view ops do."""
    from .ops.registry import check_inplace

    def method(self, *args, **kwargs):
        check_inplace(self, name)
        res = view(self, *args, **kwargs)
        self._data = res._data
        if res._grad_fn is not None:
            self._grad_fn, self._output_nr = res._grad_fn, res._output_nr
        return self

    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: changes this tensor's shape/strides."
    return method


def _as_strided_view(self, size, stride, storage_offset=None):
    return self.as_strided(size, stride, storage_offset)


def _squeeze_view(self, dim=None):
    return self.squeeze() if dim is None else self.squeeze(dim)


# (the parameters carry torch's names: x.transpose_(dim0=0, dim1=1) is a keyword form it takes)
_VIEW_INPLACE = {"t_": lambda self: self.t(), "transpose_": lambda self, dim0, dim1:
                 self.transpose(dim0, dim1),
                 "swapaxes_": lambda self, axis0, axis1: self.transpose(axis0, axis1),
                 "swapdims_": lambda self, dim0, dim1: self.transpose(dim0, dim1),
                 "squeeze_": _squeeze_view,
                 "unsqueeze_": lambda self, dim: self.unsqueeze(dim),
                 "as_strided_": _as_strided_view}


def _python_map(self, name, fn, *others):
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")
    arrays = [np.broadcast_to(o._data if isinstance(o, Tensor) else np.asarray(o),
                              self._data.shape) for o in others]
    cast = self._data.dtype.type
    flat = self._data.reshape(-1) if self._data.flags.c_contiguous else None
    values = [cast(fn(*(a.item() for a in items)))
              for items in zip(self._data.reshape(-1), *(a.reshape(-1) for a in arrays))]
    if flat is not None:
        flat[...] = values
    else:
        self._data[...] = np.array(values, dtype=self._data.dtype).reshape(self._data.shape)
    self._bump_version()
    return self


def apply_(self, callable):
    """Replace every element x with ``callable(x)`` (a Python call per element; slow)."""
    return _python_map(self, "apply_", callable)


def map_(self, other, callable):
    """Replace every element x with ``callable(x, y)``, y from ``other`` broadcast to self."""
    return _python_map(self, "map_", callable, other)


def map2_(self, x, y, callable):
    """Replace every element s with ``callable(s, a, b)``, a and b from ``x`` and ``y``."""
    return _python_map(self, "map2_", callable, x, y)


def as_subclass(self, cls):
    """This tensor (same memory, same autograd history) as an instance of subclass ``cls``."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass: cls must be a subclass of ember.Tensor; got {cls!r}")
    out = object.__new__(cls)
    for attr in ("_data", "_vc", "_base", "_grad_fn", "_output_nr", "_requires_grad",
                 "_view_v"):
        setattr(out, attr, getattr(self, attr))
    if self._requires_grad and self._grad_fn is None:  # share the leaf's gradient slot
        out._grad_fn = None
        out._acc = self._acc
    return out


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                      layout=None, pin_memory=False):
    from ._surface_functions import empty_strided
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                         device=device, requires_grad=requires_grad)


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Make this tensor use ``source``'s memory: another tensor (all of it), or its storage
    viewed with ``storage_offset``/``size``/``stride`` (in elements); no argument: empty."""
    from ._backend import check_device  # noqa: F401  (keeps imports light at module load)
    from .ops.registry import check_inplace
    check_inplace(self, "set_")
    if source is None:
        self._data, self._vc = np.zeros(0, dtype=self._data.dtype), [self._vc[0] + 1]
        return self
    if isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"set_: expected source of dtype {self.dtype}; got "
                               f"{source.dtype}")
        if size is None:
            self._data, self._vc = source._data, source._vc
            self._bump_version()
            return self
        base = source._data
    else:
        base = getattr(source, "_array", None)
        if base is None:
            raise TypeError(f"set_(): expected a Tensor or a storage; got "
                            f"{type(source).__name__}")
    root = base
    while isinstance(root.base, np.ndarray):
        root = root.base
    flat = np.frombuffer(root, dtype=self._data.dtype) if root.dtype != self._data.dtype \
        else root.reshape(-1)
    size = tuple(size)
    if stride is None:
        stride = tuple(int(np.prod(size[i + 1:])) for i in range(len(size)))
    item = flat.itemsize
    self._data = np.lib.stride_tricks.as_strided(
        flat[int(storage_offset):], size, [int(s) * item for s in stride])
    self._bump_version()
    return self


def const_data_ptr(self):
    return self.data_ptr()


def dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory (by decreasing stride; ties keep their
    order)."""
    strides = self.stride()
    order = sorted(range(self.dim()), key=lambda d: -strides[d])
    if ambiguity_check:
        if len(set(strides)) != len(strides) or any(s == 1 for s in self.shape):
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                               "a valid permutation.")
    return tuple(order)


def module_load(self, other, assign=False):
    """How ``load_state_dict`` turns a state value into this parameter's replacement."""
    return other.detach() if assign else self.copy_(other).detach()


def _no_device(kind, check):
    def method(self, device=None, non_blocking=False, memory_format=None):
        raise check(f"ember not compiled with {kind} enabled: there are no {kind} devices "
                    "(ember runs on the CPU)")
    method.__name__ = kind.lower()
    return method


def reinforce(self, reward):
    raise RuntimeError("reinforce() was removed. Use ember.distributions instead (a score "
                       "function estimator: loss = -dist.log_prob(action) * reward).")


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


def record_stream(self, stream):
    """Nothing to do on the CPU: there is no caching allocator that could reuse the memory
    early; ``stream`` must be an ``ember.Stream``."""
    from ._streams import Stream
    if not isinstance(stream, Stream):
        raise RuntimeError(f"record_stream: expected an ember.Stream; got "
                           f"{type(stream).__name__}")


# dense tensors: the sparse accessors fail or answer as torch's do for the strided layout
def _needs_layout(name, layout):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected {layout} tensor layout but got Strided")
    method.__name__ = name
    return method


_DENSE_SPARSE_ERRORS = {
    "indices": "sparse coordinate", "values": "sparse", "coalesce": "sparse coordinate",
    "is_coalesced": "sparse coordinate", "crow_indices": "sparse row compressed",
    "col_indices": "sparse row compressed", "ccol_indices": "sparse column compressed",
    "row_indices": "sparse column compressed"}


def _not_for_strided(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"Could not run '{name}' with arguments from the 'CPU' "
                                  "backend: it needs a sparse tensor; got a dense one.")
    method.__name__ = name
    return method


def sparse_mask(self, mask):
    """The values of this dense tensor at the stored positions of the sparse ``mask``."""
    from .sparse import sparse_coo_tensor
    if not getattr(mask, "is_sparse", False):
        raise RuntimeError("sparse_mask expects mask to be sparse coordinate tensor; got a "
                           "dense one")
    if tuple(mask.shape) != tuple(self.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask.shape)}")
    mask = mask.coalesce()
    idx = mask.indices()
    values = self[tuple(idx[i] for i in range(idx.shape[0]))]
    # the mask's coalesced indices: the result is coalesced too (as torch's)
    return sparse_coo_tensor(idx, values, tuple(self.shape), is_coalesced=True)


def grad_dtype_get(self):
    if self._grad_fn is not None:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    return getattr(self, "_grad_dtype", self.dtype)


def grad_dtype_set(self, value):
    if self._grad_fn is not None:
        raise RuntimeError("grad_dtype can only be set on leaf tensors.")
    self._grad_dtype = value


# ------------------------------------------------------------------ install
# conj, conj_physical, resolve_conj, resolve_neg, is_conj, is_neg, real: ops/complex.py
FUNCTIONS = {"split_with_sizes": split_with_sizes}


def _top_level_names():
    """The names ``ember/__init__.py`` exports from here (functions, stream/event classes)."""
    from . import _streams
    from ._surface_functions import FUNCTIONS as extra
    from ._surface_functions import _convolution
    names = dict(extra)
    names["_convolution"] = _convolution   # torch._convolution (aten::_convolution)
    names.update(Stream=_streams.Stream, Event=_streams.Event,
                 OutOfMemoryError=_streams.OutOfMemoryError)
    from . import _dtype
    from ._determinism import is_deterministic_algorithms_warn_only_enabled
    from .amp import GradScaler
    from .sparse._coo import layout
    names.update(uint16=_dtype.uint16, uint32=_dtype.uint32, uint64=_dtype.uint64)
    names.update({d.name: d for d in _dtype._FLOAT8})  # NOTE [Float8 dtypes]
    # layouts of compressed sparse tensors: ember stores none, but programs compare with them
    names.update({name: layout(name) for name in ("sparse_csr", "sparse_csc", "sparse_bsr",
                                                   "sparse_bsc")})
    names.update(GradScaler=GradScaler, is_deterministic_algorithms_warn_only_enabled=(
        is_deterministic_algorithms_warn_only_enabled))
    for inplace in ("gcd_", "lcm_", "ldexp_", "as_strided_", "resize_as_", "put",
                    "conj_physical_", "resize_as_sparse_"):
        names[inplace] = (lambda n: lambda input, *a, **k: getattr(input, n)(*a, **k))(inplace)
        names[inplace].__name__ = inplace
    return names


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
    FUNCTIONS.update(_top_level_names())
    for name in _FALSE_FLAGS:
        setattr(Tensor, name, False)
    Tensor.is_cpu = property(lambda self: not self._meta)
    methods = dict(FUNCTIONS)
    methods.update(new=new, resize_=resize_, resize_as_=resize_as_, resize=resize,
                   resize_as=resize_as, sum_to_size=sum_to_size, put_=put_, put=put,
                   fill_diagonal_=fill_diagonal_, is_same_size=is_same_size,
                   is_set_to=is_set_to, is_nonzero=is_nonzero)
    methods.update(apply_=apply_, map_=map_, map2_=map2_, as_subclass=as_subclass,
                   new_empty_strided=new_empty_strided, set_=set_, const_data_ptr=const_data_ptr,
                   dim_order=dim_order, module_load=module_load, reinforce=reinforce,
                   record_stream=record_stream, sparse_mask=sparse_mask,
                   xpu=_no_device("XPU", AssertionError), mtia=_no_device("MTIA", AssertionError),
                   ipu=_no_device("IPU", RuntimeError),
                   sparse_dim=lambda self: 0, dense_dim=lambda self: self.dim(),
                   conj_physical_=lambda self: self.copy_(self.conj_physical()))
    for name, layout in _DENSE_SPARSE_ERRORS.items():
        methods[name] = _needs_layout(name, layout)
    for name in ("sparse_resize_", "sparse_resize_and_clear_", "resize_as_sparse_"):
        methods[name] = _not_for_strided(name)
    from . import _surface_functions as _sf
    methods.update(smm=lambda self, mat2: _sf.smm(self, mat2),
                   sspaddmm=lambda self, mat1, mat2, *, beta=1, alpha=1:
                   _sf.sspaddmm(self, mat1, mat2, beta=beta, alpha=alpha))
    for name, check in _INPLACE_FORMS.items():
        methods[name + "_"] = _inplace_of(name, check)
    for name, view in _VIEW_INPLACE.items():
        methods[name] = _view_inplace(name, view)
    import ember

    from ._surface_functions import index_reduce
    for name, fn in (("prelu", ember.nn.functional.prelu), ("histogram", ember.histogram),
                     ("index_reduce", index_reduce)):
        methods[name] = (lambda f: lambda self, *a, **k: f(self, *a, **k))(fn)
    from ._surface_functions import NOT_METHODS, _log_softmax_method, _softmax_method
    for name in NOT_METHODS:
        methods.pop(name, None)
    methods.update(softmax=_softmax_method, log_softmax=_log_softmax_method)
    for name, fn in methods.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
    if not hasattr(Tensor, "volatile"):
        Tensor.volatile = property(_volatile)
    if not hasattr(Tensor, "name"):
        Tensor.name = None  # torch's regular tensors have name None too
    if not hasattr(Tensor, "grad_dtype"):
        Tensor.grad_dtype = property(grad_dtype_get, grad_dtype_set)
    Tensor.is_distributed = lambda self: False
    Tensor.is_inference = lambda self: False
    import ember
    for name in _NUMPY_KWARG_FUNCTIONS:
        if name in FUNCTIONS:     # exported by ember/__init__.py after this runs
            FUNCTIONS[name] = _accept_numpy_kwargs(FUNCTIONS[name])
        elif hasattr(ember, name):
            setattr(ember, name, _accept_numpy_kwargs(getattr(ember, name)))
    for name in ("softmax", "log_softmax"):
        setattr(Tensor, name, _accept_numpy_kwargs(getattr(Tensor, name)))
    for name in ("multinomial", "bernoulli"):
        if not hasattr(Tensor, name):
            setattr(Tensor, name, getattr(ember, name))
