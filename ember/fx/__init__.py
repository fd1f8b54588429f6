"""``ember.fx``: capture a Module or function as a Graph, transform it, run it as Python.

The API follows torch.fx: ``symbolic_trace`` (or a custom ``Tracer``) records ``forward`` into a
:class:`Graph` of :class:`Node` objects; :class:`GraphModule` turns a Graph back into a Module
with generated ``code``; :class:`Interpreter` and :class:`Transformer` run or rewrite a graph node
by node; ``subgraph_rewriter.replace_pattern`` swaps matching subgraphs; ``passes.shape_prop``
records shapes and dtypes.

Differs from torch: ember has no ``__torch_function__``; calls of ember's public functions are
recorded while a tracer is active (see NOTE [Function patching while tracing] in
``ember/fx/_patching.py``), so functions imported by name before tracing are not seen — use
``ember.fx.wrap``. Generated code names functions ``ember.<name>``.
"""
from __future__ import annotations

from . import node, passes, proxy, subgraph_rewriter  # noqa: F401
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "Tracer", "wrap", "PH", "Graph", "GraphModule", "Node", "Proxy",
           "Interpreter", "Transformer", "map_arg", "replace_pattern", "has_side_effect"]


def has_side_effect(fn):
    """Mark ``fn`` so that dead-code elimination keeps its calls."""
    from .node import _side_effectful_functions
    _side_effectful_functions.add(fn)
    return fn
