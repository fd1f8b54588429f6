"""torchvision.ops stand-in: `ops.misc.FrozenBatchNorm2d`, which timm's norm layers import at
import time (timm.layers.norm_act, create_norm and timm.utils.model)."""
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



def _not_provided(*args, **kwargs):
    raise NotImplementedError("torchvision stand-in: box operations are not provided")


# torchmetrics imports these at import time when it finds torchvision (it finds this stand-in)
box_iou = box_area = box_convert = _not_provided
distance_box_iou = generalized_box_iou = complete_box_iou = _not_provided
