"""Variable-length sequences for RNNs: PackedSequence, padding and packing helpers.

A PackedSequence stores the time steps of a batch sorted by decreasing length one after the
other: ``data`` holds batch_sizes[0] rows of step 0, then batch_sizes[1] rows of step 1, and
so on, so an RNN processes a shrinking batch without computing on padding. Packing and
unpacking are one gather / one scatter each (differentiable).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..._tensor import Tensor, _make

__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence", "invert_permutation"]


class PackedSequence(namedtuple("PackedSequence",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """Packed batch of variable-length sequences (build it with pack_padded_sequence).

    Attributes:
        data: (sum(lengths), *) rows of all sequences, time step by time step.
        batch_sizes: int64 (max_len,) number of sequences still running at each step.
        sorted_indices / unsorted_indices: the permutation that sorted the batch by decreasing
            length and its inverse (None when the input was already sorted).
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self):
        return self

    def double(self):
        return self.to(dtype=_dtype("float64"))

    def float(self):
        return self.to(dtype=_dtype("float32"))

    def half(self):
        return self.to(dtype=_dtype("float16"))

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def _dtype(name):
    from ... import _dtype as D
    return getattr(D, name)


def invert_permutation(permutation):
    """The inverse of an int64 permutation tensor (None stays None)."""
    if permutation is None:
        return None
    p = permutation._data.astype(np.int64)
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size, dtype=np.int64)
    return _make(inv)


def _lengths_array(lengths, name):
    if isinstance(lengths, Tensor):
        arr = lengths._data
    else:
        arr = np.asarray(lengths)
    if arr.ndim != 1:
        raise RuntimeError(f"{name}: expected 'lengths' to be a 1-D sequence of ints, got shape "
                           f"{arr.shape}.")
    return arr.astype(np.int64)


def _packed_rows(batch_sizes, batch):
    """Flat (t * batch + b) row of every packed element, in packed order."""
    return np.concatenate([t * batch + np.arange(bs, dtype=np.int64)
                           for t, bs in enumerate(batch_sizes)]) if len(batch_sizes) \
        else np.zeros(0, np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded (T, B, *) (or (B, T, *) with batch_first) batch of sequences.

    Args:
        lengths: the length of each sequence (list or 1-D tensor, all > 0).
        enforce_sorted: require lengths in decreasing order; with False the batch is sorted
            here and the permutation is kept so that pad_packed_sequence can undo it.

    Example:
        >>> import ember
        >>> p = pack_padded_sequence(ember.ones(3, 2, 1), [3, 1])
        >>> p.batch_sizes
        tensor([2, 1, 1])
    """
    name = "pack_padded_sequence"
    lens = _lengths_array(lengths, name)
    if input.ndim < 2:
        # (IndexError as torch's: the batch dim 1 is out of range)
        raise IndexError(f"{name}: expected input of at least 2 dims (T, B, *), got shape "
                         f"{tuple(input.shape)}.")
    x = input.transpose(0, 1) if batch_first else input
    total, batch = x.shape[0], x.shape[1]
    if lens.size != batch:
        raise RuntimeError(f"{name}: Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lens.size} (batch_size={batch})")
    if lens.size and lens.min() <= 0:
        raise RuntimeError(f"{name}: Length of all samples has to be greater than 0, but found "
                           f"an element in 'lengths' that is <= 0 (lengths={lens.tolist()})")
    if lens.size and lens.max() > total:
        raise RuntimeError(f"{name}: a length ({lens.max()}) exceeds the padded sequence length "
                           f"{total} of input {tuple(input.shape)}.")
    sorted_indices = None
    if enforce_sorted:
        if np.any(np.diff(lens) > 0):
            raise RuntimeError(
                f"{name}: `lengths` array must be sorted in decreasing order when "
                "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this requirement if you "
                "do not need ONNX exportability.")
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = _make(order.astype(np.int64))
        lens = lens[order]
        x = x.index_select(1, sorted_indices)
    max_len = int(lens[0]) if lens.size else 0
    batch_sizes = np.array([(lens > t).sum() for t in range(max_len)], dtype=np.int64)
    rows = _packed_rows(batch_sizes, batch)
    flat = x.reshape(total * batch, *x.shape[2:])
    data = flat.index_select(0, _make(rows))
    return PackedSequence(data, _make(batch_sizes), sorted_indices)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: (padded (T, B, *), lengths int64 (B,)).

    Example:
        >>> import ember
        >>> x, lens = pad_packed_sequence(pack_sequence([ember.ones(2), ember.ones(1)]))
        >>> x.shape, lens
        (ember.Size([2, 2]), tensor([2, 1]))
    """
    name = "pad_packed_sequence"
    data, bs = sequence.data, sequence.batch_sizes._data.astype(np.int64)
    max_len = bs.size
    batch = int(bs[0]) if bs.size else 0
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(f"{name}: Expected total_length to be at least the length of the "
                             f"longest sequence in input, but got total_length={total_length} "
                             f"and max sequence length being {max_len}")
        max_len = int(total_length)
    rows = _packed_rows(bs, batch)
    feat = tuple(data.shape[1:])
    base = np.full((max_len * batch,) + feat, padding_value, dtype=data._data.dtype)
    base[rows] = 0
    out = _make(base).index_add(0, _make(rows), data)
    out = out.reshape(max_len, batch, *feat)
    lengths = np.array([(bs > b).sum() for b in range(batch)], dtype=np.int64)
    if sequence.unsorted_indices is not None:
        out = out.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices._data]
    if batch_first:
        out = out.transpose(0, 1)
    return out, _make(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shape (L_i, *) into (max L, B, *) (or (B, max L, *)), padding the end.

    Example:
        >>> import ember
        >>> pad_sequence([ember.ones(2), ember.ones(1)], batch_first=True)
        tensor([[1., 1.],
                [1., 0.]])
    """
    from ..._tensor import Tensor as _T
    from ...ops.join import stack
    from ..functional import pad
    if isinstance(sequences, _T):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"pad_sequence: Expected padding_side to be one of left or right, "
                           f"but got {padding_side}.")
    trailing = tuple(sequences[0].shape[1:])
    for i, s in enumerate(sequences):
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: all sequences must have the same trailing "
                               f"dimensions; sequence 0 has {trailing}, sequence {i} has "
                               f"{tuple(s.shape[1:])}.")
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = max_len - s.shape[0]
        if extra == 0:
            padded.append(s)
            continue
        amounts = [0, 0] * (s.ndim - 1) + ([extra, 0] if padding_side == "left" else [0, extra])
        padded.append(pad(s, amounts, value=padding_value))
    return stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of (L_i, *) tensors; equivalent to pad_sequence + pack_padded_sequence.

    Example:
        >>> import ember
        >>> pack_sequence([ember.tensor([1., 2.]), ember.tensor([3.])]).data
        tensor([1., 3., 2.])
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into a list of tensors of the given lengths.

    Example:
        >>> import ember
        >>> [t.shape[0] for t in unpad_sequence(ember.zeros(3, 2), [3, 1])]
        [3, 1]
    """
    lens = _lengths_array(lengths, "unpad_sequence")
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :int(n)] for i, n in enumerate(lens)]


def unpack_sequence(packed_sequences):
    """Unpack a PackedSequence into a list of tensors (original order).

    Example:
        >>> import ember
        >>> [t.tolist() for t in unpack_sequence(pack_sequence([ember.ones(2), ember.ones(1)]))]
        [[1.0, 1.0], [1.0]]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
