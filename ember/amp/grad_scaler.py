"""``ember.amp.GradScaler``: dynamic loss scaling for mixed-precision training.

The loss is multiplied by a scale before backward so small lower-precision gradients do not
flush to zero; ``unscale_`` divides the gradients back and records whether any is inf/NaN;
``step`` skips the optimizer step when one is; ``update`` backs the scale off after an overflow
and grows it after ``growth_interval`` clean steps. The arithmetic on the scale is float32, as in
PyTorch, so scales and skip decisions agree step for step.
"""
from __future__ import annotations

import enum
import warnings

import numpy as np

from .. import _dtype as D
from .._backend import device as _device
from ..autograd.grad_mode import no_grad

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scale the loss, unscale and check the gradients, skip overflowing steps, adapt the scale.

    Args:
        device: "cpu" (default). "cuda" and other accelerators are accepted and, as PyTorch does
            when the device is missing, disable the scaler with a warning.
        init_scale: the scale before the first update (2**16).
        growth_factor: multiplies the scale after ``growth_interval`` steps without inf/NaN.
        backoff_factor: multiplies the scale after a step whose gradients held inf/NaN.
        growth_interval: clean steps between growths.
        enabled: False makes every method an exact pass-through (``scale`` returns its input,
            ``step`` just calls ``optimizer.step()``).

    Example:
        >>> import ember
        >>> w = ember.ones(2, requires_grad=True)
        >>> scaler = ember.amp.GradScaler(init_scale=8.0)
        >>> scaler.scale((w * 3).sum()).item()
        48.0

    Differs from torch: ``device`` defaults to "cpu" (PyTorch: "cuda"), ember's only device.
    """

    def __init__(self, device="cpu", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = _device(device).type
        if enabled and self._device != "cpu":
            warnings.warn(f"ember.amp.GradScaler is enabled, but {self._device.upper()} is not "
                          "available to ember on this machine.  Disabling.", UserWarning,
                          stacklevel=2)
            enabled = False
        self._enabled = bool(enabled)
        if growth_factor <= 1.0:
            raise AssertionError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise AssertionError("The backoff factor must be < 1.0.")
        if not isinstance(growth_interval, int) or growth_interval <= 0:
            raise AssertionError(f"growth_interval must be a positive int; got {growth_interval!r}")
        self._init_scale = float(init_scale)
        self._scale = None  # float32 scale, created lazily by the first scale() call
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker = None
        self._per_optimizer_states = {}

    # ------------------------------------------------------------------------------ scaling
    def _check_scale_growth_tracker(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate "
                                 "your script did not use scaler.scale(loss or outputs) earlier "
                                 "in the iteration.")

    def scale(self, outputs):
        """``outputs`` (a Tensor, or a list/tuple/iterable of them) multiplied by the scale."""
        if not self._enabled:
            return outputs
        from .._tensor import Tensor
        if self._scale is None:
            self._scale = np.float32(self._init_scale)
            self._growth_tracker = self._init_growth_tracker
        scale = _scale_tensor(self._scale)

        def apply(val):
            if isinstance(val, Tensor):
                return val * scale
            if isinstance(val, (list, tuple)):
                return type(val)(apply(v) for v in val)
            if hasattr(val, "__iter__") and not isinstance(val, (str, bytes, dict)):
                return map(apply, val)  # other iterables: lazily, as PyTorch does
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale in place and record inf/NaN in them.

        Call it at most once per optimizer between updates (e.g. before gradient clipping);
        ``step`` calls it when it was not called.
        """
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states.setdefault(id(optimizer), _fresh_optimizer_state())
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal is computed in double then rounded to float32, like PyTorch
        inv_scale = float(np.float32(1.0 / np.float64(self._scale)))
        state["found_inf_per_device"] = {"cpu": self._unscale_grads(optimizer, inv_scale)}
        state["stage"] = OptState.UNSCALED

    @staticmethod
    def _unscale_grads(optimizer, inv_scale):
        from .._tensor import _make
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype is D.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if getattr(g, "is_sparse", False):
                        g = g._v  # a sparse gradient: unscale its values
                    # every gradient is unscaled even after an inf was found, as in PyTorch
                    found = found or not bool(np.isfinite(g._data.astype(np.float32)).all())
                    g.mul_(inv_scale)
        return _make(np.array(1.0 if found else 0.0, dtype=np.float32))

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless done), then ``optimizer.step(*args, **kwargs)`` unless a gradient
        held inf/NaN; returns what ``optimizer.step`` returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states.setdefault(id(optimizer), _fresh_optimizer_state())
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        found = state["found_inf_per_device"]
        if len(found) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in found.values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Adapt the scale from the inf checks of this iteration (or set ``new_scale``)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        if new_scale is not None:
            from .._tensor import Tensor
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise AssertionError("new_scale should be a single-element tensor; got "
                                         f"shape {list(new_scale.shape)}")
                if new_scale.requires_grad:
                    raise AssertionError("new_scale should not require grad.")
                new_scale = new_scale.item()
            elif not isinstance(new_scale, (int, float)):
                raise AssertionError("new_scale should be a float or a 1-element tensor; got "
                                     f"{type(new_scale).__name__}")
            self._scale = np.float32(new_scale)
        else:
            found_infs = [v.item() for st in self._per_optimizer_states.values()
                          for v in st["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._update_scale(sum(found_infs) > 0)
        self._per_optimizer_states = {}

    def _update_scale(self, found_inf):
        # float32 arithmetic on the scale, like PyTorch's _amp_update_scale_
        if found_inf:
            self._scale = np.float32(self._scale * np.float32(self._backoff_factor))
            self._growth_tracker = 0
            return
        successful = self._growth_tracker + 1
        if successful == self._growth_interval:
            grown = np.float32(self._scale * np.float32(self._growth_factor))
            if np.isfinite(grown):
                self._scale = grown
            self._growth_tracker = 0
        else:
            self._growth_tracker = successful

    # ---------------------------------------------------------------------------- accessors
    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale)

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self):
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return self._growth_tracker

    def is_enabled(self):
        return self._enabled

    # ------------------------------------------------------------------------ checkpointing
    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval, _growth_tracker ({} if off)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = np.float32(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            # like PyTorch, a pickled scaler restarts from its current scale
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


def _scale_tensor(value):
    from .._tensor import _make
    # a 0-d float32 tensor: it keeps bfloat16 outputs bfloat16 and makes integer ones float32,
    # the type promotion PyTorch's scaler gets from its 0-d scale
    return _make(np.array(value, dtype=np.float32))
