"""ember.onnx.errors: the exporter's error types at torch's module path."""
from __future__ import annotations

import pytest

import ember
from ember.onnx import errors


def test_onnx_errors_module_types():
    assert errors.OnnxExporterError is ember.onnx.OnnxExporterError
    assert errors.UnsupportedOperatorError is ember.onnx.UnsupportedOperatorError
    assert issubclass(errors.SymbolicValueError, errors.OnnxExporterError)
    assert issubclass(errors.OnnxExporterError, RuntimeError)
    assert issubclass(errors.OnnxExporterWarning, UserWarning)
    with pytest.raises(errors.OnnxExporterError, match="bad value"):
        raise errors.SymbolicValueError("bad value")


@pytest.mark.parity
def test_onnx_errors_hierarchy_matches_torch():
    torch = pytest.importorskip("torch")
    import torch.onnx.errors as theirs
    for name in theirs.__all__:
        ours, ref = getattr(errors, name), getattr(theirs, name)
        assert [c.__name__ for c in ours.__mro__] == [c.__name__ for c in ref.__mro__]
    assert torch.onnx.OnnxExporterError.__name__ == errors.OnnxExporterError.__name__
