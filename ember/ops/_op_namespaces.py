"""``ember.ops.aten`` and ``ember.ops.profiler``: torch.ops' operator namespaces, for programs that
name operators the way graphs do (``torch.ops.aten.relu.default``, ``torch.ops.aten.add.Tensor``)
or emit profiler ranges into traced code (``torch.ops.profiler._record_function_enter``).

An aten name resolves to ember's public function of that name (ember.X, then
ember.nn.functional.X, then the Tensor method X); every overload (`.default`, `.Tensor`,
`.Scalar`, `.out`...) is that same function, since ember's functions accept all of torch's
argument forms. Calls with an ember.fx Proxy argument record a call_function node whose target
is the overload object, as torch.fx records them.
"""
from __future__ import annotations

import types


def _traced(target, args, kwargs):
    """The Proxy a call records when an argument is an ember.fx Proxy, else None."""
    from ..fx import _patching
    if _patching._has_proxy(args, kwargs):
        return _patching._tracer_of(args, kwargs).create_proxy("call_function", target, args,
                                                               kwargs)
    return None


class OpOverload:
    """One overload of an operator (`aten.add.Tensor`): calls ember's function."""

    def __init__(self, packet, overload: str):
        self.overloadpacket = packet
        self._overloadname = overload
        self.__name__ = f"{packet.__name__}.{overload}"
        self.__qualname__ = self.__name__

    def name(self) -> str:
        return f"{self.overloadpacket._qualified_op_name}.{self._overloadname}"

    def __call__(self, *args, **kwargs):
        proxy = _traced(self, args, kwargs)
        return proxy if proxy is not None else self.overloadpacket._fn(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverload(op='{self.overloadpacket._qualified_op_name}', overload=" \
               f"'{self._overloadname}')>"


class OpOverloadPacket:
    """All overloads of one operator (`aten.add`); callable itself."""

    def __init__(self, namespace: str, name: str, fn):
        self.__name__ = name
        self.__qualname__ = name
        self._qualified_op_name = f"{namespace}::{name}"
        self._fn = fn
        self._overloads: dict[str, OpOverload] = {}

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        ov = self._overloads.get(overload)
        if ov is None:
            ov = self._overloads[overload] = OpOverload(self, overload)
        return ov

    def overloads(self) -> list:
        return list(self._overloads) or ["default"]

    def __call__(self, *args, **kwargs):
        proxy = _traced(self, args, kwargs)
        return proxy if proxy is not None else self._fn(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._qualified_op_name}')>"


class _Namespace(types.ModuleType):
    def __init__(self, name: str, resolve):
        super().__init__(f"ember.ops.{name}")
        self._ns = name
        self._resolve = resolve

    def __getattr__(self, op: str) -> OpOverloadPacket:
        if op.startswith("__"):
            raise AttributeError(op)
        fn = self._resolve(op)
        if fn is None:
            raise AttributeError(f"ember.ops.{self._ns}: no operator named {op!r}; ember maps "
                                 f"{self._ns} names onto its public functions (ember.{op}, "
                                 f"ember.nn.functional.{op}, Tensor.{op}) and none exists.")
        packet = OpOverloadPacket(self._ns, op, fn)
        setattr(self, op, packet)
        return packet


def _aten(op: str):
    import ember
    base = op.lstrip("_")
    for name in (op, base):
        for owner in (ember, ember.nn.functional, ember.Tensor):
            fn = getattr(owner, name, None)
            if callable(fn) and not isinstance(fn, type):
                return fn
    return None


def _record_function_enter(name, args=None):
    """Open a profiler range named `name`; returns the handle `_record_function_exit` closes."""
    from ..profiler import record_function
    handle = record_function(name, args)
    handle.__enter__()
    return handle


def _record_function_exit(handle):
    handle.__exit__(None, None, None)


def _profiler(op: str):
    return {"_record_function_enter": _record_function_enter,
            "_record_function_enter_new": _record_function_enter,
            "_record_function_exit": _record_function_exit}.get(op)


aten = _Namespace("aten", _aten)
profiler = _Namespace("profiler", _profiler)


_custom: dict[str, _Namespace] = {}


def custom_namespace(ns: str):
    """The namespace of operators made with ember.library.custom_op (``torch.ops.mylib``), or
    None when no operator was registered under that name."""
    from ..library import _OPS
    if ns not in _custom:
        if not any(q.partition("::")[0] == ns for q in _OPS):
            return None
        _custom[ns] = _Namespace(ns, lambda op: _OPS.get(f"{ns}::{op}"))
    return _custom[ns]
