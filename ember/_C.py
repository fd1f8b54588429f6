"""``ember._C``: torch's compiled extension module has no counterpart in ember; libraries import
a few of its names at import time and get them here.

``_TensorMeta`` is the metaclass of Tensor (Lightning's lazy checkpoint loader annotates with it).
``_get_tracing_state`` is None outside ``ember.jit.trace``.
``_nn._parse_to`` reads the arguments of ``Tensor.to`` / ``Module.to`` (Lightning's device and
dtype mixin calls it in every ``model.to(...)``).
``PyTorchFileReader`` / ``PyTorchFileWriter`` (torch's zip-archive record reader and writer,
also ``torch.PyTorchFileReader``) exist for annotations; making one raises NotImplementedError:
ember reads and writes torch's archives through ``ember.load`` / ``ember.save`` only.
"""
from __future__ import annotations

import types

from ._backend import device as _device
from ._dtype import dtype as _dtype
from ._tensor import Tensor

_TensorMeta = type(Tensor)


def _parse_to(*args, **kwargs):
    """``(device, dtype, non_blocking, memory_format)`` of the arguments of ``to``: the forms
    ``to(device, dtype=None, non_blocking=False, copy=False)``, ``to(dtype, non_blocking,
    copy)`` and ``to(tensor, non_blocking, copy)``, each with the keywords; None where not
    given. Giving ``copy`` raises, as torch's."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    copy_given = "copy" in kwargs
    kwargs.pop("copy", None)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        device, dtype = rest[0].device, rest.pop(0).dtype
    elif rest and isinstance(rest[0], _dtype):
        dtype = rest.pop(0)
    elif rest and isinstance(rest[0], (str, _device)):
        device = rest.pop(0)
        if rest and isinstance(rest[0], _dtype):
            dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        copy_given = rest.pop(0) is not None
    if rest:
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"to() received an invalid combination of arguments - got ({got}), "
                        "but expected one of: (device, dtype, non_blocking, copy), "
                        "(dtype, non_blocking, copy), (tensor, non_blocking, copy)")
    if copy_given:
        raise RuntimeError(".to() does not accept copy argument")  # as torch's parser
    return (None if device is None else _device(device)), dtype, non_blocking, memory_format


def _log_api_usage_once(event: str) -> None:
    """torch records the event for its usage logging; ember logs nothing (torchmetrics calls
    it in every Metric)."""


def _get_tracing_state():
    """None unless ``ember.jit.trace`` is recording (then a true value), as torch's: libraries
    test it before tracer-only work (Pyro, in every inference step)."""
    from .jit._trace import is_tracing
    return _TRACING if is_tracing() else None


_TRACING = types.SimpleNamespace(tracing=True)
_nn = types.SimpleNamespace(_parse_to=_parse_to)  # a module in torch


class PyTorchFileReader:
    """torch's record-level reader of a checkpoint archive: not implemented in ember."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("PyTorchFileReader: ember reads torch's checkpoint archives "
                                  "with ember.load only, not record by record")


class PyTorchFileWriter:
    """torch's record-level writer of a checkpoint archive: not implemented in ember."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("PyTorchFileWriter: ember writes torch's checkpoint archives "
                                  "with ember.save only, not record by record")
