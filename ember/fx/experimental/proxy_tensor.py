"""``make_fx``: a GraphModule recorded by running a function once on the given inputs.

NOTE [make_fx by recording]
torch's make_fx runs the function with tensors whose every ATen call is recorded. ember records
one eager run with the same recorder ``ember.compile`` uses (every call of a registered op, see
``ember/_dynamo/capture.py``) and turns it into a GraphModule (``ember/_dynamo/graph.py``): one
``call_function`` node per op call, whose target runs that ember op (so the module is
differentiable and runs anywhere ember does), parameters and other tensors the function reads
as ``get_attr`` attributes (read live), and one placeholder per argument leaf, named after the
function's parameters (``x_1``) as torch names them. As in torch's "real" mode, Python control
flow and ``item()`` values are specialised to this run; "fake" and "symbolic" record the same way
(ember has no fake tensors: the function runs on the real inputs, and the graph is specialised
to their shapes). ``decomposition_table`` and the other options are accepted and unused.
"""
from __future__ import annotations

import inspect

from ..._tensor import Tensor

__all__ = ["make_fx"]

_MODES = ("real", "fake", "symbolic")


def make_fx(f, decomposition_table=None, tracing_mode="real", _allow_non_fake_inputs=False, *,
            pre_dispatch=False, record_module_stack=False, _allow_fake_constant=False,
            _error_on_data_dependent_ops=True, record_stack_traces=False,
            proxy_module_inputs=False, _disable_torch_fn_metadata_mode=False):
    """``make_fx(f)(*args)``: the ops ``f(*args)`` runs, as an ``ember.fx.GraphModule``.

    Example:
        >>> import ember
        >>> from ember.fx.experimental.proxy_tensor import make_fx
        >>> gm = make_fx(lambda x: (x * 2).relu())(ember.tensor([-1.0, 3.0]))
        >>> gm(ember.tensor([4.0, -5.0]))
        tensor([8., 0.])

    Differs from torch: the nodes call ember's ops (``linear``, ``relu``), not ATen overloads,
    and "fake"/"symbolic" tracing runs ``f`` on the real inputs (NOTE [make_fx by recording]).
    """
    if tracing_mode not in _MODES:
        raise AssertionError(f"make_fx: unknown tracing_mode {tracing_mode!r}; expected one of "
                             f"{list(_MODES)}.")

    def wrapped(*args):
        from ..._dynamo import eval_frame
        from ..._dynamo.capture import flatten
        from ..._dynamo.graph import to_graph_module
        from ..._dynamo.trace import capture_call
        leaves = []
        flatten(args, leaves)
        eval_frame._local.depth = getattr(eval_frame._local, "depth", 0) + 1
        try:
            _, cap = capture_call(f, args, {}, fullgraph=False)
        finally:
            eval_frame._local.depth -= 1
        gm, _ = to_graph_module(cap, _placeholders(f, args, leaves), nested_output=True)
        return gm

    return wrapped


def _placeholders(f, args, leaves):
    """(name, input tensor index) per argument leaf; names as torch's make_fx gives them."""
    names = None
    try:
        params = list(inspect.signature(f).parameters.values())
        if len(leaves) == len(args) and len(params) >= len(args) and all(
                p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                for p in params[:len(args)]):
            names = [f"{p.name}_1" for p in params[:len(args)]]
    except (TypeError, ValueError):
        pass
    if names is None:
        names = [f"arg{i}_1" for i in range(len(leaves))]
    out, k = [], 0
    for name, leaf in zip(names, leaves, strict=True):
        out.append((name, k if isinstance(leaf, Tensor) else None))
        k += isinstance(leaf, Tensor)
    return out
