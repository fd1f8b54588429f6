"""torchvision.ops stand-in: `ops.misc.FrozenBatchNorm2d`, which timm's norm layers import at
import time (timm.layers.norm_act, create_norm and timm.utils.model), and `DeformConv2d` as a
name (ptflops maps it at import time)."""
import sys
import types

import torch


class FrozenBatchNorm2d(torch.nn.Module):
    """Batch normalisation over channels (dim 1) with fixed statistics and affine parameters:
    all four are buffers, so nothing here trains."""

    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", torch.ones(num_features))
        self.register_buffer("bias", torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        state_dict.pop(prefix + "num_batches_tracked", None)  # a BatchNorm2d's counter
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def forward(self, x):
        scale = self.weight * (self.running_var + self.eps).rsqrt()
        shift = self.bias - self.running_mean * scale
        return x * scale.reshape(1, -1, 1, 1) + shift.reshape(1, -1, 1, 1)

    def extra_repr(self):
        return f"{self.weight.shape[0]}, eps={self.eps}"


# torchvision.ops is a package in torchvision; its `misc` submodule is registered here
misc = types.ModuleType(__name__ + ".misc")
misc.FrozenBatchNorm2d = FrozenBatchNorm2d
sys.modules[misc.__name__] = misc



class DeformConv2d(torch.nn.Module):
    """Deformable convolution's module, present so that code which keys tables by it at import
    time (ptflops' MODULES_MAPPING) loads; the sampling kernel itself is not provided."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True):
        super().__init__()
        k = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, k
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.weight = torch.nn.Parameter(torch.empty(out_channels, in_channels // groups, *k))
        self.bias = torch.nn.Parameter(torch.zeros(out_channels)) if bias else None

    def forward(self, input, offset, mask=None):
        raise NotImplementedError("torchvision stand-in: deformable convolution is not provided")


def _not_provided(*args, **kwargs):
    raise NotImplementedError("torchvision stand-in: box operations are not provided")


# torchmetrics imports these at import time when it finds torchvision (it finds this stand-in)
box_iou = box_area = box_convert = _not_provided
distance_box_iou = generalized_box_iou = complete_box_iou = _not_provided
