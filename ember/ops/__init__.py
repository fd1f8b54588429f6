"""Differentiable ops by family; importing this package registers them all.

The order is the registration order: operators.py needs the functions before it, and linalg
comes last so that its legacy names (ember.norm, ember.det, ...) win.
"""
from . import registry  # noqa: F401
from . import elementwise, unary, reduce, views, join, indexing, gather  # noqa: F401
from . import creation, random, products  # noqa: F401
from . import operators  # noqa: F401
from . import sorting, rearrange  # noqa: F401
from . import numeric, special, signal  # noqa: F401
from . import complex  # noqa: F401
from . import linalg  # noqa: F401
from ._op_namespaces import aten, profiler  # noqa: F401  (torch.ops.aten, torch.ops.profiler)


def __getattr__(name):
    # torch.ops.<namespace> of operators registered with ember.library.custom_op
    from ._op_namespaces import custom_namespace
    ns = custom_namespace(name) if not name.startswith("__") else None
    if ns is None:
        raise AttributeError(f"module 'ember.ops' has no attribute {name!r}")
    return ns
