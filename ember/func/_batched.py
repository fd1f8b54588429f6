"""Batched tensors for vmap: a logical tensor carried by a physical one with the batch dims in
front.

NOTE [vmap batching]
Inside ``vmap(f)``, every input mapped at level L becomes a ``BatchedTensor``: a Tensor whose
``_phys`` is an ordinary tensor holding the whole batch with one leading dim per vmap level
(``_levels``, outermost first, so the batch dims always sit at a fixed physical position), while
shape, ndim, size and dtype report the logical per-sample tensor. Functions in ember read
metadata through ``_data``; a BatchedTensor's ``_data`` is a ``_MetaArray`` that answers shape,
ndim, size and dtype and refuses every read of values (it raises ``Unbatchable``).

Every op reaches ``Op._run``; while vmap runs, ``Op._run`` first calls ``dispatch`` (the
``_batch_hook`` in autograd/function.py). When an argument is batched, the op's batching rule
(_rules.py) rewrites the call as one call of the same or another op on the physical tensors,
so one kernel serves the whole batch, and wraps the result. Ops without a rule run once per
slice (``per_slice``), still on physical tensors, so that they stay differentiable. Because
rules only ever call ops on physical tensors, the autograd graph is the graph of the batched
computation: ``grad`` inside vmap differentiates the summed batch with respect to physical
inputs, which gives per-sample gradients as the samples never mix (see _transforms.py).

Anything that reads a batched tensor's values outside an op (``.item()``, ``.tolist()``,
NumPy on ``_data``, in-place writes, autograd.Function) raises ``Unbatchable``; vmap catches
it and evaluates the function once per slice instead (NOTE [vmap fallback] in _vmap.py).
"""

from __future__ import annotations

import math

from .._tensor import Tensor, _make

__all__ = ["BatchedTensor", "Unbatchable", "dispatch", "is_batched", "sizes_of"]

_new = object.__new__


class Unbatchable(RuntimeError):
    """A batched tensor's values were needed outside a batching rule (see NOTE [vmap
    batching]); vmap then evaluates the function slice by slice."""


# level -> batch size, for the vmap levels now running
SIZES: dict[int, int] = {}


def sizes_of(levels):
    return tuple(SIZES[lv] for lv in levels)


def _refuse(what):
    def method(self, *args, **kwargs):
        raise Unbatchable(f"vmap: the values of a batched tensor were read ({what}); this "
                          "function is evaluated slice by slice instead")
    method.__name__ = what
    return method


class _Flags:
    """A batched array's flags: logically contiguous; anything else is not known."""

    c_contiguous = True

    def __getattr__(self, name):
        if name.startswith("__"):  # protocol probes (inspect.unwrap's __wrapped__, copy, pickle)
            raise AttributeError(name)
        raise Unbatchable(f"vmap: the memory layout of a batched tensor was read (.{name})")


_FLAGS = _Flags()


class _MetaArray:
    """The ``_data`` of a batched tensor: logical metadata, and its physical array for the
    batching rules. Reading values raises ``Unbatchable``, except whole-array checks
    (min/max/any/all without arguments answer for all samples at once) and astype."""

    __slots__ = ("_arr", "_levels", "_phys", "shape", "ndim", "size", "dtype", "itemsize")
    __hash__ = object.__hash__

    def __init__(self, arr, levels, phys=None):
        self._arr, self._levels, self._phys = arr, levels, phys
        k = len(levels)
        self.shape = arr.shape[k:]
        self.ndim = arr.ndim - k
        self.size = math.prod(self.shape)
        self.dtype = arr.dtype
        self.itemsize = arr.itemsize

    flags = _FLAGS

    def astype(self, dtype, copy=True, **kwargs):
        return _MetaArray(self._arr.astype(dtype, copy=copy), self._levels)

    def _whole(name):  # a method factory, used in the class body only
        def method(self, *args, **kwargs):
            if args or kwargs:
                raise Unbatchable(f"vmap: {name}(...) with arguments on a batched array")
            return getattr(self._arr, name)()
        return method

    min = _whole("min")
    max = _whole("max")
    any = _whole("any")
    all = _whole("all")
    del _whole

    def __getattr__(self, name):
        if name.startswith("__"):  # protocol probes (inspect.unwrap's __wrapped__, copy, pickle)
            raise AttributeError(name)
        raise Unbatchable(f"vmap: the values of a batched tensor were read (.{name}); this "
                          "function is evaluated slice by slice instead")

    __array__ = _refuse("__array__")
    __array_ufunc__ = _refuse("a NumPy ufunc")
    __array_function__ = _refuse("a NumPy function")
    __getitem__ = _refuse("indexing its array")
    __setitem__ = _refuse("writing into its array")
    __iter__ = _refuse("iterating its array")
    __len__ = _refuse("len() of its array")
    __bool__ = _refuse("bool()")
    __float__ = _refuse("float()")
    __int__ = _refuse("int()")
    __index__ = _refuse("index()")
    __eq__ = _refuse("==")
    __ne__ = _refuse("!=")
    __lt__ = _refuse("<")
    __le__ = _refuse("<=")
    __gt__ = _refuse(">")
    __ge__ = _refuse(">=")
    __neg__ = _refuse("neg")
    __abs__ = _refuse("abs")


