"""No pretrained weights offline: constructors raise, so a program that needs them fails loudly
under both implementations instead of downloading."""


def _no_weights(*args, **kwargs):
    raise RuntimeError("torchvision stand-in: pretrained models need the network")


resnet18 = vgg16 = vgg19 = _no_weights
