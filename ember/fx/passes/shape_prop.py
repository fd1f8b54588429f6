"""``ShapeProp``: run a GraphModule on example inputs and store what every node produced."""
from __future__ import annotations

from typing import Any, NamedTuple

from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    """What ShapeProp stores in ``node.meta['tensor_meta']`` for a tensor value."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract(t) -> TensorMetadata:
    import ember
    return TensorMetadata(ember.Size(t.shape), t.dtype, t.requires_grad, tuple(t.stride()),
                          None, False, {})


class ShapeProp(Interpreter):
    """Record ``tensor_meta`` (shape, dtype, requires_grad, stride) and ``type`` on every node.

    Example:
        >>> import ember
        >>> from ember.fx import symbolic_trace
        >>> from ember.fx.passes.shape_prop import ShapeProp
        >>> gm = symbolic_trace(ember.nn.Linear(3, 2))
        >>> _ = ShapeProp(gm).propagate(ember.ones(4, 3))
        >>> [tuple(n.meta['tensor_meta'].shape) for n in gm.graph.nodes]
        [(4, 3), (2, 3), (2,), (4, 2), (4, 2)]
    """

    def run_node(self, n: Node) -> Any:
        import ember
        result = super().run_node(n)
        found = []

        def meta(x):
            if isinstance(x, ember.Tensor):
                found.append(True)
                return _extract(x)
            return x
        tensor_meta = map_aggregate(result, meta)
        if found:
            n.meta["tensor_meta"] = tensor_meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args) -> Any:
        """Run the module on ``args`` (recording metadata) and return its result."""
        return super().run(*args)
