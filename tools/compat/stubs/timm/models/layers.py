"""Stand-in for the two `timm.models.layers` names ConvNeXt's model files import: trunc_normal_
(an initialiser, here torch.nn.init's) and DropPath (stochastic depth: in training, each sample's
residual branch is zeroed with probability drop_prob and the kept ones scaled by 1/keep)."""
import torch


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    return torch.nn.init.trunc_normal_(tensor, mean=mean, std=std, a=a, b=b)


class DropPath(torch.nn.Module):
    def __init__(self, drop_prob=0.0, scale_by_keep=True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        if self.drop_prob == 0.0 or not self.training:
            return x
        keep = 1.0 - self.drop_prob
        shape = (x.shape[0],) + (1,) * (x.dim() - 1)
        mask = x.new_empty(shape).bernoulli_(keep)
        return x * mask / keep if self.scale_by_keep else x * mask
