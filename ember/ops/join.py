"""Joining tensors: cat, stack, hstack/vstack/dstack/column_stack."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _make, _wrap_dim
from ..autograd.function import Op, rename_node
from ..autograd.grad_mode import _state as _grad_state
from .registry import FUNCTIONS, _can_store, records, result_dtype, unwatched, write_out
from .views import split, unsqueeze


class Cat(Op):
    """Concatenate along an existing dim."""

    @staticmethod
    def forward(ctx, dim, *xs):
        ctx.sizes = [x.shape[dim] for x in xs]
        ctx.dim = dim
        return _concatenate(xs, dim)

    @staticmethod
    def backward(ctx, grad):
        return (None,) + tuple(split(grad, ctx.sizes, ctx.dim))


def cat(tensors, dim=0, *, out=None):
    """Concatenate tensors along dim; 1-D empty tensors are skipped like torch's legacy rule."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError("cat(): argument 'tensors' must be a tuple or list of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise ValueError("cat(): expected a non-empty list of Tensors")
    if out is None and unwatched():
        got = _unrecorded_cat(tensors, dim)
        if got is not None:
            return got
    d = _same_layout(tensors, dim)
    if d is not None:  # nothing to check, skip or convert: the tensors go to the op as given
        if out is None and not records(tensors) and unwatched():  # NOTE [Unwatched no-grad views]
            return _make(_concatenate([t._data for t in tensors], d))
        res = Cat.apply(d, *tensors)
        return res if out is None else _cat_out(out, res, tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"cat(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    # the legacy empty 1-D tensors take no part in the shapes, but in the dtype they do
    dt = result_dtype(*[t if t.ndim else t.reshape(1) for t in tensors])
    ts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or [tensors[0]]
    ref = ts[0]
    if ref.ndim == 0:
        raise RuntimeError("cat(): zero-dimensional tensor (at position 0) cannot be "
                           "concatenated")
    d = _wrap_dim(dim, ref.ndim, "cat")
    for i, t in enumerate(ts):
        if t.ndim != ref.ndim:
            raise RuntimeError(f"cat(): Tensors must have same number of dimensions: got "
                               f"{ref.ndim} and {t.ndim} (shapes {list(ref.shape)} and "
                               f"{list(t.shape)})")
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"cat(): Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref.shape[k]} but got size {t.shape[k]} for "
                                   f"tensor number {i} in the list (shapes {list(ref.shape)} "
                                   f"and {list(t.shape)}).")
    ts = [t if t._data.dtype == dt.np else t.to(dt) for t in ts]
    res = Cat.apply(d, *ts)
    if out is not None:
        return _cat_out(out, res, tensors)
    return res


def _cat_out(out, res, tensors):
    """write_out for cat, with torch's errors: an out= of a dtype the inputs' cannot be cast
    to (TypeError), and one that overlaps an input (it would be read while written)."""
    if isinstance(out, Tensor) and not res.requires_grad:  # (else write_out's autograd error)
        if not _can_store(res.dtype, out.dtype):
            raise TypeError(f"cat(): input types can't be cast to the desired output type "
                            f"{out.dtype} (the inputs' common dtype is {res.dtype})")
        if any(np.may_share_memory(out._data, t._data) for t in tensors):
            raise RuntimeError("cat(): unsupported operation: some elements of the input tensor "
                               "and the written-to tensor refer to a single memory location. "
                               "Please clone() the tensor before performing the operation.")
    return write_out(out, res, "cat")


# NOTE [The layout of cat's result]
# torch.cat writes a contiguous result unless its inputs share a channels-last layout (which
# ember does not model: its tensors are contiguous-format), while np.concatenate copies the
# axis order of its inputs. The two differ when an input is a permuted view: a transformer's
# key/value cache grown from the heads of its qkv projection ((B, T, H, E) memory seen as
# (B, H, T, E)) stayed interleaved at every step of a generation, so the cache had torch's
# shape but not its strides, and the one-query attention kernel (NOTE [One query row] in
# ops/_kernels/attention.py) read it as a strided array it cannot vectorise. So the result is
# C-contiguous here, as torch's, whatever the inputs' strides (a strided input costs a gather,
# as in torch; C-contiguous inputs give NumPy's own C-contiguous result).


