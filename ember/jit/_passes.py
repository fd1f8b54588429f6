"""Graph passes used by ``jit.optimize_for_inference``."""
from __future__ import annotations

import ember
import ember.nn as nn


def _fused_conv(conv, bn):
    """A copy of ``conv`` computing ``bn(conv(x))`` (eval-mode BatchNorm folded into it)."""
    import copy
    fused = copy.deepcopy(conv)
    w = conv.weight.detach()
    b = conv.bias.detach() if conv.bias is not None else ember.zeros(w.shape[0], dtype=w.dtype)
    # bn(y) = gamma * (y - mean) / sqrt(var + eps) + beta: scale each output channel
    scale = bn.weight.detach() / ember.sqrt(bn.running_var + bn.eps) if bn.affine else \
        1.0 / ember.sqrt(bn.running_var + bn.eps)
    shift = (bn.bias.detach() if bn.affine else 0.0) - bn.running_mean * scale
    fused.weight = nn.Parameter(w * scale.reshape(-1, *([1] * (w.dim() - 1))))
    fused.bias = nn.Parameter(b * scale + shift)
    return fused


def fold_conv_bn(gm) -> int:
    """Replace each ``bn(conv(x))`` pair (conv used only by bn, both eval mode) by one conv.
    Returns how many pairs were folded."""
    modules = dict(gm.named_modules())
    folded = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_module" or not node.args:
            continue
        bn = modules.get(node.target)
        prev = node.args[0]
        if not isinstance(bn, (nn.BatchNorm1d, nn.BatchNorm2d)) or bn.training or \
                getattr(prev, "op", None) != "call_module" or len(prev.users) != 1:
            continue
        conv = modules.get(prev.target)
        if not isinstance(conv, (nn.Conv1d, nn.Conv2d)) or bn.running_mean is None:
            continue
        parent, _, name = prev.target.rpartition(".")
        owner = gm.get_submodule(parent) if parent else gm
        setattr(owner, name, _fused_conv(conv, bn))
        node.replace_all_uses_with(prev)
        gm.graph.erase_node(node)
        folded += 1
        if not gm.graph.find_nodes(op="call_module", target=node.target):
            bn_parent, _, bn_name = node.target.rpartition(".")
            delattr(gm.get_submodule(bn_parent) if bn_parent else gm, bn_name)
    gm.recompile()
    return folded
