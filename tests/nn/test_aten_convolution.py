"""torch.convolution / torch._convolution / torch.ops.aten.convolution: the one convolution
every conv layer lowers to in torch, named by FLOP counters (ptflops' aten table keys on
aten.convolution at import time) and by graphs."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F

_CASES = [  # weight shape, transposed, stride, padding, dilation, output_padding, groups
    ((4, 2, 3), False, [2], [1], [1], [0], 1),
    ((4, 2, 3, 3), False, [1, 2], [1, 0], [2, 1], [0, 0], 1),
    ((4, 1, 3, 3), False, [1], [1], [1], [0], 2),
    ((2, 3, 3, 3), True, [2, 2], [1, 1], [1, 1], [1, 1], 1),
    ((4, 2, 2, 2, 2), False, [1], [0], [1], [0], 1),
]


def _input(weight_shape, transposed, groups):
    channels = weight_shape[0] if transposed else weight_shape[1] * groups
    return ember.randn(1, channels, *([6] * (len(weight_shape) - 2)), dtype=ember.float64)


@pytest.mark.parametrize("case", _CASES)
def test_convolution_equals_the_layer_functionals(case):
    shape, transposed, stride, padding, dilation, output_padding, groups = case
    ember.manual_seed(0)
    x = _input(shape, transposed, groups)
    w = ember.randn(*shape, dtype=ember.float64)
    b = ember.randn(shape[1] * groups if transposed else shape[0], dtype=ember.float64)
    nd = len(shape) - 2
    if transposed:
        ref = getattr(F, f"conv_transpose{nd}d")(x, w, b, stride, padding, output_padding,
                                                  groups, dilation)
    else:
        ref = getattr(F, f"conv{nd}d")(x, w, b, stride, padding, dilation, groups)
    for fn in (ember.convolution, ember.ops.aten.convolution.default):
        out = fn(x, w, b, stride, padding, dilation, transposed, output_padding, groups)
        np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)
    out = ember._convolution(x, w, b, stride, padding, dilation, transposed, output_padding,
                             groups, False, False, True, True)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)


def test_convolution_gradients():
    x = ember.randn(1, 2, 5, 5, dtype=ember.float64, requires_grad=True)
    w = ember.randn(3, 2, 3, 3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda x, w: ember.convolution(x, w, None, [2], [1], [1], False, [0], 1), (x, w))


def test_convolution_wants_lists_of_ints():
    x, w = ember.randn(1, 2, 5, 5), ember.randn(3, 2, 3, 3)
    with pytest.raises(TypeError, match="convolution\\(\\): argument 'stride' must be tuple of "
                                        "ints, not int"):
        ember.convolution(x, w, None, 1, [0], [1], False, [0], 1)
    with pytest.raises(RuntimeError, match="convolution: expected a weight of 3, 4 or 5 dims"):
        ember.convolution(x, ember.randn(3, 2), None, [1], [0], [1], False, [0], 1)


@pytest.mark.parity
@pytest.mark.parametrize("case", _CASES)
def test_convolution_matches_torch(case):
    torch = pytest.importorskip("torch")
    shape, transposed, stride, padding, dilation, output_padding, groups = case
    ember.manual_seed(0)
    x = _input(shape, transposed, groups)
    w = ember.randn(*shape, dtype=ember.float64)
    ours = ember.convolution(x, w, None, stride, padding, dilation, transposed, output_padding,
                             groups)
    theirs = torch.convolution(torch.tensor(x.numpy()), torch.tensor(w.numpy()), None, stride,
                               padding, dilation, transposed, output_padding, groups)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
