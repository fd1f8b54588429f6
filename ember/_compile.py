"""``ember.compile`` and the float32 matmul precision setting.

ember is eager: every op runs when it is called, and there is no graph compiler. ``compile``
therefore returns the model (or function) unchanged, so code written as
``model = torch.compile(model)`` keeps working with identical results.
"""
from __future__ import annotations

import warnings

__all__ = ["compile", "set_float32_matmul_precision", "get_float32_matmul_precision"]

_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = ["highest"]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """Return ``model`` unchanged: eager execution is ember's execution model.

    Accepts PyTorch's arguments (and ignores them) so that calling code keeps working; called
    without a model it returns a decorator, as in ``@ember.compile(mode="max-autotune")``.

    Example:
        >>> import ember
        >>> f = lambda x: x * 2
        >>> ember.compile(f) is f
        True

    Differs from torch: no graph capture, no speed-up, no OptimizedModule wrapper.
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if model is None:
        def decorator(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable)
        return decorator
    if not callable(model):
        raise RuntimeError(f"compile(): model must be a callable (an nn.Module or a function); "
                           f"got {type(model).__name__}")
    return model


def set_float32_matmul_precision(precision):
    """Set "highest" (default), "high" or "medium".

    Only the reported setting changes: ember's float32 matmuls always run in full float32 (the
    lower settings allow TF32/bfloat16 internals on GPUs). Tied to
    ``ember.backends.cuda.matmul.allow_tf32`` as in PyTorch.
    """
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning,
                      stacklevel=2)
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision():
    """The precision last set by set_float32_matmul_precision ("highest" by default)."""
    return _matmul_precision[0]
