"""``replace_pattern``: find every copy of a pattern subgraph and substitute a replacement."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .graph import Graph
from .node import Node, map_arg

__all__ = ["replace_pattern", "Match"]


class Match(NamedTuple):
    """One occurrence: the pattern's anchor (output) node and pattern node -> graph node map."""

    anchor: Node
    nodes_map: dict


def _pattern_graph(p) -> Graph:
    from ._symbolic_trace import symbolic_trace
    from .graph_module import GraphModule
    if isinstance(p, GraphModule):
        return p.graph
    if isinstance(p, Graph):
        return p
    return symbolic_trace(p).graph


def _match(pn: Node, gn: Node, m: dict, inputs: set) -> bool:
    """Does graph node ``gn`` match pattern node ``pn`` (recursively over inputs)?"""
    if pn in m:
        return m[pn] is gn
    if pn.op == "placeholder":
        # a pattern input matches any value, but consistently
        if gn in m.values():
            return False
        m[pn] = gn
        return True
    if pn.op != gn.op or pn.target != gn.target:
        return False
    if pn.op == "get_attr":
        m[pn] = gn
        return True
    if len(pn.args) != len(gn.args) or set(pn.kwargs) != set(gn.kwargs):
        return False
    m[pn] = gn
    pairs = list(zip(pn.args, gn.args, strict=True))
    pairs += [(pn.kwargs[k], gn.kwargs[k]) for k in pn.kwargs]
    return all(_match_arg(a, b, m, inputs) for a, b in pairs)


def _match_arg(a: Any, b: Any, m: dict, inputs: set) -> bool:
    if isinstance(a, Node):
        return isinstance(b, Node) and _match(a, b, m, inputs)
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and \
            all(_match_arg(x, y, m, inputs) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and \
            all(_match_arg(a[k], b[k], m, inputs) for k in a)
    return not isinstance(b, Node) and a == b


def _is_self_contained(m: dict, pattern: Graph, anchor_out: Node) -> bool:
    """Inner matched nodes must not be used outside the match (the rewrite would drop them)."""
    inner = {gn for pn, gn in m.items() if pn.op != "placeholder"}
    for gn in inner:
        if gn is anchor_out:
            continue
        if any(u not in inner for u in gn.users):
            return False
    return True


def replace_pattern(gm, pattern: Callable | Graph, replacement: Callable | Graph) -> list[Match]:
    """Replace every non-overlapping match of ``pattern`` in ``gm.graph`` by ``replacement``.

    Both are functions (traced symbolically) or GraphModules with the same inputs; a single
    output is supported. Returns the matches, then recompiles ``gm``.

    Example:
        >>> import ember
        >>> from ember.fx import symbolic_trace, subgraph_rewriter
        >>> gm = symbolic_trace(lambda x: ember.neg(ember.neg(x)) * 2)
        >>> _ = subgraph_rewriter.replace_pattern(gm, lambda a: ember.neg(ember.neg(a)),
        ...                                       lambda a: a)
        >>> [n.op for n in gm.graph.nodes]
        ['placeholder', 'call_function', 'output']
    """
    pg = _pattern_graph(pattern)
    rg = _pattern_graph(replacement)
    p_out = [n for n in pg.nodes if n.op == "output"][0]
    p_anchor = p_out.args[0]
    if not isinstance(p_anchor, Node):
        raise ValueError("replace_pattern: the pattern must return a single value.")
    p_inputs = [n for n in pg.nodes if n.op == "placeholder"]
    graph = gm.graph
    matches: list[Match] = []
    used: set = set()
    for gn in list(graph.nodes):
        if gn in used or gn._erased:
            continue
        m: dict = {}
        if not _match(p_anchor, gn, m, set()):
            continue
        inner = {g for p, g in m.items() if p.op != "placeholder"}
        if inner & used or not _is_self_contained(m, pg, gn):
            continue
        used |= inner
        matches.append(Match(gn, dict(m)))
    for match in matches:
        _rewrite(graph, match, p_inputs, rg)
    graph.eliminate_dead_code()
    gm.recompile()
    return matches


def _rewrite(graph: Graph, match: Match, p_inputs: list, rg: Graph) -> None:
    anchor = match.anchor
    val_map: dict = {}
    r_inputs = [n for n in rg.nodes if n.op == "placeholder"]
    if len(r_inputs) != len(p_inputs):
        raise ValueError(f"replace_pattern: pattern has {len(p_inputs)} inputs but the "
                         f"replacement has {len(r_inputs)}; expected the same number.")
    for rp, pp in zip(r_inputs, p_inputs, strict=True):
        val_map[rp] = match.nodes_map[pp]
    with graph.inserting_before(anchor):
        for rn in rg.nodes:
            if rn.op == "placeholder":
                continue
            if rn.op == "output":
                new_out = map_arg(rn.args[0], lambda n: val_map[n])
                break
            if rn.op in ("get_attr", "call_module"):
                _copy_replacement_attr(graph, rg, rn)
            val_map[rn] = graph.node_copy(rn, lambda n: val_map[n])
    anchor.replace_all_uses_with(new_out)
    for pn, gn in match.nodes_map.items():
        if pn.op != "placeholder" and not gn.users and not gn._erased:
            graph.erase_node(gn)


def _copy_replacement_attr(graph: Graph, rg: Graph, rn: Node) -> None:
    owner = rg.owning_module
    gm = graph.owning_module
    if owner is None or gm is None or hasattr(gm, rn.target.split(".")[0]):
        return
    from .graph_module import _copy_attr
    _copy_attr(owner, gm, rn.target)
