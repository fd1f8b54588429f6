"""Tensor: a NumPy array (storage + view) with autograd metadata.

``_data`` is the NumPy array holding this tensor's view of its storage (shape, strides, offset);
views made by ember share it and a one-element version counter list ``_vc``. Most methods are
attached by the op registry (``register(..., method=True)`` in ``ember/ops``), so this file holds
only what is Tensor-specific: autograd state, the Python protocol, interop and printing.
``python tools/tensor_methods.py`` lists every Tensor attribute with the file and function that
defines it (``... | grep tanh``).
"""
from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import _dtype as D
from ._backend import CPU, check_device, data_ptr
from ._info import _CHANNELS_LAST_RANK
from ._meta import META, mark, refuse
from ._size import Size
from .autograd.grad_mode import _state
from .autograd.node import AccumulateGrad, _RemovableHandle  # NOTE [Tensor and autograd imports]

_new = object.__new__
_backward = [None]  # ember.autograd.backward, bound on first use (import order)


def _make(arr, vc=None):
    """Wrap an ndarray as a fresh tensor (no copy)."""
    t = _new(Tensor)
    t._data = arr
    t._vc = [0] if vc is None else vc
    return t


# NOTE [Non-leaf .grad]: backward fills .grad only on leaves (and on tensors that called
# retain_grad()), so reading .grad of any other tensor in a graph is nearly always a program
# reading the wrong tensor (``h = w * 2; h.grad``). Like torch, the read warns - only while the
# gradient is still unset: an assigned one is read silently. ember's own code reads ``_grad``
# wherever the tensor might not be a leaf.
def _warn_non_leaf_grad(stacklevel):
    warnings.warn(".grad was read on a tensor that is not a leaf of the autograd graph and does "
                  "not retain its gradient: backward() leaves it None. Call .retain_grad() on "
                  "this tensor before backward() to keep its gradient, or read .grad of the "
                  "leaf tensor (the one created with requires_grad=True) if that was meant.",
                  UserWarning, stacklevel=stacklevel + 1)


def _make_view(arr, src):
    """Wrap ``arr``, a view of tensor ``src``'s storage: shares its version counter and base."""
    t = _new(Tensor)
    t._data = arr
    t._vc = src._vc
    t._base = src if src._base is None else src._base
    t._view_v = src._vc[0]
    return t


