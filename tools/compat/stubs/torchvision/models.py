"""torchvision.models offline: the ResNet-18 architecture (torchvision's layer names and child
order, so programs that replace conv1 or drop fc work) built from the torch API; pretrained
weights need the network, so asking for them raises under both implementations."""
import torch
from torch import nn


def _no_weights(*args, **kwargs):
    raise RuntimeError("torchvision stand-in: pretrained models need the network")


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        skip = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(y)) + skip)


class ResNet(nn.Module):
    def __init__(self, blocks=(2, 2, 2, 2), num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        widths, cin = (64, 128, 256, 512), 64
        for i, (w, n) in enumerate(zip(widths, blocks)):
            layers = []
            for j in range(n):
                layers.append(BasicBlock(cin, w, 2 if (j == 0 and i > 0) else 1))
                cin = w
            setattr(self, f"layer{i + 1}", nn.Sequential(*layers))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet18(weights=None, progress=True, **kwargs):
    if weights is not None:
        _no_weights()
    return ResNet(**kwargs)


vgg16 = vgg19 = resnet50 = _no_weights
# PyTorch-VAE's models package imports it at import time (DFCVAE builds it with weights)
vgg19_bn = _no_weights
# torchmetrics imports these when it finds torchvision (it finds this stand-in) and uses them only
# in metrics that need pretrained networks
VGG16_Weights = None
