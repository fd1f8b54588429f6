"""ember.compiler: the public face of ember.compile (torch.compiler's names)."""
from __future__ import annotations

from .._compile import compile as compile
from .._dynamo import allow_in_graph as allow_in_graph
from .._dynamo import list_backends as list_backends
from .._dynamo import reset as reset
from .._dynamo.eval_frame import is_compiling as is_compiling
from .._dynamo.explain import disable as disable

__all__ = ["compile", "reset", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting",
           "allow_in_graph", "assume_constant_result", "list_backends", "set_stance",
           "cudagraph_mark_step_begin"]

_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile")


def is_dynamo_compiling():
    """True while a function is being captured (same as is_compiling here)."""
    return is_compiling()


def is_exporting():
    """True while ember.export is tracing; ember.compile never exports."""
    return False


def assume_constant_result(fn):
    """Accepted for compatibility: the result of fn is recorded like any other value."""
    return fn


def cudagraph_mark_step_begin():
    """No CUDA graphs on CPU: nothing to mark."""


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """How compiled functions behave: "default"; "force_eager" (run everything eagerly);
    "eager_on_recompile" (a new signature runs eagerly instead of recompiling);
    "fail_on_recompile" (a new signature raises RecompileError)."""
    from .._dynamo import config
    if stance not in _STANCES:
        raise RuntimeError(f"set_stance: unknown stance {stance!r}; expected one of "
                           f"{list(_STANCES)}.")
    config.disable = stance == "force_eager"
    config.error_on_recompile = stance == "fail_on_recompile"
    config.eager_on_recompile = stance == "eager_on_recompile"
