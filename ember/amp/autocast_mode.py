"""``ember.autocast``: run chosen ops in a lower-precision dtype, following PyTorch's CPU lists.

Inside ``with ember.autocast("cpu"):`` every op that calls ``maybe_autocast(name, ...)``
(ember/amp/_state.py) gets its floating inputs cast according to the op's list:

* ``LOWER_PRECISION_OPS`` (matmul, linear, conv, bmm, ...): float32 / float16 / bfloat16 inputs
  are cast to the autocast dtype (bfloat16 by default), so these ops run and return it.
* ``FP32_OPS`` (losses, prod, cdist, 3-d pooling, reflection/replication padding, linalg, ...):
  lower-precision inputs are cast up to float32.
* every other op runs in the dtype of its inputs, as in PyTorch's CPU autocast (so softmax or
  sum of a bfloat16 matmul result stays bfloat16, while softmax of a float32 tensor stays float32).

float64 tensors are never cast. The casts are ordinary differentiable ``Tensor.to`` calls, so
gradients flow back to the parameters in the parameters' own dtype.
"""
from __future__ import annotations

import copy
import functools
import warnings
import weakref

from .. import _dtype as D
from .._backend import device as _device
from ..autograd.grad_mode import _state as _grad_state
from ._state import _Autocast, _policy, state

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "set_autocast_enabled",
           "get_autocast_dtype", "set_autocast_dtype", "is_autocast_cache_enabled",
           "set_autocast_cache_enabled", "clear_autocast_cache", "custom_fwd", "custom_bwd"]

# PyTorch's CPU autocast "lower_precision_fp" list, by ember op name. einsum and tensordot are
# not in it, but PyTorch computes them with bmm, so their results come out lower precision too.
LOWER_PRECISION_OPS = frozenset({
    "matmul", "mm", "bmm", "baddbmm", "addmm", "addbmm", "linear", "linalg_vecdot",
    "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "prelu", "scaled_dot_product_attention", "multi_head_attention",
    "einsum", "tensordot", "lstm", "rnn_tanh", "rnn_relu",
})

# PyTorch's CPU autocast "fp32" list: these upcast lower-precision inputs to float32.
FP32_OPS = frozenset({
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "margin_ranking_loss",
    "hinge_embedding_loss", "soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss",
    "triplet_margin_loss", "cosine_embedding_loss", "poisson_nll_loss", "ctc_loss",
    "prod", "quantile", "nanquantile", "cdist", "trace", "grid_sample", "stft", "polar",
    "avg_pool3d", "max_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
    "fractional_max_pool2d", "fractional_max_pool3d", "max_unpool2d", "max_unpool3d",
    "reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d",
    "replication_pad3d", "inverse", "pinverse", "cholesky", "cholesky_solve", "cholesky_inverse",
    "lu_solve", "qr", "svd", "triangular_solve", "geqrf", "orgqr", "ormqr",
    "linalg_inv", "linalg_solve", "linalg_qr", "linalg_svd", "linalg_eig", "linalg_eigh",
    "linalg_cholesky", "linalg_lstsq", "linalg_det", "linalg_slogdet", "linalg_norm",
    "linalg_matrix_norm", "linalg_vector_norm", "linalg_pinv", "linalg_eigvals",
    "linalg_eigvalsh", "linalg_matrix_rank", "linalg_cond", "linalg_tensorinv",
    "linalg_tensorsolve", "linalg_householder_product",
})

# device types autocast accepts; only the CPU holds ember tensors
_DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "hpu", "xla", "meta")
_SUPPORTED_CPU_DTYPES = (D.bfloat16, D.float16)
_default_dtypes = {"cuda": D.float16, "mps": D.float16, "xpu": D.bfloat16,
                   "hpu": D.bfloat16, "xla": D.bfloat16, "meta": D.float16}


# ------------------------------------------------------------------------------------ casting

# NOTE [Autocast cache]: within one outermost autocast region a parameter is cast once and the
# cast reused by every op (PyTorch does the same). Only leaf tensors that require grad are
# cached -- activations are cast once anyway. An entry keeps the source alive only weakly and
# is dropped if the source was modified in place (version) or grad mode changed (a cast made
# under no_grad has no graph and must not be reused where gradients are needed). The cache is
# the calling thread's (state.cache), as autocast regions are per thread.


