"""The names a checkpoint's pickle may use, and the user's ``add_safe_globals`` registry.

NOTE [Allow-list]
``weights_only=True`` resolves a global named by the file only through ``names()``: the data
constructors torch's weights-only loading admits (PyTorch 2.13: OrderedDict, Counter, set,
complex, bytearray, ``_codecs.encode`` for protocol-2 bytes, ``torch.Size``, ``torch.device``,
dtypes, layouts, storage classes, the tensor and parameter rebuild functions) plus the names
ember's own pickles use. Each constructor is a ``Ctor``: the restricted unpickler calls its
``fn`` for REDUCE and nothing else, and ``fn`` accepts only data arguments (``bytearray`` takes
bytes, never a size; ``_codecs.encode`` only the latin-1 codec). Classes are handed out only as
``ClassToken``s, which can be named as a rebuild's target type but never called or modified.
So a file can build data, but cannot call ``str``, reach a class object, or set attributes on
anything except the instances it built (see ``_unpickler.Unpickler.build``). Names added with
``add_safe_globals`` are the user's trust decision and get ordinary pickle semantics.
"""
from __future__ import annotations

import collections
import contextlib
from typing import Any

from .. import _dtype as D
from .._backend import device as _device
from .._size import Size
from .._tensor import Tensor
from ._errors import bad, refused, short
from ._tensors import (
    PENDING,
    STORAGE_DTYPES,
    Storage,
    StorageType,
    as_parameter,
    ember_dtype,
    make_tensor,
    parameter_class,
    retype,
)


class Ctor:
    """An allow-listed data constructor: callable only by the unpickler's REDUCE."""

    __slots__ = ("qualname", "fn")

    def __init__(self, qualname: str, fn):
        self.qualname, self.fn = qualname, fn

    def __repr__(self):
        return f"<allow-listed constructor {self.qualname}>"


class ClassToken:
    """Stands for Tensor / Parameter in restricted pickles: usable only as the class argument of
    a tensor rebuild. Handing out the real class would let NEWOBJ call the legacy constructor
    ``Tensor(*sizes)`` (an allocation of any size) or BUILD rewrite the class."""

    __slots__ = ("cls",)

    def __init__(self, cls):
        self.cls = cls

    def __repr__(self):
        return f"<class token {self.cls.__name__}>"


# ---------------------------------------------------------------------------------------------
# the user's registry (torch.serialization.add_safe_globals and friends)

_user_globals: dict[tuple[str, str], Any] = {}


def _global_key(obj) -> tuple[str, str]:
    if isinstance(obj, tuple):  # (obj, "module.name") as in torch
        obj, name = obj
        module, _, qual = name.rpartition(".")
        return module, qual
    return obj.__module__, obj.__qualname__


def add_safe_globals(safe_globals: list) -> None:
    """Allow these classes/functions in ``ember.load(weights_only=True)`` pickles.

    Only add what you trust: an allowed class's ``__setstate__``/``__new__``/``__reduce__``
    targets run during loading. Entries may be objects or ``(object, "module.qualname")``.
    """
    for obj in safe_globals:
        _user_globals[_global_key(obj)] = obj[0] if isinstance(obj, tuple) else obj


def get_safe_globals() -> list:
    """The globals added with ``add_safe_globals`` (not the built-in allow-list)."""
    return list(_user_globals.values())


def clear_safe_globals() -> None:
    """Remove every global added with ``add_safe_globals``."""
    _user_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list):
    """Context manager: ``add_safe_globals`` for the duration of the block."""
    saved = dict(_user_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_globals.clear()
        _user_globals.update(saved)


def user_globals() -> dict[tuple[str, str], Any]:
    return dict(_user_globals)


# ---------------------------------------------------------------------------------------------
# data constructors


def _check_hooks(hooks):
    # torch writes an empty OrderedDict here; hooks are code and are never restored
    if hooks is not None and not (isinstance(hooks, dict) and not hooks):
        raise bad("a tensor record carries backward hooks, which ember never restores")


def _check_metadata(metadata):
    if metadata is not None and not (isinstance(metadata, dict) and not metadata):
        raise bad(f"unsupported tensor metadata {short(metadata)}")


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                      backward_hooks=None, metadata=None):
    """``torch._utils._rebuild_tensor_v2``: a tensor viewing a typed storage."""
    _check_hooks(backward_hooks)
    _check_metadata(metadata)
    return make_tensor(storage, storage_offset, size, stride, requires_grad)


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                      dtype, metadata=None):
    """``torch._utils._rebuild_tensor_v3``: a tensor viewing an untyped storage."""
    _check_hooks(backward_hooks)
    _check_metadata(metadata)
    if not isinstance(dtype, D.dtype):
        raise bad(f"a tensor record's dtype is {type(dtype).__name__}, not a dtype")
    return make_tensor(storage, storage_offset, size, stride, requires_grad, dtype)


