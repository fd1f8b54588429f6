"""Optimizer: the base class every algorithm in ``ember.optim`` builds on.

An optimizer owns ``param_groups`` (a list of dicts: ``params`` plus per-group options filled from
``defaults``) and ``state`` (a dict keyed by parameter tensor holding that parameter's buffers as
ember tensors, with torch's key names). ``step()`` runs under ``no_grad`` with the step hooks
around it; subclasses implement it with one fused update per parameter (``_elementwise_update``).

Differs from torch: ``foreach``, ``fused``, ``capturable`` and ``differentiable`` are accepted and
recorded in the group for compatibility but change nothing (every step is a fused numba kernel
per parameter on the CPU, and the update is not differentiable). ``load_state_dict`` copies the
state tensors instead of possibly sharing them with the dict passed in, and keeps NAdam's
``mu_product`` in its saved dtype (torch casts it to the parameter's dtype, so a resumed torch run
drifts from an uninterrupted one; ember's resumes bit-identically).
"""
from __future__ import annotations

import copy
import inspect
import itertools
import warnings
from collections import OrderedDict, defaultdict
from typing import Any

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make
from ..autograd.grad_mode import _state as _grad_state

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Singleton marking a default that every param group must specify."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class _HookHandle:
    """Returned by the register_*_hook methods; ``remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self.id = next(self._ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_global_step_pre_hooks: dict = OrderedDict()
_global_step_post_hooks: dict = OrderedDict()


def register_optimizer_step_pre_hook(hook) -> _HookHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run before every optimizer's step."""
    handle = _HookHandle(_global_step_pre_hooks)
    _global_step_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook) -> _HookHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run after every optimizer's step."""
    handle = _HookHandle(_global_step_post_hooks)
    _global_step_post_hooks[handle.id] = hook
    return handle


def _hooked_step(step):
    """Wrap a subclass's ``step``: pre hooks, ``no_grad``, the step, post hooks."""

    def wrapper(self, *args, **kwargs):
        if getattr(self, "_in_step", False):  # super().step() from an overriding subclass
            return step(self, *args, **kwargs)
        if "_optimizer_step_pre_hooks" not in self.__dict__:
            # Optimizer.__init__ never ran (accelerate's AcceleratedOptimizer wraps another
            # optimizer and skips it): torch patches step in __init__, so such a step runs as
            # written, with no hooks and no no_grad
            self._opt_called = True  # still seen by a scheduler, as torch's patched step is
            return step(self, *args, **kwargs)
        for hook in itertools.chain(_global_step_pre_hooks.values(),
                                    self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{hook} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
                args, kwargs = result
        prev = _grad_state.enabled
        self._in_step = True
        _grad_state.enabled = False
        try:
            out = step(self, *args, **kwargs)
        finally:
            _grad_state.enabled = prev
            self._in_step = False
        self._opt_called = True  # read by the lr schedulers' call-order warning
        for hook in itertools.chain(self._optimizer_step_post_hooks.values(),
                                    _global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    wrapper.__name__ = step.__name__
    wrapper.__qualname__ = step.__qualname__
    wrapper.__doc__ = step.__doc__
    wrapper.__wrapped__ = step
    wrapper._hooked = True
    return wrapper


class Optimizer:
    """Base class for all optimizers.

    Args:
        params: an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts defining
            parameter groups (each with a ``params`` entry plus options overriding ``defaults``).
        defaults: the default value of every optimization option.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults: dict[str, Any]):
        self.defaults = defaults
        self._optimizer_step_pre_hooks: dict = OrderedDict()
        self._optimizer_step_post_hooks: dict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: dict = OrderedDict()
        self._optimizer_state_dict_post_hooks: dict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: dict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: dict = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {params.type()}")
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (missing ones come from defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        tensors = [p[1] if isinstance(p, tuple) else p for p in params]
        if names and len(names) != len(tensors):
            raise ValueError("all optimizer params should be with/without names. Some param "
                             "names are missing")
        param_group["params"] = tensors
        if names:
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__module__}.{type(p).__name__}")
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or
                                                                       p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        ids = [id(p) for p in tensors]
        if len(ids) != len(set(ids)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error", stacklevel=3)
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                kind = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {kind} to the optimizer")
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ------------------------------------------------------------------ gradients
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors (to None by default, else to zero)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g._data[...] = 0
                g._bump_version()

    def step(self, closure=None):
        """Perform one optimization step (re-evaluating the loss with ``closure`` if given)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ hooks
    def register_step_pre_hook(self, hook) -> _HookHandle:
        """``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)`` before step."""
        return self._add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook) -> _HookHandle:
        """``hook(optimizer, args, kwargs) -> None`` after step."""
        return self._add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> _HookHandle:
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> _HookHandle:
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False) -> _HookHandle:
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False) -> _HookHandle:
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    @staticmethod
    def _add_hook(hooks: dict, hook, prepend: bool = False) -> _HookHandle:
        handle = _HookHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    # ------------------------------------------------------------------ state dict
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [...]}`` with parameters as integer ids.

        Parameters are numbered in order of appearance across the groups, as in torch, so the
        dict can be loaded into a fresh optimizer over the same parameters. The state tensors
        are the live buffers (not copies); save or deep-copy the dict to snapshot it.
        """
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        out = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, out)
            if result is not None:
                out = result
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a dict made by ``state_dict()``: options per group and a copy of every buffer.

        Floating state tensors are cast to their parameter's dtype, except ``step`` (a counter,
        kept as saved), so resuming continues the exact trajectory of the saved run.
        """
        state_dict = dict(state_dict)
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast_state(param, v)
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        # as torch: the loaded state goes in through __setstate__, where a subclass fixes up
        # what it needs (timm's Adafactor recasts its momentum there)
        self.__setstate__({"state": state, "param_groups": new_groups})
        if inspect.unwrap(type(self).step).__module__.startswith(__package__ + "."):
            _steps_as_tensors(self.state)  # NOTE [Loaded step counters]
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # ------------------------------------------------------------------ misc
    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        # as torch's: a loaded (or unpickled) optimizer's defaults gain differentiable=False,
        # so a group added to it afterwards carries that key
        if "defaults" in self.__dict__:
            self.defaults.setdefault("differentiable", False)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())

    def __repr__(self) -> str:
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            if i:
                lines.append("")  # torch's repr has an empty line between groups
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