def _cached_cast(t, dt):
    cacheable = (state.cache_enabled and t._requires_grad and t._grad_fn is None
                 and t._base is None and dt is state.dtype)
    if not cacheable:
        return t.to(dt)
    key = (id(t), dt)
    cache = state.cache
    hit = cache.get(key)
    grad_on = _grad_state.enabled
    if hit is not None:
        ref, version, was_grad_on, out = hit
        if ref() is t and version == t._vc[0] and was_grad_on == grad_on:
            return out
    out = t.to(dt)
    cache[key] = (weakref.ref(t), t._vc[0], grad_on, out)
    return out


def _eligible(t):
    """Floating tensors other than float64 take part in autocast (as in PyTorch)."""
    from .._tensor import Tensor
    return (isinstance(t, Tensor) and not getattr(t, "is_sparse", False)
            and t.is_floating_point() and t.dtype is not D.float64)


def _cast(op_name, tensors):
    """The autocast policy: ``tensors`` (an op's inputs) in the dtype op ``op_name`` runs in."""
    if op_name in LOWER_PRECISION_OPS:
        target = state.dtype
    elif op_name in FP32_OPS:
        target = D.float32
    else:
        return tensors
    return tuple(_cached_cast(t, target) if _eligible(t) and t.dtype is not target else t
                 for t in tensors)


_policy["cast"] = _cast
# the CPU autocast dtype outside any region, in every thread until it calls set_autocast_dtype
_Autocast.dtype = D.bfloat16


def clear_autocast_cache():
    """Drop the calling thread's cached casts of parameters (done automatically when its
    outermost autocast region is exited)."""
    state.cache.clear()


# ----------------------------------------------------------------------- state query / setters

def _check_device_type(device_type, fn):
    if not isinstance(device_type, str):
        raise ValueError(f"{fn}: expected `device_type` of type `str`, got: `{type(device_type)}`")
    return _device(device_type).type  # raises RuntimeError for unknown device strings


