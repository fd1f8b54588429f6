"""Lazy modules: layers whose input size is read from the first input they see.

``LazyLinear(out_features)`` starts with ``UninitializedParameter`` weights; a forward pre-hook
reads the input's feature size, materializes the parameters in place (the same objects, so an
optimizer built earlier still holds them), initializes them like the eager layer, and turns the
module into that layer (``cls_to_become``), as torch does.
"""
from __future__ import annotations

import ember

from ..parameter import UninitializedParameter, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Infers parameter shapes at the first forward; subclasses define initialize_parameters."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._lazy_hook = self.register_forward_pre_hook(LazyModuleMixin._infer_parameters)
        self._register_load_state_dict_pre_hook(self._lazy_load_hook)

    def _lazy_load_hook(self, state_dict, prefix, *args):
        """Loading a checkpoint into a lazy layer gives it the checkpoint's shapes, as torch
        does (d2l builds a lazy model, then load_state_dict before any forward)."""
        loaded = False
        for name, param in list(self._parameters.items()):
            incoming = state_dict.get(prefix + name)
            # a lazy layer's own (unmaterialized) state has no shape to take
            if param is not None and is_lazy(param) and incoming is not None and \
                    not is_lazy(incoming) and incoming.numel() != 0:
                param.materialize(tuple(incoming.shape))
                loaded = True
        for name, buf in list(self._buffers.items()):
            key = prefix + name
            if buf is not None and buf.numel() == 0 and key in state_dict and \
                    state_dict[key].numel() != 0:
                self._buffers[name] = ember.zeros(tuple(state_dict[key].shape), dtype=buf.dtype)
        if loaded and not self.has_uninitialized_params():
            self._sizes_from_parameters()

    def _sizes_from_parameters(self):
        """Set the size attribute (in_features...) from materialized parameters."""

    def has_uninitialized_params(self):
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(t is not None and is_lazy(t) for t in tensors)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}.initialize_parameters")

    @staticmethod
    def _infer_parameters(module, args):
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"{type(module).__name__}: parameters are still uninitialized "
                               "after the first forward.")
        module._lazy_hook.remove()
        del module._lazy_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become


def _features(input, feature_dim, unbatched_ndim, name):
    """The size of the feature/channel dim of the first input (unbatched inputs allowed)."""
    if input.ndim == unbatched_ndim:
        return input.shape[0]
    if input.ndim <= feature_dim:
        raise RuntimeError(f"{name}: expected an input with a dimension {feature_dim} to infer "
                           f"the size from; got shape {list(input.shape)}")
    return input.shape[feature_dim]


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last dim of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False, device=device, dtype=dtype)
        self.out_features = out_features
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def _sizes_from_parameters(self):
        self.in_features = self.weight.shape[1]

    def initialize_parameters(self, input, *args):
        if not self.has_uninitialized_params():
            return
        with ember.no_grad():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    def _lazy_init(self, out_channels, bias, dtype):
        self.out_channels = out_channels
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _sizes_from_parameters(self):
        w = self.weight.shape
        self.in_channels = w[0] if self.transposed else w[1] * self.groups

    def initialize_parameters(self, input, *args):
        if not self.has_uninitialized_params():
            return
        nd = len(self.kernel_size)
        with ember.no_grad():
            self.in_channels = _features(input, 1, nd + 1, type(self).__name__)
            if self.in_channels % self.groups:
                raise ValueError(f"{type(self).__name__}: in_channels must be divisible by "
                                 f"groups; got {self.in_channels} and groups={self.groups}")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _lazy_conv(base):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, *rest, bias=True,
                 device=None, dtype=None, **kwargs):
        # the conv __init__ runs with zero channels; the mixin's hook then fills them in
        base.__init__(self, 0, 0, kernel_size, stride, padding, *rest, bias=False,
                      device=device, dtype=dtype, **kwargs)
        self._lazy_init(out_channels, bias, dtype)
        self._lazy_hook = self.register_forward_pre_hook(LazyModuleMixin._infer_parameters)

    name = "Lazy" + base.__name__
    return type(name, (_LazyConvMixin, base), {
        "cls_to_become": base, "__init__": __init__, "__module__": __name__,
        "__qualname__": name,
        "__doc__": f"``{base.__name__}`` whose ``in_channels`` is read from the first input."})


LazyConv1d = _lazy_conv(Conv1d)
LazyConv2d = _lazy_conv(Conv2d)
LazyConv3d = _lazy_conv(Conv3d)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d)


class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__(0, eps, momentum, affine, track_running_stats, device, dtype)
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def _sizes_from_parameters(self):
        self.num_features = self.weight.shape[0]

    def initialize_parameters(self, input, *args):
        if not self.has_uninitialized_params():
            return
        with ember.no_grad():
            self.num_features = _features(input, 1, self._unbatched_ndim, type(self).__name__)
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                dt = self.running_mean.dtype   # the placeholder's, after any .double()
                self.running_mean = ember.zeros(self.num_features, dtype=dt)
                self.running_var = ember.ones(self.num_features, dtype=dt)
            self.reset_parameters()

    def has_uninitialized_params(self):
        if self.affine:
            return super().has_uninitialized_params()
        return self.num_features == 0


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """``BatchNorm1d`` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm1d
    _unbatched_ndim = 1


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """``BatchNorm2d`` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm2d
    _unbatched_ndim = 3


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """``BatchNorm3d`` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm3d
    _unbatched_ndim = 4


class _LazyInstanceNorm(_LazyNormBase):
    # torch's lazy instance norms default to affine=True, track_running_stats=True (the
    # batch-norm defaults), unlike the eager InstanceNorm*d; kept for parity
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__(eps, momentum, affine, track_running_stats, device, dtype)
        if affine and not bias:
            self.bias = None


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    """``InstanceNorm1d`` whose ``num_features`` is read from the first input."""

    cls_to_become = InstanceNorm1d
    _unbatched_ndim = 2


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    """``InstanceNorm2d`` whose ``num_features`` is read from the first input."""

    cls_to_become = InstanceNorm2d
    _unbatched_ndim = 3


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    """``InstanceNorm3d`` whose ``num_features`` is read from the first input."""

    cls_to_become = InstanceNorm3d
    _unbatched_ndim = 4
