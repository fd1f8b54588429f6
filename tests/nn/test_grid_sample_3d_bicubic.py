"""grid_sample on 5-D (volumetric) input and with mode='bicubic': values and gradients of the
input and the grid against torch 2.13 for every padding mode and align_corners, gradcheck and
gradgradcheck in float64, and torch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn.functional import grid_sample
from ember.testing import assert_close

CASES = [("bicubic", (2, 3, 5, 6), (2, 4, 3, 2)),
         ("bilinear", (2, 2, 4, 5, 6), (2, 3, 2, 4, 3)),
         ("nearest", (2, 2, 4, 5, 6), (2, 3, 2, 4, 3))]


@pytest.mark.parity
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode, shape, grid_shape", CASES)
def test_grid_sample_matches_torch(mode, shape, grid_shape, padding_mode, align_corners):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    g = rng.uniform(-1.3, 1.3, grid_shape)      # some points outside: padding matters
    results = []
    for lib in (ember, torch):
        X, G = lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True)
        out = lib.nn.functional.grid_sample(X, G, mode=mode, padding_mode=padding_mode,
                                            align_corners=align_corners)
        (out * out).sum().backward()
        results.append([out.detach().numpy(), X.grad.numpy(), G.grad.numpy()])
    for ours, theirs in zip(*results, strict=True):
        assert_close(ours, theirs, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("mode, shape, grid_shape", CASES[:2])
def test_grid_sample_gradcheck_and_gradgradcheck(mode, shape, grid_shape):
    rng = np.random.default_rng(1)
    shape = shape[:2] + tuple(min(s, 4) for s in shape[2:])
    x = ember.tensor(rng.standard_normal((1,) + shape[1:]), requires_grad=True)
    g = ember.tensor(rng.uniform(-0.9, 0.9, (1,) + grid_shape[1:]), requires_grad=True)

    def f(a, b):
        return grid_sample(a, b, mode=mode, padding_mode="border", align_corners=False)

    assert gradcheck(f, (x, g))
    assert gradgradcheck(f, (x, g))


def test_grid_sample_trilinear_reproduces_identity_grid():
    x = ember.arange(24.0, dtype=ember.float64).reshape(1, 1, 2, 3, 4)
    theta = ember.eye(3, 4, dtype=ember.float64).unsqueeze(0)
    grid = ember.nn.functional.affine_grid(theta, (1, 1, 2, 3, 4), align_corners=True)
    assert_close(grid_sample(x, grid, align_corners=True), x)


def test_grid_sample_errors():
    x5, g5 = ember.randn(1, 2, 3, 4, 5), ember.rand(1, 2, 2, 2, 3)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        grid_sample(x5, g5, mode="bicubic", align_corners=False)
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or 'bicubic'"):
        grid_sample(x5, g5, mode="bad")
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border'"):
        grid_sample(x5, g5, padding_mode="bad")
    with pytest.raises(RuntimeError, match="expected grid to have size 3 in last dimension"):
        grid_sample(x5, ember.rand(1, 2, 2, 2, 2))
    with pytest.raises(RuntimeError, match="expected grid and input to have same batch size"):
        grid_sample(ember.randn(2, 2, 3, 4), ember.rand(1, 2, 2, 2))