def is_autocast_available(device_type):
    """True for device types autocast knows; in ember only 'cpu' autocast can be enabled."""
    return _check_device_type(device_type, "is_autocast_available") in _DEVICE_TYPES


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type``.

    As in PyTorch, calling it without an argument asks about CUDA, which is never enabled in
    ember (there is no CUDA backend); ask ``is_autocast_enabled("cpu")``.
    """
    if device_type is None:
        return False
    return _check_device_type(device_type, "is_autocast_enabled") == "cpu" and state.enabled


def set_autocast_enabled(device_type, enabled):
    if not isinstance(enabled, bool):
        raise TypeError(f"set_autocast_enabled(): argument 'enabled' must be bool, not "
                        f"{type(enabled).__name__}")
    if _check_device_type(device_type, "set_autocast_enabled") == "cpu":
        state.enabled = enabled


def get_autocast_dtype(device_type):
    """The lower-precision dtype autocast uses on ``device_type`` (bfloat16 on the CPU)."""
    dev = _check_device_type(device_type, "get_autocast_dtype")
    return state.dtype if dev == "cpu" else _default_dtypes[dev]


def set_autocast_dtype(device_type, dtype):
    dev = _check_device_type(device_type, "set_autocast_dtype")
    if dev == "cpu":
        state.dtype = D.to_dtype(dtype)
    else:
        _default_dtypes[dev] = D.to_dtype(dtype)


def is_autocast_cache_enabled():
    return state.cache_enabled


def set_autocast_cache_enabled(enabled):
    state.cache_enabled = bool(enabled)


# deprecated CPU-specific spellings PyTorch still provides
def is_autocast_cpu_enabled():
    return state.enabled


def get_autocast_cpu_dtype():
    return get_autocast_dtype("cpu")


# ------------------------------------------------------------------------------ the context

class autocast:
    """Context manager and decorator enabling mixed precision for the ops in PyTorch's lists.

    Args:
        device_type: "cpu" (the only device ember computes on). "cuda" and other accelerators
            are accepted and, as PyTorch does when the device is missing, disable autocast with
            a warning.
        dtype: the lower-precision dtype, ember.bfloat16 (default) or ember.float16 on the CPU;
            any other dtype disables autocast with a warning, as in PyTorch.
        enabled: False makes the region run without autocast (useful inside an enabled one).
        cache_enabled: reuse the cast of each parameter within the region (default True).

    Example:
        >>> import ember
        >>> a, b = ember.randn(2, 3), ember.randn(3, 4)
        >>> with ember.autocast("cpu"):
        ...     c = a @ b
        >>> c.dtype
        ember.bfloat16

    The autocast state is per thread, as in torch: a region entered in one thread does not
    change what ops do in another.

    Differs from torch: ``device_type`` defaults to "cpu" (ember's only device).
    """

    def __init__(self, device_type="cpu", dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not isinstance(enabled, bool):
            raise TypeError(f"autocast(): argument 'enabled' must be bool, not "
                            f"{type(enabled).__name__}")
        self.device = _device(device_type).type
        self.fast_dtype = get_autocast_dtype(self.device) if dtype is None else D.to_dtype(dtype)
        self._cache_enabled = state.cache_enabled if cache_enabled is None else bool(cache_enabled)
        if enabled and self.device != "cpu":
            warnings.warn(f"{self.device.upper()} is not available to ember on this machine. "
                          "Disabling autocast.", UserWarning, stacklevel=2)
            enabled = False
        if enabled and self.fast_dtype not in _SUPPORTED_CPU_DTYPES:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCPU Autocast only supports dtypes of ember.bfloat16, "
                          "ember.float16 currently.", UserWarning, stacklevel=2)
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        if self.device != "cpu":
            return self  # another device's autocast never changes what CPU ops do
        self._prev = (state.enabled, state.dtype, state.cache_enabled)
        state.enabled = self._enabled
        state.dtype = self.fast_dtype
        state.cache_enabled = self._cache_enabled
        state.nesting += 1
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.device != "cpu":
            return False
        state.nesting -= 1
        if state.nesting == 0:
            clear_autocast_cache()
        state.enabled, state.dtype, state.cache_enabled = self._prev
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            # a fresh copy per call keeps recursive or concurrent calls from sharing _prev
            with copy.copy(self):
                return func(*args, **kwargs)

        return decorate_autocast


# --------------------------------------------------------------- custom autograd.Function help

def custom_fwd(fwd=None, *, device_type="cpu", cast_inputs=None):
    """Decorator for a custom ``autograd.Function.forward`` used under autocast.

    With ``cast_inputs`` (a floating dtype), floating inputs are cast to it and the forward runs
    with autocast disabled while autocast is enabled; without it the forward runs under the
    ambient autocast state. ``custom_bwd`` makes backward run with the forward's state.
    """
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    dev = _check_device_type(device_type, "custom_fwd")

    @functools.wraps(fwd)
    def decorate_fwd(ctx, *args, **kwargs):
        ctx._fwd_used_autocast = is_autocast_enabled(dev)
        ctx._autocast_dtype = get_autocast_dtype(dev)
        # custom_bwd returns gradients in these dtypes, the inputs' own, not cast_inputs'
        ctx._amp_input_dtypes = tuple(a.dtype if _eligible(a) else None for a in args)
        if cast_inputs is None or not ctx._fwd_used_autocast:
            return fwd(ctx, *args, **kwargs)
        target = D.to_dtype(cast_inputs)
        args = tuple(a.to(target) if _eligible(a) else a for a in args)
        kwargs = {k: v.to(target) if _eligible(v) else v for k, v in kwargs.items()}
        ctx._fwd_used_autocast = False
        with autocast(dev, enabled=False):
            return fwd(ctx, *args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type="cpu"):
    """Decorator for a custom ``autograd.Function.backward``: runs it with the forward's state."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    dev = _check_device_type(device_type, "custom_bwd")

    @functools.wraps(bwd)
    def decorate_bwd(ctx, *grads):
        enabled = getattr(ctx, "_fwd_used_autocast", False)
        dtype = getattr(ctx, "_autocast_dtype", None)
        with autocast(dev, dtype=dtype, enabled=enabled):
            out = bwd(ctx, *grads)
        dtypes = getattr(ctx, "_amp_input_dtypes", None)
        if dtypes is None:
            return out
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        outs = tuple(g.to(dt) if dt is not None and g is not None and g.dtype is not dt else g
                     for g, dt in zip(outs, dtypes + (None,) * (len(outs) - len(dtypes))))
        return outs[0] if single else outs

    return decorate_bwd
