"""Top-level functions of ``torch`` that ember had only elsewhere or not at all: the aten-style
loss/activation forms (integer ``reduction``, positional arguments), sampling and histogram
helpers, strided construction, DLPack/file interop, and global switches.

NOTE [Top-level loss forms]: ``torch.kl_div``, ``torch.ctc_loss``, ``torch.triplet_margin_loss``
and the other losses at the top level are the aten kernels, not ``nn.functional``'s wrappers:
``reduction`` is an int (0 none, 1 mean, 2 sum) and, when it is left out, the Python binding of
torch 2.13 passes 0, so they return the unreduced loss (``torch.kl_div(x, t).shape ==
x.shape``). ember's forms follow that, and compute through the nn.functional versions.
"""
from __future__ import annotations

import builtins
import collections

import numpy as np

from . import _dtype as D
from ._tensor import Tensor, _make

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _F():
    from .nn import functional
    return functional


def _reduce(name, loss, reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be 0 (none), 1 (mean) or 2 (sum); got "
                         f"{reduction!r}")
    if reduction == 1:
        return loss.mean()
    return loss.sum() if reduction == 2 else loss


# ------------------------------------------------------------------ losses (see NOTE above)
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    loss = _F().binary_cross_entropy_with_logits(input, target, weight, reduction="none",
                                                 pos_weight=pos_weight)
    return _reduce("binary_cross_entropy_with_logits", loss, reduction)


def kl_div(input, target, reduction=0, *, log_target=False):
    loss = _F().kl_div(input, target, reduction="none", log_target=log_target)
    return _reduce("kl_div", loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    loss = _F().cosine_embedding_loss(input1, input2, target, margin, reduction="none")
    return _reduce("cosine_embedding_loss", loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    loss = _F().hinge_embedding_loss(input, target, margin, reduction="none")
    return _reduce("hinge_embedding_loss", loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    loss = _F().margin_ranking_loss(input1, input2, target, margin, reduction="none")
    return _reduce("margin_ranking_loss", loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=0):
    loss = _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    reduction="none")
    return _reduce("triplet_margin_loss", loss, reduction)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    loss = _F().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction="none")
    return _reduce("poisson_nll_loss", loss, reduction)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"ctc_loss: reduction must be 0 (none), 1 (mean) or 2 (sum); got "
                         f"{reduction!r}")
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                         _REDUCTIONS[reduction], zero_infinity)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _F().rms_norm(input, normalized_shape, weight, eps)


_BAG_MODES = {0: "sum", 1: "mean", 2: "max"}


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """``(output, offset2bag, bag_size, max_indices)``: the bag reductions of
    ``nn.functional.embedding_bag`` (``mode`` 0 sum, 1 mean, 2 max) with the bookkeeping
    tensors the aten kernel also returns (bag of every index, bag sizes, arg-max rows)."""
    if mode not in _BAG_MODES:
        raise ValueError(f"embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max); got {mode!r}")
    if indices.dim() == 2:
        bags, width = indices.shape
        offsets = _make(np.arange(0, bags * width, width, dtype=np.int64))
        indices = indices.reshape(-1)
    output = _F().embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq,
                                _BAG_MODES[mode], sparse, per_sample_weights,
                                include_last_offset, padding_idx)
    idx, starts = indices._data.astype(np.int64), offsets._data.astype(np.int64)
    n_bags = output.shape[0]
    ends = np.append(starts[1:], idx.size)[:n_bags]
    bag_of = np.zeros(idx.size, np.int64)
    for b in range(n_bags):
        bag_of[starts[b]:ends[b]] = b
    keep = idx != padding_idx if padding_idx is not None else np.ones(idx.size, bool)
    sizes = np.array([keep[starts[b]:ends[b]].sum() for b in range(n_bags)], np.int64)
    # torch's fast sum path (float32 and the half types) leaves offset2bag empty
    fast_sum = weight.dtype is not D.float64 and per_sample_weights is None
    if mode == 0 and fast_sum and padding_idx is None:
        offset2bag, bag_size = np.zeros(0, np.int64), np.zeros(n_bags, np.int64)
    else:
        offset2bag, bag_size = bag_of, sizes if mode != 0 else np.zeros(n_bags, np.int64)
    if mode == 2:
        w = weight._data
        max_indices = np.zeros((n_bags, w.shape[1]), np.int64)
        for b in range(n_bags):
            rows = idx[starts[b]:ends[b]][keep[starts[b]:ends[b]]]
            if rows.size:
                max_indices[b] = rows[np.argmax(w[rows], axis=0)]
    else:
        max_indices = bag_size.copy()
    return output, _make(offset2bag), _make(bag_size), _make(max_indices)


