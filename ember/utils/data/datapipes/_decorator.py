"""Decorators of DataPipe classes: functional registration, determinism, type validation."""
from __future__ import annotations

import functools
import inspect
import typing

from .datapipe import IterDataPipe, MapDataPipe

_determinism = [False]
_runtime_validation_enabled = [True]


class functional_datapipe:
    """``@functional_datapipe("name")`` on a DataPipe class makes ``pipe.name(...)`` build it."""

    def __init__(self, name: str, enable_df_api_tracing: bool = False) -> None:
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        target = cls.cls if isinstance(cls, non_deterministic) else cls
        if isinstance(target, type) and issubclass(target, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls)
        elif isinstance(target, type) and issubclass(target, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        else:
            raise TypeError(f"functional_datapipe: `{self.name}` must decorate an IterDataPipe "
                            f"or MapDataPipe subclass; got {target!r}")
        return cls


class guaranteed_datapipes_determinism:
    """Inside this block, building a DataPipe marked ``non_deterministic`` raises TypeError."""

    def __init__(self) -> None:
        self.prev = _determinism[0]
        _determinism[0] = True

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _determinism[0] = self.prev


def _refuse(name, extra=""):
    raise TypeError(f"{name} is non-deterministic{extra}, but you set "
                    "'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                    "DataPipe if that is acceptable for your application")


class non_deterministic:
    """Mark an IterDataPipe class non-deterministic, always (``@non_deterministic``) or when a
    function of the constructor arguments returns True (``@non_deterministic(fn)``)."""

    cls = None

    def __init__(self, arg) -> None:
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError(f"Only `IterDataPipe` can be decorated with `non_deterministic`,"
                                f" but {arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:
            if _determinism[0]:
                _refuse(self.cls.__name__)
            return self.cls(*args, **kwargs)
        target = args[0]
        if not (isinstance(target, type) and issubclass(target, IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but "
                            f"{getattr(target, '__name__', target)} is found")
        self.cls = target
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args, **kwargs):
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required to "
                            f"return a boolean value, but {type(res)} is found")
        if _determinism[0] and res:
            _refuse(self.cls.__name__, " with the inputs")
        return self.cls(*args, **kwargs)


def _datapipe_item_type(hint):
    """The item type of a hint like ``IterDataPipe[int]`` (None when it names none)."""
    origin = typing.get_origin(hint)
    if isinstance(origin, type) and issubclass(origin, (IterDataPipe, MapDataPipe)):
        return origin, typing.get_args(hint)[0]
    if isinstance(hint, type) and issubclass(hint, (IterDataPipe, MapDataPipe)):
        return hint, typing.Any
    return None


def _matches(value, item_type) -> bool:
    if item_type is typing.Any or isinstance(item_type, typing.TypeVar):
        return True
    origin = typing.get_origin(item_type)
    if origin is typing.Union:
        return any(_matches(value, a) for a in typing.get_args(item_type))
    check = origin if origin is not None else item_type
    return not isinstance(check, type) or isinstance(value, check)


def _declared_item_type(pipe):
    for klass in type(pipe).__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            found = _datapipe_item_type(base)
            if found is not None:
                return found[1]
    return typing.Any


def argument_validation(f):
    """Check, at call time, that arguments annotated ``IterDataPipe[...]``/``MapDataPipe[...]``
    are DataPipes of that kind."""
    signature = inspect.signature(f)
    hints = typing.get_type_hints(f)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            found = _datapipe_item_type(hints.get(name))
            if found is None:
                continue
            kind, item_type = found
            if not isinstance(value, kind):
                raise TypeError(f"Expected argument '{name}' as a {kind.__name__}, but found "
                                f"{type(value)}")
            declared = _declared_item_type(value)
            if (item_type is not typing.Any and isinstance(declared, type)
                    and isinstance(item_type, type) and not issubclass(declared, item_type)):
                raise TypeError(f"Expected type of argument '{name}' as a subtype of hint "
                                f"{item_type}, but found {declared}")
        return f(*args, **kwargs)

    return wrapper


class runtime_validation_disabled:
    """Inside this block ``runtime_validation`` does not check the items."""

    def __init__(self) -> None:
        self.prev = _runtime_validation_enabled[0]
        _runtime_validation_enabled[0] = False

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _runtime_validation_enabled[0] = self.prev


def runtime_validation(f):
    """Decorate a DataPipe's ``__iter__``: every item must be of the pipe's declared type
    (``class P(IterDataPipe[int])``), else RuntimeError."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @functools.wraps(f)
    def wrapper(self):
        if not _runtime_validation_enabled[0]:
            yield from f(self)
            return
        item_type = _declared_item_type(self)
        for item in f(self):
            if not _matches(item, item_type):
                raise RuntimeError(f"Expected an instance as subtype of {item_type}, but found "
                                   f"{item}({type(item)})")
            yield item

    return wrapper
