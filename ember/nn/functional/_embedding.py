"""Embedding lookups of ``ember.nn.functional``: embedding, embedding_bag, one_hot."""
from __future__ import annotations

import warnings

import numpy as np

from ..._tensor import Tensor, _make
from ...autograd.function import guard_inputs
from ...autograd.grad_mode import no_grad
from ...ops.nn.embedding import Embedding
from ._utils import _check_tensor

__all__ = ["embedding", "embedding_bag", "one_hot"]


def _check_indices(name, input, num):
    if not isinstance(input, Tensor) or input._data.dtype not in (np.int64, np.int32):
        got = input.type() if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"{name}: Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {got} instead")
    a = input._data
    if not a.size:
        return a.astype(np.int64, copy=False)
    if a.size <= 16 and type(a) is np.ndarray:
        # a decoding step's token: min/max of a short list beat two reductions (vmap's batched
        # arrays take the reductions: their values cannot be read as a list)
        values = a.ravel().tolist()
        low, high = min(values), max(values)
    else:
        low, high = a.min(), a.max()
    if low < 0 or high >= num:
        bad = high if high >= num else low
        raise IndexError(f"{name}: index out of range in self: index {bad} for a weight with "
                         f"{num} rows (num_embeddings).")
    return a.astype(np.int64, copy=False)


def _renorm_rows(weight, idx, max_norm, norm_type):
    """Rescale (in place, without autograd) the referenced rows whose norm exceeds
    max_norm."""
    rows = np.unique(idx)
    w = weight._data[rows].astype(np.float64)
    norms = np.linalg.norm(w, ord=norm_type, axis=1)
    big = norms > max_norm
    if big.any():
        scale = (max_norm / (norms[big] + 1e-7))[:, None]
        with no_grad():
            weight[_make(rows[big])] = _make((w[big] * scale).astype(weight._data.dtype))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Look up rows of ``weight`` by integer ``input``: output shape input.shape + (dim,).

    ``padding_idx`` rows get no gradient; ``max_norm`` renormalizes the looked-up rows of
    weight in place first. ``sparse`` gradients are returned dense.
    """
    _check_tensor("embedding", weight, "weight")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: weight must be 2-D, got shape {tuple(weight.shape)}")
    num = weight.shape[0]
    idx = _check_indices("embedding", input, num)
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError(f"embedding: Padding_idx must be within num_embeddings; got "
                             f"{padding_idx} for {num} embeddings")
        padding_idx = padding_idx % num
    if max_norm is not None and idx.size:
        _renorm_rows(weight, idx, max_norm, norm_type)
    # int32 indices convert through an op: a copy made here in NumPy would be captured by
    # ember.compile as a constant and reused for every later batch (NOTE [Arrays computed
    # outside the registry] in _dynamo/capture.py)
    indices = input if input._data.dtype == np.int64 else input.long()
    # see NOTE [Guarded inputs]: the backward scatters into the rows named by input's values
    return guard_inputs(Embedding.apply(weight, indices, padding_idx, bool(scale_grad_by_freq)),
                        input)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sum, mean or max of embedding rows over bags, without materializing per-bag lists.

    input is 2-D (B, L): B bags of L indices; or 1-D with ``offsets`` giving where each bag
    starts. Empty bags give zeros. ``per_sample_weights`` (mode 'sum') scales each row.
    The old argument order (weight, input) is still read, with a warning, as torch does.
    """
    if (isinstance(weight, Tensor) and isinstance(input, Tensor)
            and weight._data.dtype == np.int64 and input.is_floating_point()):
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        input, weight = weight, input
    _check_tensor("embedding_bag", weight, "weight")
    num, dim = weight.shape
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    idx = _check_indices("embedding_bag", input, num)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: if input is 2D, then offsets has to be None, as "
                             "input is treated is a mini-batch of fixed length sequences.")
        n_bags, length = idx.shape
        bag_of = np.repeat(np.arange(n_bags), length)
        flat = idx.reshape(-1)
        psw = None if per_sample_weights is None else per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("embedding_bag: offsets has to be a 1D Tensor but got None")
        off = np.asarray(offsets._data if isinstance(offsets, Tensor) else offsets, np.int64)
        if off.ndim != 1:
            raise ValueError("embedding_bag: offsets has to be a 1D Tensor")
        if off.size and off[0] != 0:
            raise RuntimeError("embedding_bag: offsets[0] has to be 0, i.e., the first sequence "
                               f"in the mini-batch has to start from position 0. However, got "
                               f"{off[0]}")
        ends = np.append(off[1:], idx.size) if not include_last_offset else off[1:]
        starts = off if not include_last_offset else off[:-1]
        n_bags = len(starts)
        if (np.diff(off) < 0).any() or (off > idx.size).any():
            raise RuntimeError("embedding_bag: offsets must be non-decreasing and within input")
        bag_of = np.repeat(np.arange(n_bags), ends - starts)
        flat = idx[: len(bag_of)]
        psw = per_sample_weights
    else:
        raise ValueError(f"embedding_bag: input has to be 1D or 2D Tensor, but got Tensor of "
                         f"dimension {input.ndim}")
    keep = np.ones(flat.shape, bool)
    if padding_idx is not None:
        padding_idx = padding_idx % num
        keep = flat != padding_idx
    if max_norm is not None and flat.size:
        _renorm_rows(weight, flat, max_norm, norm_type)
    # the looked-up indices and bag ids are computed here in NumPy from the call's data
    # (offsets, padding, int32 indices); made through _make, they mark the call for
    # ember.compile as data-dependent (it runs eagerly) instead of being captured as constants
    # a replay would reuse for every batch (NOTE [Arrays computed outside the registry] in
    # _dynamo/capture.py)
    rows = guard_inputs(Embedding.apply(weight, _make(flat[keep]), None,
                                        bool(scale_grad_by_freq)), input, offsets)
    bag_kept = bag_of[keep]
    if psw is not None:
        rows = rows * psw[_make(np.nonzero(keep)[0])].unsqueeze(1)
    counts = np.bincount(bag_kept, minlength=n_bags)
    if mode == "max":
        return _bag_max(rows, bag_kept, n_bags, dim, counts)
    out = _make(np.zeros((n_bags, dim), weight._data.dtype)).index_add(0, _make(bag_kept), rows)
    if mode == "mean":
        out = out / _make(np.maximum(counts, 1).astype(weight._data.dtype).reshape(-1, 1))
    return out


