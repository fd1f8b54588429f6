"""``ember.export.graph_signature``: torch's module path of the signature classes of an
exported program (which inputs are parameters, buffers or user inputs, and the outputs)."""
from __future__ import annotations

from ember.export import (
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)

__all__ = ["ExportGraphSignature", "InputKind", "InputSpec", "OutputKind", "OutputSpec",
           "TensorArgument"]
