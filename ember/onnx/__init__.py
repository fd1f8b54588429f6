"""``ember.onnx``: export a model to an ONNX file.

``export(model, args, f, input_names=, output_names=, dynamic_axes=, opset_version=)`` traces
the model with ember.fx (ember's layers that have an ONNX counterpart stay whole, everything
else is traced through), translates every node into ONNX operators and writes a model that
``onnx.checker.check_model(full_check=True)`` accepts. Needs the optional ``onnx`` package
(``pip install ember[onnx]``).

Dynamic axes: the exporter runs the traced graph a second time with the dynamic axes resized
(see NOTE [Static or dynamic shape values] in ``_capture.py``): sizes derived from them become
Shape/Gather computations in the ONNX graph, everything else a constant.

Differs from torch: there is a single exporter; ``dynamo=`` is accepted and only decides what
is returned (an :class:`ONNXProgram` when True, None otherwise); ``dynamic_shapes`` in the
``{input name: {axis: name}}`` form is accepted like ``dynamic_axes``. The model is exported in
eval mode (torch's default ``training=TrainingMode.EVAL``).
"""
from __future__ import annotations

import contextlib
import os

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError", "ONNXProgram",
           "UnsupportedOperatorError"]

_exporting = [False]


class OnnxExporterError(RuntimeError):
    """Raised by ``ember.onnx.export`` when a model cannot be exported."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op of the model has no ONNX translation; the message names it and where it is."""


class ONNXProgram:
    """The exported model: ``model_proto`` (an ``onnx.ModelProto``) and ``save(f)``."""

    def __init__(self, model_proto):
        self.model_proto = model_proto

    def save(self, destination) -> None:
        import onnx
        onnx.save_model(self.model_proto, destination)

    def __repr__(self) -> str:
        g = self.model_proto.graph
        return (f"ONNXProgram(inputs={[i.name for i in g.input]}, "
                f"outputs={[o.name for o in g.output]}, nodes={len(g.node)})")


def is_in_onnx_export() -> bool:
    """True while ``ember.onnx.export`` is tracing a model."""
    return _exporting[0]


def export(model, args=(), f=None, *, kwargs=None, export_params=True, verbose=None,
           input_names=None, output_names=None, opset_version=None, dynamic_axes=None,
           keep_initializers_as_inputs=False, dynamo=True, dynamic_shapes=None,
           external_data=False, do_constant_folding=True, training=None,
           operator_export_type=None, custom_opsets=None, report=False, optimize=False,
           verify=False, **options):
    """Export ``model`` run on ``args`` to ONNX, written to ``f`` (a path or binary file).

    Args:
        model: an ``nn.Module`` (or function) to export.
        args: example positional inputs (a tuple, or one tensor).
        f: destination path or binary file object (optional when ``dynamo=True``).
        input_names / output_names: ONNX names of the flattened inputs / outputs.
        dynamic_axes: ``{name: {axis: "dim_name"}}`` or ``{name: [axis, ...]}`` for inputs
            and outputs whose sizes vary.
        opset_version: ONNX opset (17 to 21; default 18).

    Example:
        >>> import ember, io, onnx
        >>> buf = io.BytesIO()
        >>> m = ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.ReLU())
        >>> _ = ember.onnx.export(m, (ember.randn(4, 3),), buf, input_names=["x"],
        ...                       dynamic_axes={"x": {0: "batch"}})
        >>> [n.op_type for n in onnx.load_from_string(buf.getvalue()).graph.node]
        ['Gemm', 'Relu', 'Identity']
    """
    from ._exporter import build_model
    if not isinstance(args, tuple):
        args = (args,)
    opset = 18 if opset_version is None else int(opset_version)
    if not 17 <= opset <= 21:
        raise ValueError(f"ember.onnx.export: unsupported opset_version; got {opset}, "
                         "expected 17 to 21.")
    if dynamic_axes is None and dynamic_shapes is not None and isinstance(dynamic_shapes, dict):
        dynamic_axes = {k: v for k, v in dynamic_shapes.items() if v is not None}
    was_training = getattr(model, "training", False)
    if hasattr(model, "eval"):
        model.eval()
    _exporting[0] = True
    try:
        proto = build_model(model, args, dict(kwargs or {}), input_names, output_names,
                            dynamic_axes or {}, opset)
    finally:
        _exporting[0] = False
        if was_training and hasattr(model, "train"):
            model.train()
    if f is not None:
        import onnx
        if isinstance(f, (str, os.PathLike)):
            with contextlib.suppress(FileNotFoundError):
                os.remove(f)
        onnx.save_model(proto, f)
    return ONNXProgram(proto) if dynamo else None

from . import errors as errors  # noqa: E402  (torch.onnx.errors holds the same exception types)