class Tensor:
    """A multi-dimensional array with autograd support (see ``ember.tensor`` to create one)."""

    # class-level defaults keep tensor creation cheap: only _data and _vc are set per instance
    _base = None
    _grad_fn = None
    _output_nr = 0
    _requires_grad = False
    _hooks = None
    _acc = None
    _fw = None
    _view_v = 0
    _retains_grad = False
    _grad = None
    _post_acc_hooks = None  # a list once a post-accumulate-grad hook is registered
    __array_priority__ = 1000  # make numpy defer to our reflected operators

    @property
    def grad(self):
        g = self._grad
        if g is None and not self._retains_grad and not self.is_leaf:
            _warn_non_leaf_grad(2)
        return g

    @grad.setter
    def grad(self, value):
        # what a program assigns; the engine's accumulation writes _grad itself. A float here
        # (``a.grad = 0.`` to "zero" it) or a gradient of another size or dtype would break the
        # next accumulation or the optimizer step, silently or far from the cause
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError("assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError(f"assigned grad of size {list(value.shape)} to a tensor of "
                                   f"size {list(self.shape)}: a gradient must have the size of "
                                   "its tensor")
            if value.dtype != self.dtype:
                raise RuntimeError(f"assigned grad of dtype {value.dtype} to a tensor of dtype "
                                   f"{self.dtype}: a gradient must have the dtype of its tensor")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    def __new__(cls, *args, **kwargs):
        # legacy constructor: Tensor(sizes...) uninitialised float, Tensor(data) copies data
        t = _new(cls)
        dt = kwargs.pop("dtype", None) or getattr(cls, "_legacy_dtype", None)
        dt = D.get_default_dtype() if dt is None else D.to_dtype(dt)
        if kwargs.get("device") is not None and check_device(kwargs["device"]).type != "cpu":
            raise RuntimeError("legacy constructor expects device type: cpu but device type: "
                               f"{check_device(kwargs['device']).type} was passed")
        if len(args) == 1 and isinstance(args[0], Tensor):
            src = args[0]
            t._data, t._vc = src._data, src._vc
            return mark(t) if src._meta else t
        if len(args) == 1 and isinstance(args[0], Size):   # Tensor(x.size()): sizes, not data
            t._data = np.zeros(tuple(args[0]), dtype=dt.np)
        elif not args:
            t._data = np.zeros((0,), dtype=dt.np)
        elif len(args) == 1 and isinstance(args[0], (str, bytes)):
            raise TypeError(f"{cls.__name__}(): invalid data type '{type(args[0]).__name__}'")
        elif len(args) == 1 and isinstance(args[0], (bool, float, complex, np.bool_,
                                                     np.floating, np.complexfloating)):
            raise TypeError(f"{cls.__name__}(): data must be a sequence (got "
                            f"{type(args[0]).__name__}); use ember.tensor(value) for a 0-d "
                            "tensor")
        elif len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            t._data = np.array(_to_nested(args[0]), dtype=dt.np)
        else:
            if not all(isinstance(a, (int, np.integer)) for a in args):
                raise TypeError(f"{cls.__name__}(): expected sizes (ints) or data, got {args!r}")
            t._data = np.zeros(tuple(int(a) for a in args), dtype=dt.np)
        t._vc = [0]
        return t

    def __init__(self, *args, **kwargs):
        pass

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return self.shape
        try:
            return self._data.shape[_wrap_dim(dim, self._data.ndim, "size")]
        except IndexError:
            if self._data.ndim:
                raise
            # a 0-d tensor: _wrap_dim lets dims -1 and 0 through to shape[]
            raise IndexError(f"size: Dimension specified as {dim} but tensor has no "
                             "dimensions") from None

    @property
    def dtype(self):
        return D._FROM_NP[self._data.dtype]

    @property
    def device(self):
        return META if self._meta else CPU

    _meta = False  # NOTE [Meta tensors] (ember/_meta.py)

    @property
    def is_meta(self):
        return self._meta

    is_cuda = False
    is_sparse = False
    is_quantized = False
    layout = "strided"

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    def is_floating_point(self):
        return self._data.dtype.kind == "f" or self.dtype.is_floating_point

    def is_complex(self):
        return self._data.dtype.kind == "c"

    def is_signed(self):
        return self.dtype.is_signed

    def stride(self, dim=None):
        if self._meta:  # the stand-in's strides are zeros; torch's meta tensors are contiguous
            st = tuple(np.cumprod((1,) + self._data.shape[:0:-1])[::-1].tolist()[:self.ndim])
            return st if dim is None else st[_wrap_dim(dim, self._data.ndim, "stride")]
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        # numpy reports arbitrary strides for size-1 dims; torch keeps contiguous ones there
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim, "stride")]

    def storage_offset(self):
        root = _root_array(self._data)
        return (data_ptr(self._data) - data_ptr(root)) // self._data.itemsize

    def is_contiguous(self, memory_format=None):
        # There is no channels-last layout (docs/DEVIATIONS.md): a channels-last query answers
        # for the row-major storage, but only at the format's rank; torch says False at any
        # other (a Conv2d's 1-D bias after convert_conv2d_weight_memory_format)
        rank = _CHANNELS_LAST_RANK.get(memory_format)
        if rank is not None and self.ndim != rank:
            return False
        return self._data.flags.c_contiguous or self._meta

    def data_ptr(self):
        return data_ptr(self._data)

    @property
    def _cdata(self) -> int:
        """An integer naming this tensor object, as torch's address of its C++ tensor: equal
        for the same tensor, different for a view or ``.data`` (Pyro compares a module's
        parameter with the param store's by it)."""
        return id(self)

    def untyped_storage(self):
        return UntypedStorage(_root_array(self._data))

    def storage(self):
        return self.untyped_storage()

    @property
    def _version(self):
        return self._vc[0]

    def _bump_version(self):
        """Record an in-place modification (also through views sharing this storage)."""
        self._vc[0] += 1

    def get_device(self):
        return -1

    # ------------------------------------------------------------------ autograd state
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad on a leaf in place; returns self."""
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If "
                                   "you want to use a computed variable in a subgraph that doesn't "
                                   "require differentiation use var_no_grad = var.detach().")
            return self
        if requires_grad and not (self.is_floating_point() or self.is_complex()):
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               f"gradients; got dtype {self.dtype}")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        if self._base is not None and self._view_v != self._vc[0]:
            self._refresh_view_grad_fn()
        return self._grad_fn is None

    @property
    def grad_fn(self):
        if self._base is not None and self._view_v != self._vc[0]:
            self._refresh_view_grad_fn()
        return self._grad_fn

    @property
    def output_nr(self):
        return self._output_nr

    def _accumulator(self):
        acc = self._acc() if self._acc is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._acc = weakref.ref(acc)
        return acc

    def _refresh_view_grad_fn(self):
        # NOTE [Views after in-place]: an in-place op on the base (or on another view) rebased
        # the base's history; this view's grad_fn must now read its values out of the new base.
        base = self._base
        if base._grad_fn is None:
            self._view_v = self._vc[0]  # base is a leaf: the view's own history is still right
            return
        if not _state.enabled:
            return  # rebuild later, when a graph is being recorded
        self._view_v = self._vc[0]
        from .ops.inplace import view_of_base
        fresh = view_of_base(base, self)
        self._grad_fn, self._output_nr, self._requires_grad = fresh._grad_fn, 0, True

    def _is_view(self):
        """Whether this tensor is a view of another's storage (torch's private method)."""
        return self._base is not None

    def is_shared(self):
        """True when the storage lives in shared memory (share_memory_(), or received from
        another process); views of a shared tensor are shared too."""
        owner = self._data
        while isinstance(owner, np.ndarray):
            owner = owner.base
        return type(owner).__name__ == "Segment" or bool(getattr(self, "_shared", False))

    def detach(self):
        """A new tensor sharing storage and version counter, outside the graph."""
        t = _make(self._data, self._vc)
        return mark(t) if self._meta else t

    def detach_(self):
        if self._base is not None and self._grad_fn is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn, self._output_nr, self._requires_grad = None, 0, False
        return self

    @property
    def data(self):
        # shares storage but not the version counter (unlike detach()): writes through .data
        # are invisible to autograd's saved-tensor check, as in torch, which programs use to
        # update in place what a pending backward still reads (torchdiffeq's _UncheckedAssign)
        t = _make(self._data, [0])
        return mark(t) if self._meta else t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError("data must be a Tensor")
        if value._meta != self._meta:
            raise RuntimeError(f"data: cannot assign a tensor on {value.device} to the data "
                               f"of a tensor on {self.device}")
        self._data = value._data
        self._vc = value._vc

    def retain_grad(self):
        """Keep .grad for this non-leaf tensor after backward."""
        if self._grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains_grad:
            return
        self._retains_grad = True
        ref = weakref.ref(self)  # weak: a strong one would make node -> hook -> tensor -> node

        def hook(grad):
            t = ref()
            if t is not None:
                t._grad = grad.detach() if t._grad is None else t._grad + grad.detach()

        hook._retains_grad = True  # runs after the tensor's other hooks: Node._add_tensor_hook
        self._grad_fn._add_tensor_hook(self._output_nr, hook)

    @property
    def retains_grad(self):
        return self._retains_grad

    def register_hook(self, hook):
        """hook(grad) -> Tensor or None, called with this tensor's gradient during backward."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn._add_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return _RemovableHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if getattr(self, "_post_acc_hooks", None) is None:
            self._post_acc_hooks = []
        self._post_acc_hooks.append(hook)
        return _RemovableHandle(self._post_acc_hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into the .grad of every leaf of the graph."""
        if self._meta:
            refuse("backward")
        if _backward[0] is None:  # bound once: a lazy import costs ~0.3 us per call
            from .autograd import backward as fn
            _backward[0] = fn
        _backward[0](self, gradient, retain_graph, create_graph, inputs=inputs)

    # ------------------------------------------------------------------ Python protocol
    def item(self):
        if self._meta:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors: they hold no "
                               "data")
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to "
                               "Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        if self._meta:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self._data.tolist()

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __contains__(self, element):
        """``element in t``: whether any element of t equals ``element`` (a number or a tensor
        broadcast against t), as torch answers it; without this Python would iterate the rows
        and compare each with ``element``."""
        if not isinstance(element, (Tensor, bool, int, float, complex, np.number)):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you "
                               f"passed in a {type(element)}.")
        return bool((self == element).any())

    def __bool__(self):
        if self._meta:
            refuse("bool(tensor)")
        if self._data.size != 1:
            count = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {count} is ambiguous")
        return bool(self._data.reshape(()))

    def _python_scalar(self):
        if self._meta:
            refuse("converting a tensor to a Python number")
        # float()/int()/complex() refuse with torch's ValueError (item() with RuntimeError)
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars; got "
                             f"a tensor of shape {tuple(self._data.shape)}")
        return self._data.reshape(()).item()

    def __float__(self):
        return float(self._python_scalar())

    def __int__(self):
        return int(self._python_scalar())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        return complex(self._python_scalar())

    __hash__ = object.__hash__

    def __reduce_ex__(self, protocol):
        # plain pickling copies the data; ember.multiprocessing registers a shared-memory
        # reduction with its own pickler instead
        if self._meta:
            return (_rebuild_meta, (self._data.shape, self._data.dtype.str,
                                    self._requires_grad and self._grad_fn is None))
        return (_rebuild_tensor, (type(self), np.array(self._data, copy=True),
                                  self._requires_grad and self._grad_fn is None))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment.")
        new = _new(type(self))
        new.__dict__.update({k: v for k, v in self.__dict__.items()
                             if k not in ("_data", "_vc", "_base", "_acc", "_grad", "_hooks",
                                          "_meta", "_meta_fin", "_post_acc_hooks")})
        new._data = np.array(self._data, copy=True) if not self._meta else self._data
        new._vc = [0]
        if self._meta:
            mark(new)
        if self._grad is not None:
            new.grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new

    # ------------------------------------------------------------------ interop
    def numpy(self, *, force=False):
        """The NumPy array sharing this tensor's memory (no copy)."""
        if self._meta:
            raise TypeError("can't convert meta device type tensor to numpy: a meta tensor "
                            "holds no data")
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return np.array(self._data, copy=True) if force else self._data

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return np.array(a, copy=True) if copy else a

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """NumPy's functions on a tensor return a tensor, as torch's do (np.exp(t) is a tensor;
        a bool result comes back as uint8, as torch makes it)."""
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return _make(np.asarray(array))

    def __dlpack__(self, *args, **kwargs):
        if self._requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __repr__(self):
        from ._format import tensor_repr
        return tensor_repr(self)

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def to_dense(self, dtype=None, *, masked_grad=None):
        """This tensor (already dense); with ``dtype``, a copy converted to it."""
        return self if dtype is None else self.to(dtype)

    def cpu(self):
        if self._meta:
            raise NotImplementedError("Cannot copy out of meta tensor; no data! (use "
                                      "ember.empty_like(t, device='cpu') for new storage)")
        return self

    def cuda(self, device=None, non_blocking=False):
        check_device("cuda")

    def pin_memory(self):
        """No-op on CPU (there is no pinned memory without an accelerator)."""
        return self

    def is_pinned(self):
        return False


class UntypedStorage:
    """The memory a tensor views: a thin description of the root NumPy buffer, read as bytes
    when indexed or sliced.

    NOTE [Storages of files]: safetensors' `safe_open(..., framework="pt")` loads through the
    storage API: `UntypedStorage.from_file(name, shared=False, nbytes=n).untyped()`, then each
    tensor is `asarray(storage[start:stop], dtype=uint8).view(dtype=...).reshape(shape)`. A
    storage here is a NumPy array (a memory map for a file: copy-on-write unless `shared`), a
    slice of it a byte view sharing memory, and `asarray` of a storage reads its bytes as the
    dtype asked, without a copy - so a loaded tensor maps the file as torch's does.
    """

    def __init__(self, root):
        self._root = root

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """The first ``nbytes`` bytes of a file, memory-mapped: writes reach the file when
        ``shared``, else they stay private to the mapping."""
        import os
        nbytes = int(nbytes)
        have = os.path.getsize(filename)
        if have < nbytes:
            raise RuntimeError(f"UntypedStorage.from_file: file <{filename}> size <{have}> is "
                               f"smaller than the required mapping size <{nbytes}>")
        if nbytes == 0:
            return cls(np.zeros(0, np.uint8))
        return cls(np.memmap(filename, dtype=np.uint8, mode="r+" if shared else "c",
                             shape=(nbytes,)))

    def untyped(self):
        return self

    def _bytes(self):
        """The storage's memory as a 1-D uint8 array (a view)."""
        root = self._root
        if not root.flags.c_contiguous:
            root = np.ascontiguousarray(root)  # a strided root (not made by ember's ops)
        return root.reshape(-1).view(np.uint8).view(np.ndarray)  # a memory map as a plain array

    def __getitem__(self, index):
        data = self._bytes()
        if isinstance(index, slice):
            if index.step not in (None, 1):
                raise RuntimeError(f"UntypedStorage: trying to slice with a step of "
                                   f"{index.step}, but only a step of 1 is supported")
            return UntypedStorage(data[index])
        n = data.shape[0]
        if not -n <= index < n:
            raise IndexError(f"index {index} out of range for storage of size {n}")
        return int(data[index])

    def tolist(self):
        return self._bytes().tolist()

    @property
    def device(self):
        return CPU

    def data_ptr(self):
        return data_ptr(self._root)

    def nbytes(self):
        return self._root.nbytes

    def size(self):
        return self._root.nbytes

    def __len__(self):
        return self._root.nbytes

    def __sizeof__(self):
        # the bytes held count, as for torch's storages: sys.getsizeof(t.untyped_storage()) is
        # how torchinfo's summary() sizes a model's inputs
        return object.__sizeof__(self) + self._root.nbytes

    def __eq__(self, other):
        return isinstance(other, UntypedStorage) and self.data_ptr() == other.data_ptr()

    __hash__ = None  # type: ignore[assignment]  # equal storages compare equal: not hashable


def _rebuild_tensor(cls, arr, requires_grad):
    t = _new(cls)
    t._data, t._vc = arr, [0]
    if requires_grad:
        t._requires_grad = True
    return t


def _rebuild_meta(shape, dtype, requires_grad):
    from ._meta import new
    return new(shape, np.dtype(dtype), requires_grad)


def _root_array(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _wrap_dim(dim, ndim, op="dim"):
    """Normalise a possibly negative dim; IndexError like torch when out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim % n


def _to_nested(data):
    """Turn nested sequences possibly holding tensors into something np.array accepts, reading
    a tensor inside a sequence as one number as tensor() does."""
    from .ops.creation import _unwrap
    return _unwrap(data)
