"""``nn.Parameter`` (a Tensor a Module registers as learnable) and ``nn.Buffer``.

A Parameter is a Tensor subclass that shares the storage and version counter of the tensor it
wraps (no copy) and requires grad by default. Results of ops on a Parameter are plain Tensors,
as in torch.
"""
from __future__ import annotations

import sys

import numpy as np

from .. import _arena, _backend, _meta
from .._tensor import Tensor, _make

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


# A tensor's own per-instance state, kept in its __dict__ (torch keeps it in C, so there a
# tensor's __dict__ holds only attributes users set)
# (post-accumulate-grad hooks belong to the tensor they were registered on: a copy gets none,
# as torch's, where they are not in __dict__ either)
_TENSOR_STATE = frozenset(("_data", "_vc", "_base", "_acc", "_grad", "_hooks", "_requires_grad",
                           "_meta", "_meta_fin", "_post_acc_hooks"))


# the references a fresh array has inside _to_arena: the tensor's _data, `a` and getrefcount's
# argument (exact on CPython before 3.14, as _backend's reuse pool counts them)
_FRESH_REFS = 3


def _to_arena(data):
    """Move a big fresh array of ``data`` into the parameter arena (NOTE [Parameters on huge
    pages] in ember/_arena.py): C-contiguous, owning its memory, at least MIN_BYTES, and held by
    this tensor alone (a NumPy array, a view or another tensor over it keeps it where it is, so
    that every alias stays one)."""
    a = data._data
    if (a.nbytes < _arena.MIN_BYTES or a.base is not None or not a.flags.c_contiguous
            or data._meta or not _backend._COUNTS_EXACT
            or sys.getrefcount(a) > _FRESH_REFS or data.__dict__.get("_base") is not None):
        return
    moved = _arena.copy_in(a)
    if moved is not None:
        data._data = moved


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning it to a Module attribute registers it.

    Args:
        data: the tensor to wrap; the Parameter shares its memory. ``None`` gives an empty one.
        requires_grad: whether the parameter requires a gradient (default True).

    Example:
        >>> import ember
        >>> p = ember.nn.Parameter(ember.ones(2))
        >>> p.requires_grad, type(p * 2).__name__
        (True, 'Tensor')
    """

    def __new__(cls, data=None, requires_grad=True, **tensor_state):
        # NOTE [Parameter from a __dict__]: accelerate's init_empty_weights (diffusers'
        # from_pretrained with accelerate installed) rebuilds parameters as
        # `type(p)(p.to(device), **p.__dict__)`, which in torch passes only user attributes.
        # ember's __dict__ also holds the tensor's own state: those keys describe `data`, which
        # is given, and are ignored; any other keyword is refused as torch does.
        unexpected = sorted(set(tensor_state) - _TENSOR_STATE)
        if unexpected:
            raise TypeError(f"Parameter.__new__() got an unexpected keyword argument "
                            f"'{unexpected[0]}'")
        if data is None:
            data = _make(np.empty((0,), np.float32))
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): expected a Tensor as data, got {type(data).__name__}")
        p = object.__new__(cls)
        _to_arena(data)
        p._data = data._data
        p._vc = data._vc  # a detached alias: in-place updates of either are seen by both
        if data._meta:
            _meta.mark(p)
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True, **tensor_state):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        data = self.detach() if self._meta else _make(np.array(self._data, copy=True))
        result = type(self)(data, self._requires_grad)
        result.__dict__.update({k: v for k, v in self.__dict__.items()
                                if k not in _TENSOR_STATE})
        memo[id(self)] = result
        return result



class _BufferMeta(type):
    # isinstance(t, Buffer) is True for tensors made by Buffer(...): they are plain Tensors
    # carrying a flag, so that a module stores an ordinary tensor (as torch does)
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor as a module buffer: ``self.stats = nn.Buffer(t, persistent=False)``.

    Returns a Tensor sharing ``data``'s memory; assigning it to a Module attribute registers it
    with ``register_buffer(name, t, persistent)``.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _make(np.empty((0,), np.float32))
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): expected a Tensor as data, got {type(data).__name__}")
        t = data.detach()
        t._is_buffer = True
        t.persistent = bool(persistent)
        return t


class UninitializedParameter(Parameter):
    """A parameter of a lazy module (``nn.LazyLinear``...) whose shape is not known yet.

    ``materialize(shape)`` gives it storage in place and turns it into a plain ``Parameter``:
    the same object, so an optimizer built before the first forward keeps training it.
    """

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        param = super().__new__(cls, None, requires_grad)
        if dtype is not None:   # the empty placeholder carries the dtype (module.double() too)
            import numpy as np

            from .. import _dtype as D
            param._data = np.zeros(0, dtype=D.to_dtype(dtype).np)
        return param

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass    # __new__ did the work; Parameter.__init__ takes data, not a dtype

    def __repr__(self):
        return "<UninitializedParameter>"   # no values to show (torch's text)

    def materialize(self, shape, device=None, dtype=None):
        import numpy as np

        from .. import _dtype as D
        np_dtype = D.to_dtype(dtype).np if dtype is not None else self._data.dtype
        self._data = np.zeros(tuple(int(s) for s in shape), dtype=np_dtype)
        self._vc[0] += 1
        self.__class__ = Parameter
        return self


class UninitializedBuffer(Tensor):
    """Placeholder for lazy buffers; ember's lazy modules create their buffers when they
    materialize instead."""

    def __repr__(self):
        return "<UninitializedBuffer>"


def is_lazy(param):
    """True for uninitialized (lazy) parameters and buffers."""
    return isinstance(param, (UninitializedParameter, UninitializedBuffer))