# 0-d counters keep their saved dtype. torch also keeps "step" but casts NAdam's "mu_product" to
# the parameter dtype, which changes the arithmetic after a resume; keeping it is bit-identical.
_COUNTER_KEYS = ("step", "mu_product")


def _cast_state(param: Tensor, value, key=None):
    """A deep copy of a loaded state value; floating tensors take the parameter's dtype."""
    if isinstance(value, Tensor):
        arr = value._data
        if key not in _COUNTER_KEYS and param.is_floating_point():
            arr = arr.astype(param._data.dtype, copy=True)
        else:
            arr = np.array(arr, copy=True)
        return _make(arr)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return copy.deepcopy(value)


# NOTE [Loaded step counters]
# A checkpoint's "step" is loaded as saved: a tensor stays a tensor, a Python number (older
# checkpoints, and optimizers of other libraries that count in Python) stays a number, as torch
# does, because an optimizer counting in Python does its bias corrections in float64 and a
# float32 counter would change them. ember's own step() updates a 0-d tensor counter in place,
# so when the step() that will run is ember's, a number becomes that tensor after loading (torch's
# built-in optimizers convert in their __setstate__).
def _steps_as_tensors(state):
    for st in state.values():
        v = st.get("step") if isinstance(st, dict) else None
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            st["step"] = _step_tensor(float(v))


# ---------------------------------------------------------------------------------------------
# helpers shared by the algorithms

_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _scalar_dtype():
    """dtype of 0-d counters such as ``step``: float64 iff that is the default dtype (torch)."""
    return np.float64 if D.get_default_dtype() is D.float64 else np.float32


def _step_tensor(value: float = 0.0) -> Tensor:
    return _make(np.array(value, dtype=_scalar_dtype()))


def _increment(step: Tensor) -> float:
    """Add one to a ``step`` counter in place and return the new count as a Python float."""
    arr = step._data
    arr[...] = arr + 1
    step._bump_version()
    return float(arr)


def _zeros_like(p: Tensor) -> Tensor:
    return _make(np.zeros(p._data.shape, dtype=p._data.dtype))


def _to_float(x) -> float:
    """Options may be Python numbers or 0-d / one-element tensors (e.g. a tensor lr)."""
    return float(x)


def _grads(group: dict[str, Any], name: str, only=None):
    """Yield (param, grad) for the params of a group that have a gradient (and whose id() is in
    ``only``, when given)."""
    for p in group["params"]:
        if only is not None and id(p) not in only:
            continue
        g = p.grad
        if g is None:
            continue
        if g._data.shape != p._data.shape:
            raise RuntimeError(f"{name}.step: the gradient of a parameter has shape "
                               f"{tuple(g._data.shape)} but the parameter has shape "
                               f"{tuple(p._data.shape)}; expected equal shapes.")
        yield p, g


def _kernel_arrays(param: Tensor, grad: Tensor, states: tuple):
    """The flat arrays a kernel updates in place, ``[p, g, *states]`` (the parameter's own array
    standing in for an unused ``None`` state), when all are C-contiguous arrays of one kernel
    dtype (float32/float64) and the parameter is writable; None otherwise (a copy is needed)."""
    pa, ga = param._data, grad._data
    dt = pa.dtype
    if dt not in _KERNEL_DTYPES or ga.dtype != dt or not (
            pa.flags.c_contiguous and pa.flags.writeable and ga.flags.c_contiguous):
        return None
    p1 = pa.reshape(-1)
    arrays = [p1, ga.reshape(-1)]
    for s in states:
        if s is None:
            arrays.append(p1)
            continue
        a = s._data
        if a.dtype != dt or not a.flags.c_contiguous:
            return None
        arrays.append(a.reshape(-1))
    return arrays