def rebuild_tensor(storage, storage_offset, size, stride):
    """``torch._utils._rebuild_tensor`` (files from torch < 1.0 name it directly)."""
    return make_tensor(storage, storage_offset, size, stride, False)


def rebuild_parameter(data, requires_grad, backward_hooks):
    """``torch._utils._rebuild_parameter``."""
    _check_hooks(backward_hooks)
    return as_parameter(data, requires_grad)


def rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """``torch._utils._rebuild_parameter_with_state``: a parameter with instance attributes."""
    p = rebuild_parameter(data, requires_grad, backward_hooks)
    apply_state(p, state, trusted=False)
    return p


def rebuild_from_type_v2(func, new_type, args, state):
    """``torch._tensor._rebuild_from_type_v2``: a Tensor subclass or a tensor with attributes."""
    fn = func.fn if isinstance(func, Ctor) else func
    if fn not in _TENSOR_REBUILDS or type(args) is not tuple:
        raise bad(f"_rebuild_from_type_v2 names {short(func)}, not a tensor rebuild function")
    cls = new_type.cls if isinstance(new_type, ClassToken) else new_type
    trusted = not isinstance(new_type, ClassToken)
    t = retype(fn(*args), cls)
    if t is not PENDING:
        apply_state(t, state, trusted=trusted)
    return t


def apply_state(obj, state, *, trusted: bool) -> None:
    """Set instance attributes from a pickled state: plain names only, never one the class
    defines (so a file cannot shadow ``shape`` or a method on the tensor it built)."""
    if state is None:
        return
    slots = None
    if type(state) is tuple and len(state) == 2:
        state, slots = state
    for part in (state, slots):
        if part is None:
            continue
        if not isinstance(part, dict):
            raise refused(f"an object state of type {type(part).__name__} is not a dict")
        for name, value in part.items():
            if type(name) is not str or (not trusted and (name.startswith("__")
                                                          or hasattr(type(obj), name))):
                raise refused(f"the file sets attribute {short(name)} on a "
                              f"{type(obj).__name__}, which loading data never needs")
            setattr(obj, name, value)


def _rebuild_tensor_ember(cls, arr, requires_grad):
    # ember._tensor._rebuild_tensor (plain pickles of ember tensors): NumPy data only, which a
    # restricted load can only have if the user allowed NumPy's globals
    import numpy as np

    from .._tensor import _rebuild_tensor
    if isinstance(cls, ClassToken):
        cls = cls.cls
    if not (isinstance(cls, type) and issubclass(cls, Tensor)) or not isinstance(arr, np.ndarray):
        raise bad("malformed tensor in pickle data")
    D.from_numpy_dtype(arr.dtype)
    return _rebuild_tensor(cls, arr, bool(requires_grad))


def _ordered_dict(*args):
    if not args:
        return collections.OrderedDict()
    if len(args) == 1 and type(args[0]) in (list, tuple, dict, collections.OrderedDict):
        items = args[0].items() if isinstance(args[0], dict) else args[0]
        out = collections.OrderedDict()
        for pair in items:
            if type(pair) not in (tuple, list) or len(pair) != 2:
                raise bad("OrderedDict items must be (key, value) pairs")
            out[pair[0]] = pair[1]
        return out
    raise bad("OrderedDict takes at most one list of (key, value) pairs")


def _counter(*args):
    if not args:
        return collections.Counter()
    if len(args) == 1 and type(args[0]) is dict:
        return collections.Counter(args[0])
    raise bad("Counter takes at most one dict of counts")


def _set(*args):
    if not args:
        return set()
    if len(args) == 1 and type(args[0]) in (list, tuple, set):
        return set(args[0])
    raise bad("set takes at most one list of items")


def _complex(real=0.0, imag=0.0):
    if type(real) not in (int, float) or type(imag) not in (int, float):
        raise bad("complex takes two numbers")
    return complex(real, imag)


def _bytearray(*args):
    # never bytearray(n): an allocation of a size the file chooses
    if not args:
        return bytearray()
    if len(args) == 1 and type(args[0]) is bytes:
        return bytearray(args[0])
    if len(args) == 2 and type(args[0]) is str and args[1] in ("latin1", "latin-1"):
        return bytearray(args[0].encode("latin1"))
    raise refused("bytearray is allowed only from bytes or a latin-1 string")


def _codecs_encode(obj, encoding="utf-8"):
    # protocol-2 pickles spell bytes as _codecs.encode(str, "latin1"); allow exactly that
    if type(obj) is not str or encoding not in ("latin1", "latin-1"):
        raise refused("weights_only=True only allows _codecs.encode(str, 'latin1') "
                      "(how protocol-2 pickles store bytes)")
    return obj.encode("latin1")


