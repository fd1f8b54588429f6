"""The exception types of ``ember.onnx`` under torch's module path ``torch.onnx.errors``."""
from . import OnnxExporterError as OnnxExporterError
from . import UnsupportedOperatorError as UnsupportedOperatorError

__all__ = ["OnnxExporterError", "UnsupportedOperatorError"]