def _bag_max(rows, bag_of, n_bags, dim, counts):
    """Per-bag elementwise max: pick, for each (bag, feature), the row holding the max."""
    vals = rows._data
    order = np.argsort(bag_of, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    which = np.zeros((n_bags, dim), np.int64)
    nonempty = counts > 0
    if vals.size:
        sorted_vals = vals[order]
        seg_max = np.maximum.reduceat(sorted_vals, starts[nonempty], axis=0)
        # first row (in input order) reaching the max of its bag, per feature
        is_max = sorted_vals == np.repeat(seg_max, counts[nonempty], axis=0)
        pos = np.where(is_max, np.arange(len(order))[:, None], len(order))
        first = np.minimum.reduceat(pos, starts[nonempty], axis=0)
        which[nonempty] = order[first]
    picked = rows.gather(0, _make(which)) if vals.size else _make(np.zeros((n_bags, dim),
                                                                           vals.dtype))
    mask = _make(nonempty.astype(vals.dtype).reshape(-1, 1))
    return picked * mask


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding: output shape tensor.shape + (num_classes,)."""
    if not isinstance(tensor, Tensor) or tensor._data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    a = tensor._data
    if num_classes == -1:
        if a.size == 0:
            raise RuntimeError("one_hot: Can not infer total number of classes from empty "
                               "tensor.")
        num_classes = int(a.max()) + 1
    if a.size and a.min() < 0:
        raise RuntimeError("one_hot: Class values must be non-negative.")
    if a.size and a.max() >= num_classes:
        raise RuntimeError(f"one_hot: Class values must be smaller than num_classes; got class "
                           f"{int(a.max())} with num_classes={num_classes}.")
    out = np.zeros(a.shape + (num_classes,), np.int64)
    np.put_along_axis(out, a[..., None], 1, axis=-1)
    return _make(out)