for _n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
           "matmul"):
    setattr(_MetaArray, f"__{_n}__", _refuse(_n))
    setattr(_MetaArray, f"__r{_n}__", _refuse(_n))


class BatchedTensor(Tensor):
    """A logical tensor inside vmap; ``_phys`` holds the batch (see NOTE [vmap batching])."""

    def __new__(cls, *args, **kwargs):  # built with wrap(), never by users
        raise TypeError("BatchedTensor is internal to ember.func.vmap")

    # _data (a _MetaArray), _phys and _levels are set in the instance dict by wrap()

    def __setattr__(self, name, value):
        if name == "_data":
            raise Unbatchable("vmap: a batched tensor's data was replaced in place")
        object.__setattr__(self, name, value)

    @property
    def _vc(self):
        return self._phys._vc

    @property
    def _grad_fn(self):
        return self._phys._grad_fn

    @_grad_fn.setter
    def _grad_fn(self, value):
        raise Unbatchable("vmap: autograd history set on a batched tensor")

    @property
    def _requires_grad(self):
        return self._phys._requires_grad

    @_requires_grad.setter
    def _requires_grad(self, value):
        raise Unbatchable("vmap: requires_grad changed on a batched tensor")

    @property
    def _output_nr(self):
        return self._phys._output_nr

    def detach(self):
        return wrap(self._phys.detach(), self._levels)

    def is_contiguous(self, memory_format=None):
        return True

    backward = _refuse("backward()")
    register_hook = _refuse("register_hook()")
    retain_grad = _refuse("retain_grad()")

    def __repr__(self):
        return f"BatchedTensor(levels={self._levels}, value={self._phys!r})"


def wrap(phys, levels):
    """A BatchedTensor over ``phys`` whose leading ``len(levels)`` dims are the batch."""
    t = _new(BatchedTensor)
    d = t.__dict__
    d["_phys"] = phys
    d["_levels"] = levels
    d["_data"] = _MetaArray(phys._data, levels, phys)
    return t


def wrap_all(result, levels):
    if type(result) is tuple:
        return tuple(wrap(r, levels) if isinstance(r, Tensor) else r for r in result)
    return wrap(result, levels)


def is_batched(x):
    """True for a BatchedTensor, or a tensor/array made from one's ``_data``."""
    if isinstance(x, Tensor):
        return type(x._data) is _MetaArray
    return type(x) is _MetaArray


def physical(x):
    """(physical tensor or array, levels) of a batched argument."""
    if type(x) is BatchedTensor:
        return x._phys, x._levels
    if type(x) is _MetaArray:
        return x._arr, x._levels
    meta = x._data  # a plain tensor wrapping a _MetaArray (made by detach-like code)
    if meta._phys is not None:
        return meta._phys.detach(), meta._levels
    return _make(meta._arr), meta._levels


def _scan(value):
    if isinstance(value, Tensor):
        return type(value._data) is _MetaArray
    if type(value) is _MetaArray:
        return True
    if type(value) in (tuple, list):
        for v in value:
            if isinstance(v, Tensor):
                if type(v._data) is _MetaArray:
                    return True
            elif type(v) is _MetaArray:
                return True
    return False


RULES: dict = {}
_classify = [None]  # set by _rules: cls -> rule, for classes not in RULES yet


def dispatch(cls, args, params):
    """Op._run's hook while vmap runs: a batching rule for calls with a batched argument."""
    for a in args:
        if _scan(a):
            break
    else:
        for v in params.values():
            if _scan(v):
                break
        else:
            return NotImplemented
    rule = RULES.get(cls)
    if rule is None:
        rule = _classify[0](cls)
        RULES[cls] = rule
    return rule(cls, args, params)