def _kernel_scalars(dtype, floats: tuple) -> tuple:
    """Numbers as NumPy scalars of the kernel dtype for a parameter of ``dtype`` (float32 for
    the half types): NOTE [Optimizer kernel numerics and speed] in _kernels.py. One conversion
    for all of them; iterating the array yields NumPy scalars."""
    work_dt = dtype if dtype in _KERNEL_DTYPES else np.dtype(np.float32)
    return tuple(np.array(floats, dtype=work_dt))


def _columns(items, n_arrays: int, size: int, dtype) -> list:
    """The flat arrays of queued parameters ``[(param, arrays), ...]`` as ``n_arrays`` tuples of
    ``size`` arrays each (array j of every parameter), padded with empty arrays: the fixed-length
    arguments of a kernel over many parameters (NOTE [One Adam call for many parameters] in
    _kernels.py), so that numba compiles one specialisation per dtype."""
    pad = _EMPTY.get(dtype)
    if pad is None:
        pad = _EMPTY[dtype] = np.empty(0, dtype)
    return [tuple([a[j] for _, a in items] + [pad] * (size - len(items)))
            for j in range(n_arrays)]


_EMPTY: dict = {}  # dtype -> a 0-element array padding `_columns`


def _elementwise_update(kernel, param: Tensor, grad: Tensor, states: tuple, *scalars) -> None:
    """Run ``kernel(p, g, *states, *scalars)`` on flat arrays, updating param and states.

    Fast path: every array is a C-contiguous float32/float64 buffer of the parameter's dtype, so
    the kernel works directly on their memory (`_kernel_arrays`). Otherwise (non-contiguous
    views, float16, bfloat16, complex, a gradient of another dtype) it works on contiguous
    copies in a kernel dtype (float32 for the half types) and the results are written back.
    ``None`` in ``states`` is an unused buffer. Scalars are numbers cast to the kernel dtype (see
    NOTE [Optimizer kernel numerics and speed] in _kernels.py) followed by the kernel's bool
    flags, which pass through.
    """
    n_float = len(scalars)
    while n_float and isinstance(scalars[n_float - 1], bool):
        n_float -= 1
    flags = scalars[n_float:]
    fast = _kernel_arrays(param, grad, states)
    if fast is not None:
        kernel(*fast, *_kernel_scalars(fast[0].dtype, scalars[:n_float]), *flags)
        param._bump_version()
        return
    arrays = [param._data, grad._data] + [s._data if s is not None else None for s in states]
    if param._data.dtype.kind == "c":
        # a complex parameter is updated as pairs of reals (torch: view_as_real), so that
        # Adam's second moment is taken per part; the trailing axis of length 1 makes any
        # strided array splittable in place
        arrays = [a if a is None else a[..., np.newaxis].view(a.real.dtype) for a in arrays]
    pa = arrays[0]
    work_dt = pa.dtype if pa.dtype in _KERNEL_DTYPES else np.dtype(np.float32)
    converted = _kernel_scalars(pa.dtype, scalars[:n_float])
    if (pa.dtype == work_dt and pa.flags.writeable
            and all(a is None or (a.dtype == work_dt and a.flags.c_contiguous) for a in arrays)):
        # a complex parameter whose real view needs no copy
        flat = [a.reshape(-1) if a is not None else None for a in arrays]
        kernel(*[a if a is not None else flat[0] for a in flat], *converted, *flags)
    else:
        if not pa.flags.writeable:
            raise RuntimeError("optimizer step: a parameter's memory is read-only (it wraps a "
                               "read-only or broadcast NumPy array); clone it first.")
        copied = [a is not None and not (a.dtype == work_dt and a.flags.c_contiguous)
                  for a in arrays]
        flat = [np.ascontiguousarray(a, dtype=work_dt).reshape(-1) if a is not None else None
                for a in arrays]
        kernel(*[a if a is not None else flat[0] for a in flat], *converted, *flags)
        for i in range(len(arrays)):
            if copied[i] and i != 1:  # write results back (the gradient is only read)
                np.copyto(arrays[i], flat[i].reshape(arrays[i].shape), casting="unsafe")
    param._bump_version()


def _check_lr(lr) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= float(lr):
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_nonneg(name: str, value) -> None:
    """ValueError ``Invalid <name> value: <value>`` (torch's wording) unless value >= 0."""
    if not 0.0 <= float(value):
        raise ValueError(f"Invalid {name} value: {value}")


def _check_fused(name: str, foreach, fused) -> None:
    """RuntimeError (torch's) when both implementation switches are on: ember ignores both
    (every step is one fused kernel), but a program asking for both is refused by torch."""
    if foreach and fused:
        raise RuntimeError(f"{name}: `fused` and `foreach` cannot be `True` together.")


def _check_betas(betas) -> None:
    for i, b in enumerate(betas):
        if isinstance(b, Tensor) and b.numel() != 1:
            raise ValueError(f"Tensor betas[{i}] must be 1-element")
        if not 0.0 <= float(b) < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")


def _closure_loss(closure):
    """Evaluate a step's closure with grad enabled (step itself runs under no_grad)."""
    if closure is None:
        return None
    prev = _grad_state.enabled
    _grad_state.enabled = True
    try:
        return closure()
    finally:
        _grad_state.enabled = prev
