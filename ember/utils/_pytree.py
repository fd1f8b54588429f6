"""Nested containers as leaves plus a structure (``torch.utils._pytree``).

Private in torch, yet libraries import it (x-transformers, torch-einops-utils, transformers), so
the commonly used part is served: tree_flatten / tree_unflatten / tree_map and friends over
tuples, lists, dicts (insertion order), namedtuples, OrderedDict, defaultdict and deque, and
``register_pytree_node`` for other containers. Anything else, None included, is a leaf.
Of key paths, the key records (MappingKey, SequenceKey, GetAttrKey) and dict's
``_dict_flatten_with_keys`` are served (transformers registers its outputs with them, diffusers
with ``_dict_flatten`` / ``_dict_unflatten``); the
``*_with_path`` functions and the spec's JSON serialization are not.
"""
from __future__ import annotations

import dataclasses
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any

__all__ = ["GetAttrKey", "LeafSpec", "MappingKey", "SequenceKey", "TreeSpec",
           "register_pytree_node", "tree_all", "tree_all_only",
           "tree_any", "tree_any_only", "tree_flatten", "tree_is_leaf", "tree_iter",
           "tree_leaves", "tree_map", "tree_map_", "tree_map_only", "tree_map_only_",
           "tree_structure", "tree_unflatten"]

# NOTE [Pytree node types]
# SUPPORTED_NODES maps a node type to its NodeDef: flatten_fn(node) -> (children, context) and
# unflatten_fn(children, context) -> node. Namedtuples of every class share one entry, under
# the key `collections.namedtuple` (their context is the class), as torch's do: Lightning walks
# trees itself with `_get_node_type` and `SUPPORTED_NODES[...].flatten_fn`.
NodeDef = namedtuple("NodeDef", "type flatten_fn unflatten_fn flatten_with_keys_fn")
SUPPORTED_NODES: dict = {}
PyTree = Any  # the annotation torch's signatures use


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Make instances of ``cls`` containers: ``flatten_fn(node) -> (children, context)`` and
    ``unflatten_fn(children, context) -> node``. The serialization and key-path arguments are
    accepted and not used."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"register_pytree_node: {cls} is already registered as a pytree node")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


register_pytree_node(tuple, lambda t: (list(t), None), lambda c, _: tuple(c))
register_pytree_node(list, lambda t: (list(t), None), lambda c, _: list(c))
register_pytree_node(namedtuple, lambda t: (list(t), type(t)), lambda c, cls: cls(*c))


def _dict_flatten(d):
    """A dict's children (its values) and context (its keys, in order); libraries register
    their dict-like outputs with it (diffusers' BaseOutput)."""
    return list(d.values()), list(d)


def _dict_unflatten(values, context):
    """The dict of keys ``context`` and ``values``: ``_dict_flatten``'s inverse."""
    return dict(zip(context, values, strict=True))


register_pytree_node(dict, _dict_flatten, _dict_unflatten)
register_pytree_node(OrderedDict, lambda d: (list(d.values()), list(d)),
                     lambda c, keys: OrderedDict(zip(keys, c, strict=True)))
register_pytree_node(defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d)]),
                     lambda c, ctx: defaultdict(ctx[0], zip(ctx[1], c, strict=True)))
register_pytree_node(deque, lambda d: (list(d), d.maxlen), lambda c, n: deque(c, maxlen=n))


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """One step of a key path: the item `key` of a mapping (str: ``[key!r]``)."""

    key: object

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """One step of a key path: position `idx` of a sequence (str: ``[idx]``)."""

    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """One step of a key path: the attribute `name` (str: ``.name``)."""

    name: str

    def __str__(self):
        return f".{self.name}"


def _dict_flatten_with_keys(d):
    """A dict's children with their MappingKeys, and its context (the keys): the
    ``flatten_with_keys_fn`` libraries pass to register_pytree_node for dict-like outputs."""
    return [(MappingKey(k), v) for k, v in d.items()], list(d)


def _is_namedtuple(node) -> bool:
    return isinstance(node, tuple) and hasattr(type(node), "_fields")


def _get_node_type(node):
    """The key of ``node``'s entry in SUPPORTED_NODES if it has one: ``collections.namedtuple``
    for a namedtuple, else its type."""
    return namedtuple if _is_namedtuple(node) else type(node)


def _node_type(node):
    """The registered type ``node`` flattens as, or None for a leaf."""
    kind = _get_node_type(node)
    return kind if kind in SUPPORTED_NODES else None


def _flatten_node(kind, node):
    return SUPPORTED_NODES[kind].flatten_fn(node)