# ------------------------------------------------------------------ aten-form nn functions
# NOTE [Top-level nn forms]: torch.batch_norm, torch.embedding, torch.softmax and the others
# below are the aten kernels' bindings, whose parameters differ from nn.functional's in order
# or name: torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
# eps, cudnn_enabled) puts weight/bias FIRST (F.batch_norm takes the running stats first),
# torch.embedding(weight, indices) takes the table first, torch.softmax's third positional
# parameter is dtype (F.softmax's is _stacklevel), the dropouts say `train`. Aliasing the
# nn.functional versions at the top level would bind positional calls to the wrong parameters;
# these forms bind as torch's and compute through nn.functional.
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                           eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                              momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return _F().group_norm(input, num_groups, weight, bias, eps)


def adaptive_max_pool1d(input, output_size):
    """``(values, indices)``: the top-level form always returns both (F's has return_indices)."""
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """The lookup ``weight[indices]``; ``padding_idx`` -1 (aten's default) means none."""
    return _F().embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                          scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def _maybe_out(result, out, name):
    if out is None:
        return result
    from .ops.registry import write_out
    return write_out(out, result, name)


def softmax(input, dim, dtype=None, *, out=None):
    return _maybe_out(_F().softmax(input, dim, dtype=dtype), out, "softmax")


def log_softmax(input, dim, dtype=None, *, out=None):
    return _maybe_out(_F().log_softmax(input, dim, dtype=dtype), out, "log_softmax")


def _softmax_method(self, dim, dtype=None):
    return _F().softmax(self, dim, dtype=dtype)


def _log_softmax_method(self, dim, dtype=None):
    return _F().log_softmax(self, dim, dtype=dtype)


def dropout(input, p, train):
    return _F().dropout(input, p, train)


def alpha_dropout(input, p, train):
    return _F().alpha_dropout(input, p, train)


def feature_alpha_dropout(input, p, train):
    return _F().feature_alpha_dropout(input, p, train)


def threshold(input, threshold, value, *, out=None):
    return _maybe_out(_F().threshold(input, threshold, value), out, "threshold")


def hardshrink(input, lambd=0.5, *, out=None):
    return _maybe_out(_F().hardshrink(input, lambd), out, "hardshrink")


# the forms above that torch offers only as functions (Tensor.softmax etc. bind as methods)
NOT_METHODS = ("batch_norm", "instance_norm", "layer_norm", "group_norm", "embedding",
               "softmax", "log_softmax", "dropout", "alpha_dropout", "feature_alpha_dropout",
               "threshold", "hardshrink")


# ------------------------------------------------------------------ in-place activations
def celu_(input, alpha=1.0):
    return _F().celu_(input, alpha)


def selu_(input):
    return _F().selu_(input)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    from .nn.functional._activation import _rrelu
    return _rrelu(input, lower, upper, training, False, generator)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    from .nn.functional._activation import _rrelu
    return _rrelu(input, lower, upper, training, True, generator)


def threshold_(input, threshold, value):
    return _F().threshold_(input, threshold, value)