def _concatenate(arrays, dim):
    """np.concatenate of arrays along dim into a C-contiguous result."""
    for a in arrays:
        if not a.flags.c_contiguous:
            break
    else:
        return np.concatenate(arrays, axis=dim)
    shape = list(arrays[0].shape)
    shape[dim] = sum(a.shape[dim] for a in arrays)
    out = np.empty(shape, np.result_type(*arrays))
    return np.concatenate(arrays, axis=dim, out=out)


def _unrecorded_cat(tensors, dim):
    """cat's result when nothing records it (NOTE [Unwatched no-grad views]: a decoding step's
    key/value caches grow by one cat each a block) and the tensors are of one dtype with an
    int dim in range: NumPy's concatenate checks the shapes, and a mismatch (or torch's rule
    for empty 1-D tensors) is left to the checked path. None when not taken."""
    first = tensors[0]
    if type(first) is not Tensor or type(dim) is not int:
        return None
    dt, nd = first._data.dtype, first._data.ndim
    if not -nd <= dim < nd:
        return None
    grad = _grad_state.enabled
    arrays = []
    for t in tensors:
        if type(t) is not Tensor:
            return None
        a = t._data
        if a.dtype != dt or (grad and t._requires_grad):
            return None
        arrays.append(a)
    try:
        return _make(_concatenate(arrays, dim % nd))
    except ValueError:  # shapes that do not fit: the checked path says how
        return None


def _same_layout(tensors, dim):
    """The common case of cat, read on the arrays: tensors of one dtype and ndim >= 1 whose
    shapes agree except along ``dim`` (an int in range). Returns the non-negative dim, or None
    when cat must take its general path (checks, empty-tensor rule, dtype promotion)."""
    first = tensors[0]
    if not isinstance(first, Tensor) or type(dim) is not int:
        return None
    a = first._data
    nd, dt, shape = a.ndim, a.dtype, a.shape
    if not -nd <= dim < nd:
        return None
    d = dim % nd
    for t in tensors:
        if not isinstance(t, Tensor):
            return None
        b = t._data
        if b.dtype != dt or b.ndim != nd:
            return None
        s = b.shape
        if s != shape and (s[:d] != shape[:d] or s[d + 1:] != shape[d + 1:]):
            return None
    return d


FUNCTIONS["cat"] = FUNCTIONS["concat"] = FUNCTIONS["concatenate"] = cat
Tensor._cat_with = lambda self, other, dim: cat([self, other], dim)


def stack(tensors, dim=0, *, out=None):
    """Stack same-shaped tensors along a new dim."""
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(t.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shape) + 1, "stack")
    res = cat([unsqueeze(t, d) for t in tensors], d, out=out)
    return res if out is not None else rename_node(res, "StackBackward0")


def _tensor_sequence(tensors, name):
    """torch's checks of the stacking helpers' argument: a non-empty tuple or list."""
    if not isinstance(tensors, (tuple, list)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


# (out= goes to cat, which checks it as torch's cat does)
def hstack(tensors, *, out=None):
    ts = [t if t.ndim else t.reshape(1) for t in _tensor_sequence(tensors, "hstack")]
    return cat(ts, 0 if ts[0].ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None, name="vstack"):
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in _tensor_sequence(tensors, name)],
               0, out=out)


def dstack(tensors, *, out=None):
    ts = [t.reshape(1, -1, 1) if t.ndim < 2 else (t.unsqueeze(-1) if t.ndim == 2 else t)
          for t in _tensor_sequence(tensors, "dstack")]
    return cat(ts, 2, out=out)


def column_stack(tensors, *, out=None):
    return cat([t.reshape(-1, 1) if t.ndim < 2 else t
                for t in _tensor_sequence(tensors, "column_stack")], 1, out=out)


def row_stack(tensors, *, out=None):
    return vstack(tensors, out=out, name="row_stack")


FUNCTIONS["stack"] = stack
for _f in (hstack, vstack, dstack, column_stack, row_stack):
    FUNCTIONS[_f.__name__] = _f
