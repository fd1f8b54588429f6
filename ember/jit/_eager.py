"""TorchScript helpers that programs call in eager code: type annotations, checks and fusion
settings. Outside a captured graph each one has its documented eager meaning (``annotate``
returns the value, ``isinstance`` checks containers element by element, fusion settings are
recorded and read back; ember has no fuser, so they change nothing else)."""
from __future__ import annotations

import builtins
import functools
import types
import typing
import warnings
from typing import Any, NamedTuple


class Attribute(NamedTuple):
    """``self.x = jit.Attribute(value, type)``: a module attribute with its declared type."""

    value: Any
    type: Any


def annotate(the_type, the_value):
    """Declare the type of ``the_value`` for the TorchScript compiler; returns it unchanged."""
    return the_value


def interface(obj):
    """Mark a class as a TorchScript interface type; the class is returned unchanged."""
    if not builtins.isinstance(obj, type):
        raise RuntimeError(f"jit.interface: expected a class; got {type(obj).__name__}.")
    return obj


def script_if_tracing(fn):
    """Compile ``fn`` only when called during tracing; eager calls run it as it is. ember's
    tracer runs Python, so both paths call ``fn``."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    wrapper.__original_fn = fn      # type: ignore[attr-defined]
    wrapper.__script_if_tracing_wrapper = True      # type: ignore[attr-defined]
    return wrapper


def _matches(obj, target) -> bool:
    origin = typing.get_origin(target)
    if origin is None:
        if target is typing.Any:
            return True
        if target is None or target is type(None):
            return obj is None
        return builtins.isinstance(obj, target)
    args = typing.get_args(target)
    if origin is typing.Union or origin is types.UnionType:
        return any(_matches(obj, a) for a in args)
    if origin is list:
        return builtins.isinstance(obj, list) and _each(obj, lambda v: _matches(v, args[0]))
    if origin is dict:
        return builtins.isinstance(obj, dict) and _each(
            obj, lambda k: _matches(k, args[0]) and _matches(obj[k], args[1]))
    if origin is tuple:
        if not builtins.isinstance(obj, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_matches(v, args[0]) for v in obj)
        return len(obj) == len(args) and all(_matches(v, a) for v, a in zip(obj, args, strict=True))
    return builtins.isinstance(obj, origin)


def _each(container, check) -> bool:
    if len(container) == 0:
        warnings.warn("jit.isinstance: an empty container matches any element type in eager "
                      "mode (List[int] and List[str] both accept []).", UserWarning, stacklevel=4)
        return True
    return all(check(v) for v in container)


def isinstance(obj, target_type) -> bool:
    """``isinstance`` that also understands typing containers: ``List[int]``, ``Dict[str,
    Tensor]``, ``Tuple[int, str]``, ``Optional[T]``; elements are checked one by one."""
    return _matches(obj, target_type)


_onednn = [False]


def enable_onednn_fusion(enabled: bool) -> None:
    """Record whether oneDNN graph fusion is wanted (ember has no fuser; the flag is read back
    by ``onednn_fusion_enabled``)."""
    _onednn[0] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    return _onednn[0]


_fusion_strategy: list = [("STATIC", 2), ("DYNAMIC", 10)]


def set_fusion_strategy(strategy: list[tuple[str, int]]):
    """Set the fuser's specialisation strategy, a list of ("STATIC"|"DYNAMIC", depth) pairs;
    returns the previous one."""
    for entry in strategy:
        kind = entry[0] if builtins.isinstance(entry, (tuple, list)) and entry else entry
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"jit.set_fusion_strategy: each entry is ('STATIC' or 'DYNAMIC', "
                             f"depth); got {kind!r}.")
    global _fusion_strategy
    old, _fusion_strategy = _fusion_strategy, [tuple(e) for e in strategy]
    return old


class strict_fusion:
    """``with jit.strict_fusion():`` asks the fuser to fuse every op in the block or fail;
    eager code (and ember, which has no fuser) runs the block unchanged."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