# ------------------------------------------------------------------ sampling and statistics
def binomial(count, prob, generator=None):
    """Binomial(count, prob) draws, elementwise (floating tensors, as in torch)."""
    from .ops.random import _gen
    if not (isinstance(count, Tensor) and isinstance(prob, Tensor)):
        raise TypeError("binomial(): arguments 'count' and 'prob' must be Tensors")
    if not count.is_floating_point() or not prob.is_floating_point():
        raise RuntimeError(f"binomial: expected floating point count and prob; got "
                           f"{count.dtype} and {prob.dtype}")
    p = prob._data.astype(np.float64)
    if np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise RuntimeError("binomial: prob must be in [0, 1]")
    n, p = np.broadcast_arrays(count._data.astype(np.int64), p)
    draws = _gen(generator).binomial(n, p)
    return _make(np.asarray(draws, dtype=np.result_type(count._data, prob._data)))


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates of d(input)/dx along each of ``dim`` (all dims by default) by central
    differences inside and one-sided ones (order ``edge_order``) at the edges; ``spacing`` is a
    number, a list of numbers (one per dim) or a list of coordinate tensors."""
    import ember
    spacing = 1 if spacing is None else spacing   # torch's parser default, spelled out
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2; got "
                           f"{edge_order}")
    dims = list(range(input.dim())) if dim is None else (
        [dim] if isinstance(dim, int) else list(dim))
    dims = [d % input.dim() for d in dims]
    spacings = spacing if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(spacings) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or a "
                           f"list of length {len(dims)}; got a list of length {len(spacings)}")
    out = []
    for d, h in zip(dims, spacings):
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(f"torch.gradient expected each dimension size to be at least "
                               f"edge_order+1; got size {input.shape[d]} in dim {d}")
        coords = h._data if isinstance(h, Tensor) else float(h)
        result = np.gradient(input.detach().numpy().astype(
            input._data.dtype if input.is_floating_point() else D.get_default_dtype().np),
            coords, axis=d, edge_order=edge_order)
        out.append(ember.tensor(result))
    return tuple(out)


_HistogramDD = collections.namedtuple("histogramdd", ["hist", "bin_edges"])


def histogramdd(input, bins=10, *, range=None, weight=None, density=False, out=None):
    """A D-dimensional histogram of the rows of ``input`` (shape (..., D))."""
    if not input.is_floating_point():
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the "
                           f"same dtype, and a floating one; got {input.dtype}")
    data = input.detach().numpy().reshape(-1, input.shape[-1])
    k = data.shape[1]
    if isinstance(bins, Tensor):
        raise TypeError("histogramdd: bins must be an int, a list of ints or a list of tensors")
    if isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor):
        bins = [b.detach().numpy() for b in bins]
    rng = None if range is None else [(range[2 * i], range[2 * i + 1]) for i in builtins.range(k)]
    w = None if weight is None else weight.detach().numpy().reshape(-1)
    hist, edges = np.histogramdd(data, bins=bins, range=rng, weights=w, density=density)
    dt = input._data.dtype
    result = _HistogramDD(_make(hist.astype(dt)), [_make(e.astype(dt)) for e in edges])
    if out is None:
        return result
    from .ops.registry import write_out
    return write_out(out, result, "histogramdd")



# ------------------------------------------------------------------ construction and interop
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A zero-filled tensor with the given strides (in elements) over its own storage."""
    from ._backend import check_device
    if device is not None:
        check_device(device)
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"empty_strided: mismatch in length of strides and shape; got "
                           f"{len(size)} sizes and {len(stride)} strides")
    if any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"empty_strided: sizes and strides must be non-negative; got "
                           f"{list(size)} and {list(stride)}")
    dt = (D.get_default_dtype() if dtype is None else D.to_dtype(dtype)).np
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    storage = np.zeros(max(extent, 0), dtype=dt)
    arr = np.lib.stride_tricks.as_strided(storage, size, [s * storage.itemsize for s in stride])
    t = _make(arr)
    if requires_grad:
        t.requires_grad_()
    return t


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False):
    """A 1-D tensor of ``size`` elements of a binary file: memory-mapped when ``shared`` (writes
    reach the file, which grows to the size asked), else a copy of its first bytes."""
    import os
    dt = np.dtype((D.get_default_dtype() if dtype is None else D.to_dtype(dtype)).np)
    size = int(size)
    need = size * dt.itemsize
    if shared:
        with open(filename, "ab") as f:
            if f.tell() < need:
                f.truncate(need)
        if size == 0:
            return _make(np.zeros(0, dt))
        return _make(np.memmap(filename, dtype=dt, mode="r+", shape=(size,)))
    have = os.path.getsize(filename)
    if have < need:
        raise RuntimeError(f"from_file: trying to read {need} bytes ({size} elements of "
                           f"{dt.name}) from '{filename}', but it has {have} bytes")
    return _make(np.fromfile(filename, dtype=dt, count=size))


