"""ember._dynamo: the capture-and-replay compiler behind ``ember.compile`` (torch._dynamo's names).

See ``ember/_dynamo/capture.py`` for how a call is recorded, ``codegen.py`` for the replay and
``fusion.py`` for the generated kernels.
"""
from __future__ import annotations

from . import config as config
from . import exc as exc
from .backends import list_backends as list_backends
from .backends import register_backend as register_backend
from .eval_frame import is_compiling as is_compiling
from .explain import allow_in_graph as allow_in_graph
from .explain import assume_constant_result as assume_constant_result
from .explain import disable as disable
from .explain import explain as explain
from .explain import mark_dynamic as mark_dynamic
from .explain import mark_static as mark_static
from .explain import mark_static_address as mark_static_address
from .explain import optimize as optimize
from .explain import reset as reset

__all__ = ["config", "exc", "explain", "reset", "disable", "optimize", "is_compiling",
           "list_backends", "register_backend", "mark_dynamic", "mark_static",
           "mark_static_address", "allow_in_graph",
           "assume_constant_result", "OptimizedModule"]


def __getattr__(name):
    # OptimizedModule subclasses nn.Module, which this package may not import eagerly (the
    # class is made on first use in eval_frame); torch exports it here too (Lightning imports it)
    if name == "OptimizedModule":
        from .eval_frame import OptimizedModule
        return OptimizedModule
    raise AttributeError(f"module 'ember._dynamo' has no attribute '{name}'")
