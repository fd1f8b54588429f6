"""``ember.onnx.errors``: the exporter's exception and warning types at torch's module path.

``OnnxExporterError`` and ``UnsupportedOperatorError`` are the classes ``ember.onnx.export``
raises (defined in the package); ``SymbolicValueError`` and ``OnnxExporterWarning`` complete
torch's set so ``except``/``filterwarnings`` clauses naming them work."""
from __future__ import annotations

from ember.onnx import OnnxExporterError, UnsupportedOperatorError

__all__ = ["OnnxExporterError", "OnnxExporterWarning", "SymbolicValueError",
           "UnsupportedOperatorError"]


class OnnxExporterWarning(UserWarning):
    """A warning about an exported model whose ONNX form may behave differently."""


class SymbolicValueError(OnnxExporterError):
    """A value in the model could not be translated to an ONNX value."""
