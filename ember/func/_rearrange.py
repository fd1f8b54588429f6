"""``rearrange``: einops-style axis reordering by a readable pattern (torch.func.rearrange).

``"b h w c -> b c (h w)"`` names the input axes on the left and lists them in the output order
on the right; parentheses group axes that are merged (on the right) or split (on the left, with
all but one length given as keyword arguments); ``1`` / ``()`` are unit axes, ``...`` stands
for the axes not named. It is a reshape, a permute and a reshape, so gradients come for free.
"""
from __future__ import annotations

import math
import re

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_ELLIPSIS = "\u2026"  # one token for "...", so it can sit in a group like a name


def _parse_side(text):
    """[[axis, ...] per position]; a group is one position holding several axes."""
    text = text.replace("...", f" {_ELLIPSIS} ").replace("(", " ( ").replace(")", " ) ")
    groups, current = [], None
    seen = set()
    for token in text.split():
        if token == "(":
            if current is not None:
                raise ValueError("rearrange: axis composition is one-level (brackets inside "
                                 "brackets are not allowed)")
            current = []
        elif token == ")":
            if current is None:
                raise ValueError("rearrange: brackets are not balanced")
            groups.append(current)
            current = None
        else:
            if token == "1":
                axis = None  # a unit axis: occupies a position, has no name
            elif token == _ELLIPSIS or _NAME.match(token):
                axis = token
                if axis in seen:
                    raise ValueError(f"Indexing expression contains duplicate dimension "
                                     f"'{axis}'")
                seen.add(axis)
            else:
                raise ValueError(f"rearrange: invalid axis identifier {token!r}")
            if current is None:
                groups.append([] if axis is None else [axis])
            elif axis is not None:
                current.append(axis)
    if current is not None:
        raise ValueError("rearrange: brackets are not balanced")
    return groups, seen


def rearrange(tensor, pattern: str, **axes_lengths):
    """Reorder, merge, split, add or remove axes of ``tensor`` (or of the stack of a list of
    tensors) as ``pattern`` says.

    Example:
        >>> import ember
        >>> x = ember.arange(24).reshape(2, 3, 4)
        >>> rearrange(x, "a b c -> c (a b)").shape
        ember.Size([4, 6])
        >>> rearrange(x, "a (b1 b2) c -> b1 a b2 c", b1=1).shape
        ember.Size([1, 2, 3, 4])
    """
    import ember
    if isinstance(tensor, (list, tuple)):
        tensor = ember.stack(list(tensor))
    if "->" not in pattern:
        raise ValueError(f"rearrange: pattern must contain '->'; got {pattern!r}")
    left_text, right_text = pattern.split("->")
    left, left_names = _parse_side(left_text)
    right, right_names = _parse_side(right_text)
    if left_names != right_names:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on "
                         f"both): {left_names ^ right_names}")
    unknown = set(axes_lengths) - left_names
    if unknown:
        raise ValueError(f"rearrange: axes {sorted(unknown)} given as lengths are not in the "
                         f"pattern")
    has_ellipsis = _ELLIPSIS in left_names
    fixed = len(left) - (1 if has_ellipsis else 0)
    if (tensor.dim() != len(left)) if not has_ellipsis else (tensor.dim() < fixed):
        raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the "
                         f"number of dimensions in the tensor ({tensor.dim()})")
    # the lengths of every named axis, the ellipsis standing for several
    lengths, flat_left = dict(axes_lengths), []
    ell_dims = tensor.dim() - fixed
    shape = list(tensor.shape)
    pos = 0
    for group in left:
        if group == [_ELLIPSIS]:
            ell_shape = shape[pos:pos + ell_dims]
            pos += ell_dims
            flat_left.append(_ELLIPSIS)
            continue
        size = shape[pos]
        pos += 1
        if not group:
            if size != 1:
                raise ValueError(f"rearrange: a unit axis in the pattern has length {size}")
            continue
        missing = [a for a in group if a not in lengths]
        known = math.prod(lengths[a] for a in group if a in lengths)
        if len(missing) > 1:
            raise ValueError(f"rearrange: could not infer sizes for {missing}")
        if missing:
            if known == 0 or size % known:
                raise ValueError(f"rearrange: can't divide axis of length {size} into chunks "
                                 f"of {known}")
            lengths[missing[0]] = size // known
        elif known != size:
            raise ValueError(f"rearrange: shape mismatch, {known} != {size}")
        flat_left.extend(group)

    def expand(axis):
        return ell_shape if axis == _ELLIPSIS else [lengths[axis]]

    unpacked = [n for a in flat_left for n in expand(a)]
    x = tensor.reshape(unpacked) if unpacked or tensor.dim() else tensor
    # positions of each axis in the unpacked tensor
    where, at = {}, 0
    for a in flat_left:
        width = len(expand(a))
        where[a] = list(range(at, at + width))
        at += width
    flat_right = [a for group in right for a in group]
    x = x.permute([i for a in flat_right for i in where[a]]) if flat_right else x
    out_shape = []
    for group in right:
        if group == [_ELLIPSIS]:
            out_shape.extend(ell_shape)
        else:
            out_shape.append(math.prod(n for a in group for n in expand(a)))
    return x.reshape(out_shape)
