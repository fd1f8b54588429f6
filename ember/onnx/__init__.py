"""``ember.onnx``: ONNX export is not supported yet.

The module imports (so code that merely references ``ember.onnx`` loads), ``is_in_onnx_export``
is False, and ``export`` raises a RuntimeError saying export is not supported. Save weights with
``ember.save(model.state_dict(), path)`` meanwhile.
"""
from __future__ import annotations

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError"]


class OnnxExporterError(RuntimeError):
    """Raised by ``ember.onnx.export``."""


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, dynamic_axes=None, **options):
    """Not supported yet: always raises ``OnnxExporterError`` (a RuntimeError)."""
    raise OnnxExporterError(
        f"ember.onnx.export: ONNX export is not supported yet (asked to export "
        f"{type(model).__name__}). ember has no graph tracer to build an ONNX graph from; save "
        "the weights with ember.save(model.state_dict(), path) instead.")


def is_in_onnx_export():
    """False: ember never runs an ONNX export."""
    return False