def to_dlpack(tensor):
    """A DLPack capsule for ``tensor``'s memory (``ember.from_dlpack`` / NumPy read it)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' must be Tensor, not "
                        f"{type(tensor).__name__}")
    if tensor.requires_grad:
        raise RuntimeError("to_dlpack: can't export a tensor that requires grad; use "
                           "tensor.detach() first.")
    return tensor._data.__dlpack__()


# ------------------------------------------------------------------ switches and queries
def is_inference(input) -> bool:
    """Whether ``input`` was made in inference mode (ember's inference mode makes ordinary
    tensors, so this is False)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    return False


def is_vulkan_available() -> bool:
    return False


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Switch anomaly detection on or off globally (``ember.autograd.set_detect_anomaly``)."""
    from .autograd.anomaly_mode import set_detect_anomaly
    set_detect_anomaly(enabled, check_nan)


def set_autocast_cpu_enabled(enabled) -> None:
    from .amp import set_autocast_enabled
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype) -> None:
    from .amp.autocast_mode import set_autocast_dtype
    set_autocast_dtype("cpu", dtype)


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """0/"default": deterministic algorithms off; 1/"warn": on, warning only; 2/"error": on."""
    from ._determinism import use_deterministic_algorithms
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    from ._determinism import (
        are_deterministic_algorithms_enabled,
        is_deterministic_algorithms_warn_only_enabled,
    )
    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2


def set_default_tensor_type(t) -> None:
    """Deprecated torch switch: a floating tensor type (``ember.DoubleTensor`` or its name
    ``"torch.DoubleTensor"``) sets the default dtype (CPU types only)."""
    import warnings

    from . import _legacy
    warnings.warn("set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "ember.set_default_dtype() and ember.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    if isinstance(t, str):
        name = t.rsplit(".", 1)[-1]
        if t.split(".")[0] not in ("torch", "ember") or not hasattr(_legacy, name):
            raise TypeError(f"invalid type: '{t}'")
        t = getattr(_legacy, name)
    dtype = getattr(t, "dtype", None)
    if not isinstance(dtype, D.dtype) or not dtype.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type; got "
                        f"{t}")
    D.set_default_dtype(dtype)


# ------------------------------------------------------------------ control flow
def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)`` (eagerly: ember has no
    graph capture to keep both branches for)."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"cond: expected pred to be a bool or a one-element tensor; got "
                               f"a tensor of shape {list(pred.shape)}")
        pred = bool(pred.item())
    elif not isinstance(pred, (bool, int, np.bool_)):
        raise RuntimeError(f"cond: expected pred to be a bool or a tensor; got "
                           f"{type(pred).__name__}")
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"cond: expected operands to be a tuple or list; got "
                           f"{type(operands).__name__}")
    return (true_fn if pred else false_fn)(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Run ``carried_inputs = body_fn(*carried_inputs)`` while ``cond_fn(*carried_inputs)``;
    returns the final carried values as a tuple."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"while_loop: carried_inputs must be a tuple or list; got "
                           f"{type(carried_inputs).__name__}")
    carried = tuple(carried_inputs)
    while True:
        keep = cond_fn(*carried)
        if isinstance(keep, Tensor):
            if keep.numel() != 1 or keep.dtype is not D.bool_:
                raise RuntimeError(f"while_loop: cond_fn must return a boolean scalar tensor "
                                   f"or a bool; got a {keep.dtype} tensor of shape "
                                   f"{list(keep.shape)}")
            keep = bool(keep.item())
        if not keep:
            return carried
        out = body_fn(*carried)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(out) != len(carried):
            raise RuntimeError(f"while_loop: body_fn must return as many values as "
                               f"carried_inputs; got {len(out)}, expected {len(carried)}")
        carried = out


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """Reduce (``prod``, ``mean``, ``amax``, ``amin``) the slices of ``source`` along ``dim``
    into the rows of ``input`` named by ``index``: ``scatter_reduce`` with the index spread
    over the other dims, so the gradient is scatter_reduce's."""
    import ember
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if index.dim() > 1:
        raise IndexError(f"index_reduce(): Index is supposed to be a vector; got a "
                         f"{index.dim()}-D index")
    dim = dim % max(input.dim(), 1)
    if index.numel() != (source.shape[dim] if source.dim() else 1):
        raise IndexError(f"index_reduce(): Number of indices ({index.numel()}) should be equal "
                         f"to source.size(dim) ({source.shape[dim] if source.dim() else 1})")
    view = [1] * source.dim()
    if source.dim():
        view[dim] = index.numel()
    spread = index.reshape(view).expand(source.shape) if source.dim() else index.reshape(())
    return _maybe_out(ember.scatter_reduce(input, dim, spread, source, reduce,
                                           include_self=include_self), out, "index_reduce")


