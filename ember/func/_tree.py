"""Flattening nested args (tuples, lists, dicts) to leaves and back, for the func transforms."""

from __future__ import annotations


def tree_flatten(tree):
    """(leaves, spec): the non-container leaves in order and how to rebuild the tree."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for item in tree:
            sub_leaves, sub_spec = tree_flatten(item)
            leaves += sub_leaves
            specs.append((len(sub_leaves), sub_spec))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        keys = list(tree)
        leaves, specs = tree_flatten([tree[k] for k in keys])
        return leaves, (dict, (keys, specs))
    return [tree], None


def tree_unflatten(leaves, spec):
    if spec is None:
        return leaves[0]
    kind, specs = spec
    if kind is dict:
        keys, inner = specs
        values = tree_unflatten(leaves, inner)
        return dict(zip(keys, values, strict=True))
    items, start = [], 0
    for count, sub_spec in specs:
        items.append(tree_unflatten(leaves[start:start + count], sub_spec))
        start += count
    if kind is tuple or kind is list:
        return kind(items)
    return kind(*items)  # namedtuples


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix, tree, name):
    """Expand ``prefix`` (e.g. in_dims) to one value per leaf of ``tree``."""
    if not isinstance(prefix, (tuple, list, dict)):
        return [prefix] * len(tree_flatten(tree)[0])
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            raise ValueError(f"{name}: the structure of {name} does not match the inputs")
        return sum((broadcast_prefix(prefix[k], tree[k], name) for k in tree), [])
    if not isinstance(tree, (tuple, list)) or len(prefix) != len(tree):
        raise ValueError(f"{name}: expected {name} to be a tuple of length {len(tree) if isinstance(tree, (tuple, list)) else 1} matching the inputs; got {prefix!r}")  # noqa: E501
    return sum((broadcast_prefix(p, t, name) for p, t in zip(prefix, tree, strict=True)), [])
