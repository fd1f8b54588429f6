"""Exceptions of ember.compile, named as torch._dynamo.exc's."""
from __future__ import annotations

__all__ = ["Unsupported", "RecompileError", "BackendCompilerFailed"]


class Unsupported(RuntimeError):
    """The compiler met Python it cannot capture and fullgraph=True forbids a graph break."""


class RecompileError(RuntimeError):
    """A recompile happened where it was forbidden (error_on_recompile)."""


class BackendCompilerFailed(RuntimeError):
    """A backend raised while compiling a captured graph."""