# ------------------------------------------------------------------ sparse-dense products
def _require_sparse(name, t):
    if not getattr(t, "is_sparse", False):  # torch's words (smm reports its sspaddmm)
        raise RuntimeError(f"tensor.sspaddmm(...) can only be called on sparse tensors ({name}: "
                           f"its first operand is a dense tensor of shape {list(t.shape)})")


def dsmm(input, mat2):
    """``input @ mat2`` as a dense tensor (``input`` sparse or dense)."""
    import ember
    return ember.mm(input, mat2)


def smm(input, mat2):
    """sparse ``input`` @ dense ``mat2`` as a sparse COO tensor."""
    _require_sparse("smm", input)
    return dsmm(input, mat2).to_sparse()


def hspmm(mat1, mat2, *, out=None):
    """sparse ``mat1`` @ dense ``mat2`` as a hybrid COO tensor (sparse rows, dense columns)."""
    if not getattr(mat1, "is_sparse", False):
        raise NotImplementedError("Could not run 'aten::hspmm' with arguments from the 'CPU' "
                                  "backend: mat1 must be a sparse COO tensor; got a dense one.")
    result = dsmm(mat1, mat2).to_sparse(1)
    return result if out is None else out.copy_(result)


hsmm = hspmm


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)`` for sparse input and mat1, as a sparse tensor."""
    if not getattr(input, "is_sparse", False):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    _require_sparse("sspaddmm", mat1)
    result = (input.to_dense() * beta + dsmm(mat1, mat2) * alpha).to_sparse()
    return result if out is None else out.copy_(result)


saddmm = sspaddmm
# ------------------------------------------------------------------ aten's convolution
def _int_list(name, arg, value):
    if not isinstance(value, (tuple, list)) or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        raise TypeError(f"{name}(): argument '{arg}' must be tuple of ints, not "
                        f"{type(value).__name__}")
    return tuple(int(v) for v in value)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """The convolution every conv layer lowers to in torch (``aten::convolution``, what FLOP
    counters and graphs name): 1-3 spatial dims from ``weight``'s rank, transposed or not.
    stride/padding/dilation/output_padding are lists of ints (one value covers every dim)."""
    from .nn.functional._utils import _check_tensor
    name = "convolution"
    _check_tensor(name, input)
    _check_tensor(name, weight, "weight")
    args = [_int_list(name, a, v) for a, v in (("stride", stride), ("padding", padding),
                                                 ("dilation", dilation),
                                                 ("output_padding", output_padding))]
    stride, padding, dilation, output_padding = args
    nd = weight.ndim - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"{name}: expected a weight of 3, 4 or 5 dims (1-3 spatial dims); "
                           f"got weight of shape {tuple(weight.shape)}")
    F = _F()
    if transposed:
        conv_t = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation)
    conv = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return conv(input, weight, bias, stride, padding, dilation, groups)


def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                 groups, benchmark=False, deterministic=False, cudnn_enabled=True,
                 allow_tf32=True):
    """``aten::_convolution``: convolution with the backend switches of torch's CUDA kernels,
    which change nothing here."""
    return convolution(input, weight, bias, stride, padding, dilation, transposed,
                       output_padding, groups)


FUNCTIONS = {name: obj for name, obj in dict(globals()).items()
             if callable(obj) and not name.startswith("_") and getattr(obj, "__module__", "")
             == __name__ and not isinstance(obj, type)}
