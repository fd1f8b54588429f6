"""F.interpolate(antialias=True) for 'bilinear', 'bicubic' and 'lanczos': values and gradients
against torch 2.13 (downsampling, upsampling, mixed, align_corners, scale factors), gradcheck
and gradgradcheck in float64, and torch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn.functional import interpolate
from ember.testing import assert_close

SIZES = [dict(size=(5, 4)), dict(size=(30, 7)), dict(scale_factor=0.37),
         dict(scale_factor=(0.5, 1.7)), dict(size=(6, 5), align_corners=True),
         dict(scale_factor=0.3, recompute_scale_factor=True), dict(size=(1, 1))]


@pytest.mark.parity
@pytest.mark.parametrize("kw", SIZES)
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_antialias_matches_torch(mode, kw):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    if mode == "lanczos" and kw.get("align_corners"):
        with pytest.raises(ValueError, match="Lanczos mode does not support align_corners"):
            interpolate(ember.ones(1, 1, 8, 8), mode=mode, antialias=True, **kw)
        return
    x = np.random.default_rng(0).standard_normal((2, 3, 17, 13))
    results = []
    for lib in (ember, torch):
        X = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.interpolate(X, mode=mode, antialias=True, **kw)
        (out * out).sum().backward()
        results.append([out.detach().numpy(), X.grad.numpy()])
    for ours, theirs in zip(*results, strict=True):
        assert_close(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parity
def test_antialias_float32_matches_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    x = np.random.default_rng(1).standard_normal((1, 2, 32, 24)).astype(np.float32)
    ours = interpolate(ember.tensor(x), size=(7, 9), mode="bicubic", antialias=True)
    theirs = torch.nn.functional.interpolate(torch.tensor(x), size=(7, 9), mode="bicubic",
                                             antialias=True)
    assert ours.dtype == ember.float32
    assert_close(ours, theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_antialias_smooths_a_checkerboard_and_keeps_constants():
    board = ember.tensor((np.indices((16, 16)).sum(0) % 2).astype(np.float64))[None, None]
    sharp = interpolate(board, size=(4, 4), mode="nearest")
    smooth = interpolate(board, size=(4, 4), mode="bilinear", antialias=True)
    # every output averages a whole 4 x 4 block (edges renormalised): ~0.5 everywhere
    assert float((smooth - 0.5).abs().max()) < 0.01
    assert float((sharp - 0.5).abs().max()) == 0.5       # point sampling aliases
    ones = ember.ones(1, 1, 9, 11, dtype=ember.float64)
    assert_close(interpolate(ones, size=(4, 5), mode="bicubic", antialias=True),
                 ember.ones(1, 1, 4, 5, dtype=ember.float64))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_gradcheck_and_gradgradcheck(mode):
    x = ember.tensor(np.random.default_rng(2).standard_normal((1, 1, 7, 6)), requires_grad=True)

    def f(t):
        return interpolate(t, size=(3, 8), mode=mode, antialias=True)

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_antialias_errors():
    with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear"):
        interpolate(ember.randn(1, 1, 4), size=2, mode="linear", antialias=True)
    with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear"):
        interpolate(ember.randn(1, 1, 4, 4), size=2, mode="nearest", antialias=True)
    with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
        interpolate(ember.randn(1, 1, 4, 4), size=2, mode="lanczos")
