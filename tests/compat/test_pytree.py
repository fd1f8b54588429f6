"""ember.utils._pytree against torch.utils._pytree (x-transformers and torch-einops-utils import
it at import time)."""
from __future__ import annotations

import collections

import pytest

import ember
from ember.utils import _pytree as P

torch = pytest.importorskip("torch")
T = pytest.importorskip("torch.utils._pytree")
pytestmark = pytest.mark.parity

Point = collections.namedtuple("Point", "x y")

TREES = [
    1,
    None,
    [],
    {"b": 1, "a": (2, None, [3])},
    Point(1, [2, (3,)]),
    collections.OrderedDict(b=1, a=[2, 3]),
    collections.defaultdict(int, {"k": (1, 2)}),
    collections.deque([1, [2]], maxlen=4),
    [(), {}, [[]], "text", 2.5],
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_unflatten_and_counts_match_torch(tree):
    leaves, spec = P.tree_flatten(tree)
    t_leaves, t_spec = T.tree_flatten(tree)
    assert leaves == t_leaves
    assert (spec.num_leaves, spec.num_nodes) == (t_spec.num_leaves, t_spec.num_nodes)
    assert spec.is_leaf() == t_spec.is_leaf()
    assert repr(spec) == repr(t_spec)
    rebuilt = P.tree_unflatten([f"v{i}" for i in range(len(leaves))], spec)
    want = T.tree_unflatten([f"v{i}" for i in range(len(leaves))], t_spec)
    assert rebuilt == want and type(rebuilt) is type(want)
    assert P.tree_leaves(tree) == T.tree_leaves(tree)
    assert P.tree_structure(tree) == spec and spec.unflatten(leaves) == tree


def test_tensors_are_leaves_and_map_over_several_trees():
    a = {"w": ember.ones(2), "b": [ember.zeros(1), None]}
    b = {"w": ember.ones(2) * 3, "b": [ember.ones(1), None]}
    out = P.tree_map(lambda x, y: None if x is None else x + y, a, b)
    assert out["w"].tolist() == [4.0, 4.0] and out["b"][0].tolist() == [1.0]
    assert out["b"][1] is None
    # the other trees need the first's structure only down to its leaves (as torch)
    got = P.tree_map(lambda x, y: (x, y), [1, 2], [[1], {"q": 2}])
    assert got == T.tree_map(lambda x, y: (x, y), [1, 2], [[1], {"q": 2}])


def test_map_only_all_any_and_is_leaf_match_torch():
    tree = [1, "a", 2.0, (3,)]
    for sel in (int, (int, float), lambda x: isinstance(x, str)):
        assert P.tree_map_only(sel, lambda x: x * 2, tree) == \
            T.tree_map_only(sel, lambda x: x * 2, tree)
    assert P.tree_all(lambda x: x > 0, [1, (2,)]) is T.tree_all(lambda x: x > 0, [1, (2,)])
    assert P.tree_any(lambda x: x > 1, [1, 2]) is T.tree_any(lambda x: x > 1, [1, 2])
    assert P.tree_all_only(int, lambda x: x > 0, [1, "a"]) is True
    assert P.tree_any_only(str, lambda x: x == "b", [1, "a"]) is False
    tuple_leaf = P.tree_flatten([(1, 2), 3], is_leaf=lambda x: isinstance(x, tuple))[0]
    assert tuple_leaf == T.tree_flatten([(1, 2), 3], is_leaf=lambda x: isinstance(x, tuple))[0]
    seen = []
    assert P.tree_map_(seen.append, {"a": 1, "b": [2]}) == {"a": 1, "b": [2]} and seen == [1, 2]


def test_spec_equality_follows_key_order():
    spec = P.tree_structure({"b": 0, "a": (0, 0)})
    assert spec == P.tree_structure({"b": 5, "a": (6, 7)})
    assert spec != P.tree_structure({"a": 0, "b": (0, 0)})
    assert (T.tree_structure({"b": 0, "a": (0, 0)}) == T.tree_structure({"a": 0, "b": (0, 0)})) \
        is False


def test_register_pytree_node_makes_a_container():
    class Pair:
        def __init__(self, first, second):
            self.first, self.second = first, second

    P.register_pytree_node(Pair, lambda p: ([p.first, p.second], None),
                           lambda c, _: Pair(*c))
    try:
        leaves, spec = P.tree_flatten([Pair(1, Pair(2, 3))])
        assert leaves == [1, 2, 3]
        back = P.tree_map(lambda x: x * 10, [Pair(1, Pair(2, 3))])[0]
        assert (back.first, back.second.first, back.second.second) == (10, 20, 30)
        with pytest.raises(ValueError, match="already registered"):
            P.register_pytree_node(Pair, lambda p: ([], None), lambda c, _: Pair(0, 0))
    finally:
        P.SUPPORTED_NODES.pop(Pair)


def test_errors_match_torch():
    spec = P.tree_structure([1, 2])
    with pytest.raises(ValueError, match="`leaves` has length 3 but the spec refers to a "
                                         "pytree that holds 2 items"):
        P.tree_unflatten([1, 2, 3], spec)
    with pytest.raises(ValueError, match="Node arity mismatch; expected 2, but got 1"):
        P.tree_map(lambda a, b: a, [1, 2], [1])
    with pytest.raises(ValueError, match="Node type mismatch; expected <class 'list'>, but got "
                                         "<class 'tuple'>"):
        P.tree_map(lambda a, b: a, [1, 2], (1, 2))
    with pytest.raises(TypeError, match="tree_map_only: expected a type"):
        P.tree_map_only(3, lambda x: x, [1])
    for fn, args in ((T.tree_map, ([1, 2], [1])), (T.tree_map, ([1, 2], (1, 2)))):
        with pytest.raises(ValueError):
            fn(lambda a, b: a, *args)


def test_import_as_torch_name():
    import importlib
    assert importlib.import_module("ember.utils._pytree").tree_map is P.tree_map
