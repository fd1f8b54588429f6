"""``ember.library``: custom operators defined in Python (``torch.library.custom_op``).

An operator is a Python function registered under ``"namespace::name"``; calling the returned
CustomOpDef, or ``ember.ops.<namespace>.<name>`` (torch.ops' spelling), runs it. Gradients are
what ``register_autograd`` gives (a backward, and optionally a setup_context that saves what it
needs); without one, backward through the operator raises, as in torch. ``register_fake``
records the shape function, which ember never needs (it has no fake-tensor tracing): the
operator itself runs on meta tensors when its body does.

Not served: ``Library``/``define``/``impl`` (registration per dispatch key), torch's check
that an output does not alias an input, and schema strings beyond being accepted.
"""
from __future__ import annotations

import inspect

from .autograd.function import Function
from .autograd.grad_mode import _state

__all__ = ["CustomOpDef", "custom_op", "register_autograd", "register_fake"]

_OPS: dict[str, CustomOpDef] = {}  # "namespace::name" -> its CustomOpDef


class CustomOpDef:
    """A custom operator: call it like its function."""

    def __init__(self, namespace: str, name: str, fn, mutates_args, schema):
        self._namespace, self._name, self._fn = namespace, name, fn
        self._mutates_args, self._schema = mutates_args, schema
        self._signature = inspect.signature(fn)
        self._backward = self._setup_context = self._fake = None
        self.__name__ = name
        self.__doc__ = fn.__doc__
        op, qualname = self, f"{namespace}.{name}.default"

        class _Autograd(Function):
            @staticmethod
            def forward(ctx, *args):
                out = op._fn(*args)
                if op._setup_context is not None:
                    op._setup_context(ctx, args, out)
                return out

            @staticmethod
            def backward(ctx, *grads):
                if op._backward is None:
                    raise RuntimeError(f"Trying to backward through {qualname} but no autograd "
                                       "formula was registered. Please use register_autograd "
                                       "to add one.")
                grads = op._backward(ctx, *grads)
                return grads if isinstance(grads, tuple) else (grads,)

        _Autograd.__name__ = f"GeneratedBackwardFor_{namespace}_{name}_default"
        self._autograd = _Autograd

    def __call__(self, *args, **kwargs):
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        args = tuple(bound.arguments.values())
        if _state.enabled:
            return self._autograd.apply(*args)
        return self._fn(*args)

    def register_autograd(self, backward, /, *, setup_context=None):
        """Gradients through this operator: ``backward(ctx, *grad_outputs)`` returns one
        gradient per input (None for non-tensors); ``setup_context(ctx, inputs, output)``
        saves what it needs on ctx."""
        self._backward, self._setup_context = backward, setup_context

    def register_fake(self, fn, /):
        """Record the operator's shape function (not used by ember); returns it."""
        self._fake = fn
        return fn

    def __repr__(self):
        return f"<CustomOpDef({self._namespace}::{self._name})>"


def _check_annotated(fn):
    for p in inspect.signature(fn).parameters.values():
        if p.annotation is inspect.Parameter.empty:
            raise ValueError(f"infer_schema(func): Parameter {p.name} must have a type "
                             f"annotation. Got func with signature {inspect.signature(fn)})")


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Register ``fn`` as the operator ``"namespace::name"`` and return its CustomOpDef
    (without ``fn``: a decorator). Without a ``schema`` every parameter must be annotated,
    as torch infers the schema from the annotations."""
    namespace, sep, op_name = name.partition("::")
    if not sep or not namespace or not op_name:
        raise ValueError(f"custom_op: expected a name of the form 'namespace::name'; got "
                         f"{name!r}")

    def register(fn):
        if schema is None:
            _check_annotated(fn)
        if name in _OPS:
            raise RuntimeError(f"custom_op: an operator named {name} is already registered")
        _OPS[name] = op = CustomOpDef(namespace, op_name, fn, mutates_args, schema)
        return op

    return register if fn is None else register(fn)


def _find(op, what):
    if isinstance(op, CustomOpDef):
        return op
    if op in _OPS:
        return _OPS[op]
    raise RuntimeError(f"{what}: no custom operator named {op!r} (ember.library serves "
                       "operators made with custom_op)")


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """``op.register_autograd(backward, setup_context=...)`` for an operator given by name or
    CustomOpDef."""
    _find(op, "register_autograd").register_autograd(backward, setup_context=setup_context)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """Record an operator's shape function (not used by ember); a decorator without func."""
    target = _find(op, "register_fake")
    return target.register_fake if func is None else target.register_fake(func)
