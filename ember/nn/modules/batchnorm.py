"""Batch normalization: BatchNorm1d/2d/3d (Ioffe & Szegedy, 2015)."""
from __future__ import annotations

import ember

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module, check_sizes

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    """Per-channel affine parameters and running statistics shared by batch / instance norm."""

    _version = 2  # version 2 added num_batches_tracked
    _default_affine = True
    _default_track = True

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        ember._backend.check_device(device)
        check_sizes(type(self).__name__, num_features=num_features)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(ember.empty(num_features, dtype=dtype))
            if bias:
                self.bias = Parameter(ember.empty(num_features, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", ember.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", ember.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", ember.tensor(0, dtype=ember.long))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            with ember.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def _check_channels(self, input):
        shape = input._data.shape if isinstance(input, ember.Tensor) else input.shape
        if len(shape) >= 2 and shape[1] != self.num_features:
            raise RuntimeError(f"{self!r}: expected input with {self.num_features} channels "
                               f"(dim 1), got input of shape {tuple(input.shape)}.")

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and \
                key not in state_dict:
            # checkpoints from before num_batches_tracked existed start counting at 0
            state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                               else ember.tensor(0, dtype=ember.long))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        self._check_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        # buffers read once each: every read of a parameter or buffer goes through
        # Module.__getattr__ (~0.6 us), and this runs for each BatchNorm of every step
        count = self.num_batches_tracked
        running_mean, running_var = self.running_mean, self.running_var
        if self.training and self.track_running_stats and count is not None:
            if not count._meta:  # a meta buffer has no count to add to
                count._data += 1  # a buffer outside autograd: no op needed
            count._bump_version()
            if self.momentum is None and not count._meta:  # cumulative
                factor = 1.0 / float(count.item())
        use_batch_stats = self.training or (running_mean is None and running_var is None)
        keep_running = not self.training or self.track_running_stats
        return F.batch_norm(input, running_mean if keep_running else None,
                            running_var if keep_running else None, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) input.

    Args:
        num_features: C. eps: added to the variance. momentum: running-stat update factor
            (None: cumulative average). affine: learn weight and bias. track_running_stats:
            keep running statistics (used in eval mode).

    Example:
        >>> import ember
        >>> bn = ember.nn.BatchNorm1d(3)
        >>> bn(ember.randn(8, 3)).shape
        ember.Size([8, 3])
    """

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: expected 2D or 3D input (got {input.ndim}D "
                             "input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) input (see BatchNorm1d)."""

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"{type(self).__name__}: expected 4D input (got {input.ndim}D "
                             "input)")


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) input (see BatchNorm1d)."""

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"{type(self).__name__}: expected 5D input (got {input.ndim}D "
                             "input)")


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose training statistics cover the batches of every rank of a process group.

    In training mode with an initialised process group of more than one rank, the per-channel
    sums are all-reduced in forward and the gradient's sums in backward, so N ranks with
    batches of B behave as one BatchNorm on the concatenated N*B batch. Otherwise (eval mode,
    single process) it is a plain BatchNorm over (N, C, *) input.

    Args: as BatchNorm1d, plus process_group: the group to synchronise over (default: all).

    Differs from torch: runs on the CPU, where torch's SyncBatchNorm requires a GPU.

    Example:
        >>> import ember
        >>> ember.nn.SyncBatchNorm(3)(ember.randn(4, 3, 2)).shape
        ember.Size([4, 3, 2])
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def _synchronised(self):
        dist = ember.distributed
        if not self.training or not dist.is_initialized():
            return False
        return dist.get_world_size(self.process_group) > 1

    def forward(self, input):
        if not self._synchronised():
            return super().forward(input)
        from ._functions import SyncBatchNormFunction
        self._check_input_dim(input)
        self._check_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked._data += 1
            self.num_batches_tracked._bump_version()
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.item())
        running = self.track_running_stats
        stats = (self.running_mean, self.running_var) if running else (None, None)
        return SyncBatchNormFunction.apply(input, self.weight, self.bias, stats, self.eps,
                                           factor, self.process_group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm*d replaced by a SyncBatchNorm sharing its state."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                module.affine, module.track_running_stats, process_group,
                                bias=module.bias is not None or not module.affine)
            if module.affine:
                with ember.no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return out
