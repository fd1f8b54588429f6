"""Convert the weights of convolutions to a memory format (torch.nn.utils.memory_format)."""
from __future__ import annotations

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes):
    # walk the tree by hand: only the convolutions change, every other module is left as is
    if isinstance(module, classes):
        weight = module.weight.detach().clone().contiguous(memory_format=memory_format)
        module.weight.data = weight
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Give the weight of every Conv2d / ConvTranspose2d in ``module`` (itself included) the
    layout ``memory_format`` (e.g. ``ember.channels_last``); returns ``module``, changed in place.

    Values, shapes and parameters' identities are unchanged; an optimizer built before keeps
    working.

    Example:
        >>> import ember
        >>> net = ember.nn.Sequential(ember.nn.Conv2d(2, 3, 3))
        >>> convert_conv2d_weight_memory_format(net, ember.channels_last) is net
        True
    """
    from ..modules.conv import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """As :func:`convert_conv2d_weight_memory_format`, for Conv3d / ConvTranspose3d weights
    (``ember.channels_last_3d``)."""
    from ..modules.conv import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
