"""Listing 1 of the PyTorch paper, run with ember.

The model below is the paper's code verbatim (only the imports name ember). As printed, the
paper's ``FullBasicModel`` hands the 4-D output of ``nn.Conv2d(1, 128, 3)`` to ``torch.mm``,
which accepts only 2-D matrices; in PyTorch too this works only when the convolution's output
is flattened to (N, 128). We keep the listing untouched and run it faithfully by

* feeding gray-scale images of shape (N, 1, 3, 3): the 3x3 convolution then yields
  (N, 128, 1, 1), one 128-vector per image, and
* subclassing the model (``RunnableModel``) so that the convolution's output is flattened to
  (N, 128) before ``self.fc`` — the one line the paper leaves implicit. Every other step
  (conv, relu, the custom ``LinearLayer`` with ``torch.mm``, softmax) is the listing's.

``nn.functional.softmax`` is called without ``dim`` exactly as in the paper, which emits
torch's implicit-dimension deprecation warning and picks dim=1 for the 2-D logits.

Run: ``python examples/listing1.py``
"""
import warnings

import ember as torch
from ember import nn
from ember.nn import Module


class LinearLayer(Module):
    def __init__(self, in_sz, out_sz):
        super().__init__()
        t1 = torch.randn(in_sz, out_sz)
        self.w = nn.Parameter(t1)
        t2 = torch.randn(out_sz)
        self.b = nn.Parameter(t2)

    def forward(self, activations):
        t = torch.mm(activations, self.w)
        return t + self.b


class FullBasicModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 128, 3)
        self.fc = LinearLayer(128, 10)

    def forward(self, x):
        t1 = self.conv(x)
        t2 = nn.functional.relu(t1)
        t3 = self.fc(t2)
        return nn.functional.softmax(t3)


class RunnableModel(FullBasicModel):
    """FullBasicModel with the conv output flattened to (N, 128) before the custom layer."""

    def forward(self, x):
        t1 = self.conv(x)
        t2 = nn.functional.relu(t1).flatten(1)
        t3 = self.fc(t2)
        return nn.functional.softmax(t3)


def main():
    torch.manual_seed(0)
    model = RunnableModel()
    x = torch.randn(4, 1, 3, 3)  # four 3x3 gray-scale images
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the listing's softmax without dim
        probs = model(x)
    probs.sum().backward()
    print(model)
    print("output shape:", tuple(probs.shape))
    print("rows sum to 1:", probs.sum(1).detach())
    print("parameters:", [name for name, _ in model.named_parameters()])
    return probs


if __name__ == "__main__":
    main()
