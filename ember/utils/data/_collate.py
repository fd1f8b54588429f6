"""``default_collate`` and ``default_convert``: samples to batches.

``default_collate`` stacks a list of samples along a new first dimension, recursing into
dicts, namedtuples, tuples and lists (tuples come back as lists, as in torch). Numbers become
tensors (float64 for floats; ints and bools as ``tensor(batch)`` infers: int64, bool, or the
default float dtype when a float follows an int), strings stay lists, NumPy
arrays become tensors. In a DataLoader worker the stacked batch is written straight into shared
memory, so that it reaches the main process without another copy.
"""
from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

from ..._tensor import Tensor, _make

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

_STRING_KINDS = re.compile(r"[SaUO]")

_ERR_FORMAT = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
               "lists; found {}")


def _in_worker():
    from ._worker import get_worker_info
    return get_worker_info() is not None


def _shape_error(batch, path, describe):
    first = describe(batch[0])
    for i, b in enumerate(batch):
        if describe(b) != first:
            where = f" at {path}" if path else ""
            return RuntimeError(
                f"default_collate: samples{where} must all have the same shape to be stacked; "
                f"got {first} at entry 0 and {describe(b)} at entry {i}. Pad or resize them, "
                "or pass a custom collate_fn to the DataLoader.")
    return None


def collate_tensor_fn(batch, *, collate_fn_map=None, path=""):
    elem = batch[0]
    shape = elem._data.shape
    if any(b._data.shape != shape for b in batch):
        raise _shape_error(batch, path, lambda b: tuple(b._data.shape))
    dtype = np.result_type(*[b._data.dtype for b in batch])
    if _in_worker():
        # see NOTE [Shared memory lifetime]: the batch is born in shared memory
        from ...multiprocessing.reductions import empty_shared
        out = empty_shared((len(batch),) + shape, dtype)
        np.stack([b._data for b in batch], out=out, casting="unsafe")
        t = _make(out)
        t._shared = True
        return t
    if any(b.requires_grad for b in batch):
        from ... import stack
        return stack(list(batch), 0)  # keeps the autograd graph
    return _make(np.stack([b._data for b in batch]).astype(dtype, copy=False))


def collate_numpy_array_fn(batch, *, collate_fn_map=None, path=""):
    elem = batch[0]
    if _STRING_KINDS.search(elem.dtype.str) is not None:
        raise TypeError(_ERR_FORMAT.format(elem.dtype))
    return collate([_make(np.asarray(b)) for b in batch], collate_fn_map=collate_fn_map,
                   path=path)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None, path=""):
    return _make(np.array(batch))


def collate_float_fn(batch, *, collate_fn_map=None, path=""):
    return _make(np.array(batch, dtype=np.float64))


def collate_int_fn(batch, *, collate_fn_map=None, path=""):
    # the batch's own dtype, as tensor(batch) infers it: bools stay bool, ints int64, and a
    # float later in the batch makes it the default float dtype (not truncated to int64)
    from ... import tensor
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None, path=""):
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    (str, bytes): collate_str_fn,
}


_TAKE_PATH = frozenset(default_collate_fn_map.values())


def collate(batch, *, collate_fn_map=None, path=""):
    """Collate ``batch`` using ``collate_fn_map`` (type -> fn) for the leaves, recursing into
    mappings and sequences. ``path`` names the position in the sample for error messages."""
    batch = list(batch)
    if not batch:   # (IndexError, as torch's look at batch[0])
        raise IndexError("default_collate: got an empty batch; expected at least one sample")
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return _call(collate_fn_map[elem_type], batch, collate_fn_map, path)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return _call(fn, batch, collate_fn_map, path)
    if isinstance(elem, collections.abc.Mapping):
        return _collate_mapping(batch, elem, collate_fn_map, path)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map, path=f"{path}.{f}")
                           for f, s in zip(elem._fields, zip(*batch))))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(b) != size for b in batch):
            bad = next(i for i, b in enumerate(batch) if len(b) != size)
            where = f" at {path}" if path else ""
            raise RuntimeError(f"default_collate: each element in list of batch should be of "
                               f"equal size; got length {size} at entry 0 and {len(batch[bad])} "
                               f"at entry {bad}{where}")
        transposed = [collate(s, collate_fn_map=collate_fn_map, path=f"{path}[{i}]")
                      for i, s in enumerate(zip(*batch))]
        if isinstance(elem, tuple):
            return transposed  # torch returns tuples as lists (backwards compatibility)
        try:
            return elem_type(transposed)
        except TypeError:
            return transposed
    raise TypeError(_ERR_FORMAT.format(elem_type))


def _call(fn, batch, collate_fn_map, path):
    """fn(batch, collate_fn_map=...) as torch calls it; ember's own functions also get the
    sample ``path`` for their error messages (a user's function has torch's signature)."""
    if fn in _TAKE_PATH:
        return fn(batch, collate_fn_map=collate_fn_map, path=path)
    return fn(batch, collate_fn_map=collate_fn_map)


def _collate_mapping(batch, elem, collate_fn_map, path):
    out = {}
    for key in elem:
        try:
            values = [d[key] for d in batch]
        except KeyError:
            raise KeyError(f"default_collate: key {key!r} is missing from some samples of the "
                           "batch") from None
        out[key] = collate(values, collate_fn_map=collate_fn_map, path=f"{path}[{key!r}]")
    if isinstance(elem, collections.abc.MutableMapping):
        clone = copy.copy(elem)  # keeps OrderedDict, defaultdict's factory, user mappings
        clone.update(out)
        return clone
    try:
        return type(elem)(out)
    except TypeError:
        return out


def default_collate(batch):
    """Stack a list of samples into a batch (see the module docstring for the rules).

    Raises RuntimeError naming the offending entry when tensors/arrays differ in shape or
    sequences in length, TypeError for unsupported element types.

    Example:
        >>> import ember
        >>> from ember.utils.data import default_collate
        >>> b = default_collate([(ember.ones(2), 0), (ember.zeros(2), 1)])
        >>> b[0].shape, b[1]
        (ember.Size([2, 2]), tensor([0, 1]))
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data):
    """Convert NumPy arrays (and NumPy scalars) in ``data`` to tensors, recursively.

    Used instead of collation when automatic batching is off (``batch_size=None``).

    Example:
        >>> import numpy as np
        >>> from ember.utils.data import default_convert
        >>> default_convert({"x": np.ones(2)})
        {'x': tensor([1., 1.], dtype=ember.float64)}
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        if _STRING_KINDS.search(data.dtype.str) is not None:
            return data
        return _make(data)
    if isinstance(data, (np.bool_, np.number)):
        return _make(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        converted = {k: default_convert(v) for k, v in data.items()}
        try:
            return type(data)(converted) if type(data) is not dict else converted
        except TypeError:
            return converted
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted = [default_convert(d) for d in data]
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    return data