class TreeSpec:
    """How to rebuild a tree from its leaves: the node's type, its context (dict keys, a
    namedtuple's class, ...) and one spec per child. A leaf's spec is ``LeafSpec()``."""

    def __init__(self, type, context, children_specs):
        self.type, self.context, self._children = type, context, list(children_specs)
        self.num_leaves = 1 if type is None else sum(c.num_leaves for c in self._children)
        self.num_nodes = 1 + sum(c.num_nodes for c in self._children)

    @property
    def num_children(self):
        return len(self._children)

    @property
    def children_specs(self):
        return list(self._children)

    def child(self, index):
        return self._children[index]

    def children(self):
        return list(self._children)

    def is_leaf(self) -> bool:
        return self.type is None

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)

    def flatten_up_to(self, tree):
        """``tree``'s subtrees at this spec's leaves (``tree`` must have this structure down
        to them)."""
        if self.is_leaf():
            return [tree]
        kind = _node_type(tree)
        if kind != self.type:
            raise ValueError(f"Node type mismatch; expected {self.type}, but got "
                             f"{type(tree)}.")
        children, context = _flatten_node(kind, tree)
        if len(children) != len(self._children):
            raise ValueError(f"Node arity mismatch; expected {len(self._children)}, but got "
                             f"{len(children)}.")
        if context != self.context and kind in (dict, OrderedDict, defaultdict):
            raise ValueError(f"Node context mismatch for {self._type_name()}: expected keys "
                             f"{self.context}, but got {context}.")
        return [sub for child, spec in zip(children, self._children)
                for sub in spec.flatten_up_to(child)]

    def _type_name(self):
        return self.type if isinstance(self.type, str) else self.type.__name__

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.type == other.type
                and self.context == other.context and self._children == other._children)

    def __hash__(self):
        return hash((self.type if not isinstance(self.type, type) else id(self.type),
                     self.num_nodes, self.num_leaves))

    def __repr__(self):
        if self.is_leaf():
            return "*"
        inner = ",\n  ".join(repr(c).replace("\n", "\n  ") for c in self._children)
        return f"TreeSpec({self._type_name()}, {self.context!r}, [{inner}])"


def LeafSpec() -> TreeSpec:   # a class in torch
    return TreeSpec(None, None, [])


def _spec_and_leaves(tree, is_leaf, leaves):
    kind = None if is_leaf is not None and is_leaf(tree) else _node_type(tree)
    if kind is None:
        leaves.append(tree)
        return LeafSpec()
    children, context = _flatten_node(kind, tree)
    return TreeSpec(kind, context, [_spec_and_leaves(c, is_leaf, leaves) for c in children])


def tree_flatten(tree, is_leaf=None):
    """``(leaves, spec)``: the leaves in order and the structure that holds them."""
    leaves = []
    spec = _spec_and_leaves(tree, is_leaf, leaves)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    """The tree of ``treespec``'s structure holding ``leaves`` in order."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): treespec must be a TreeSpec; got "
                        f"{type(treespec).__name__}")
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(f"tree_unflatten(leaves, treespec): `leaves` has length {len(leaves)} "
                         f"but the spec refers to a pytree that holds {treespec.num_leaves} "
                         f"items ({treespec}).")
    it = iter(leaves)

    def build(spec):
        if spec.is_leaf():
            return next(it)
        children = [build(c) for c in spec._children]
        return SUPPORTED_NODES[spec.type].unflatten_fn(children, spec.context)

    return build(treespec)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_iter(tree, is_leaf=None):
    return iter(tree_leaves(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_is_leaf(tree, is_leaf=None) -> bool:
    return (is_leaf is not None and is_leaf(tree)) or _node_type(tree) is None


def tree_map(func, tree, *rests, is_leaf=None):
    """``tree``'s structure with ``func(leaf, *same leaf of each of rests)`` at each leaf; each
    of ``rests`` must have ``tree``'s structure down to those leaves."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call ``func`` on the leaves (as tree_map) for its effect; return ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    for xs in zip(leaves, *[spec.flatten_up_to(r) for r in rests]):
        func(*xs)
    return tree


def _only(type_or_types_or_pred, func):
    """``func`` applied to the leaves the selector accepts; other leaves pass through."""
    if isinstance(type_or_types_or_pred, (type, tuple)):
        def accept(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        accept = type_or_types_or_pred
    else:
        raise TypeError(f"tree_map_only: expected a type, a tuple of types or a predicate; got "
                        f"{type_or_types_or_pred!r}")
    return lambda x: func(x) if accept(x) else x


def tree_map_only(type_or_types_or_pred, func, tree, is_leaf=None):
    return tree_map(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, func, tree, is_leaf=None):
    return tree_map_(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None) -> bool:
    return all(map(pred, tree_leaves(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None) -> bool:
    return any(map(pred, tree_leaves(tree, is_leaf)))


def tree_all_only(type_or_types, pred, tree, is_leaf=None) -> bool:
    return all(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, pred, tree, is_leaf=None) -> bool:
    return any(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, type_or_types))