def _size(dims=()):
    if type(dims) not in (tuple, list) or not all(type(d) is int and d >= 0 for d in dims):
        raise bad(f"torch.Size takes a tuple of non-negative ints; got {short(dims)}")
    return Size(dims)


def _device_ctor(kind, index=None):
    if type(kind) is not str or (index is not None and type(index) is not int):
        raise bad("torch.device takes a device string and an optional index")
    try:
        return _device(kind, index)
    except (TypeError, RuntimeError) as e:
        raise bad(f"invalid device in file ({e})") from None


def _dtype_by_name(name):
    if type(name) is not str or name not in D._NAMES:
        raise bad(f"unknown dtype name {short(name)}")
    return D._NAMES[name]


def _get_layout(name):
    from ..sparse import sparse_coo, strided
    layouts = {"torch.strided": strided, "torch.sparse_coo": sparse_coo}
    if name not in layouts:
        raise bad(f"unsupported layout {short(name)} (ember has torch.strided and "
                  "torch.sparse_coo)")
    return layouts[name]


_TENSOR_REBUILDS = (rebuild_tensor_v2, rebuild_tensor_v3, rebuild_tensor, rebuild_parameter,
                    rebuild_parameter_with_state)

_TORCH_DTYPE_NAMES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16",
                      "int8", "uint8", "bool", "uint16", "uint32", "uint64", "float8_e4m3fn",
                      "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")


class _Missing:
    """A name torch defines that ember cannot represent: raising names it."""

    def __init__(self, name):
        self.name = name


def names() -> dict[tuple[str, str], Any]:
    """The built-in allow-list: ``(module, name) -> Ctor | ClassToken | value``."""
    out: dict[tuple[str, str], Any] = {}

    def ctor(module, name, fn):
        out[(module, name)] = Ctor(f"{module}.{name}", fn)

    ctor("collections", "OrderedDict", _ordered_dict)
    ctor("collections", "Counter", _counter)
    ctor("builtins", "set", _set)
    ctor("builtins", "complex", _complex)
    ctor("builtins", "bytearray", _bytearray)
    ctor("_codecs", "encode", _codecs_encode)
    ctor("torch", "Size", _size)
    ctor("torch", "device", _device_ctor)
    ctor("torch.serialization", "_get_layout", _get_layout)
    ctor("torch._utils", "_rebuild_tensor_v2", rebuild_tensor_v2)
    ctor("torch._utils", "_rebuild_tensor_v3", rebuild_tensor_v3)
    ctor("torch._utils", "_rebuild_tensor", rebuild_tensor)
    ctor("torch._utils", "_rebuild_parameter", rebuild_parameter)
    ctor("torch._utils", "_rebuild_parameter_with_state", rebuild_parameter_with_state)
    ctor("torch._tensor", "_rebuild_from_type_v2", rebuild_from_type_v2)
    param = parameter_class()
    for module in ("torch", "torch._tensor"):
        out[(module, "Tensor")] = ClassToken(Tensor)
    for module in ("torch.nn.parameter", "torch.nn", "torch.nn.modules.module"):
        out[(module, "Parameter")] = ClassToken(param)
    for name in _TORCH_DTYPE_NAMES:
        out[("torch", name)] = D._NAMES[name]
    from ._tensors import FOREIGN_DTYPES
    for name in FOREIGN_DTYPES:
        out[("torch", name)] = _Missing(name)
    for cls_name, dtype_name in STORAGE_DTYPES.items():
        for module in ("torch", "torch.cuda"):
            out[(module, cls_name)] = StorageType(f"{module}.{cls_name}", dtype_name)
    for module in ("torch", "torch.storage"):
        out[(module, "UntypedStorage")] = StorageType(f"{module}.UntypedStorage", None)
    from ..sparse import sparse_coo, strided
    out[("torch", "strided")] = strided
    out[("torch", "sparse_coo")] = sparse_coo
    # names ember's own pickles use
    ctor("ember._dtype", "_by_name", _dtype_by_name)
    ctor("ember._size", "Size", _size)
    ctor("ember._backend", "device", _device_ctor)
    ctor("ember._tensor", "_rebuild_tensor", _rebuild_tensor_ember)
    out[("ember._tensor", "Tensor")] = ClassToken(Tensor)
    out[(param.__module__, param.__qualname__)] = ClassToken(param)
    return out


def resolve_missing(obj):
    """Raise for a name torch has and ember lacks; else return ``obj``."""
    if isinstance(obj, _Missing):
        ember_dtype(obj.name)  # raises, naming the dtype
    return obj


def storage_dtype(stype: StorageType):
    return None if stype.dtype_name is None else ember_dtype(stype.dtype_name)


def new_storage(buf, stype: StorageType, key, big_endian=False) -> Storage:
    return Storage(buf, storage_dtype(stype), key, big_endian)
