"""Fold / Unfold, affine_grid and grid_sample."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn import functional as F
from ember.nn.modules.fold import Fold, Unfold


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _compare(rng, ours_fn, ref_fn, arrays, tol=1e-12):
    torch = _torch()
    ours = [ember.tensor(a, requires_grad=True) for a in arrays]
    ref = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, ty = ours_fn(*ours), ref_fn(*ref)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    g = rng.standard_normal(tuple(ty.shape))
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    for o, r in zip(ours, ref):
        np.testing.assert_allclose(o.grad.numpy(), r.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=(2, 3), dilation=(1, 2),
                                                          padding=1, stride=2)])
def test_unfold_fold_match_torch(rng, kw):
    torch = _torch()
    x = rng.standard_normal((2, 3, 7, 8))
    _compare(rng, lambda t: F.unfold(t, **kw), lambda t: torch.nn.functional.unfold(t, **kw),
             [x])
    cols = torch.nn.functional.unfold(torch.tensor(x), **kw).numpy()
    _compare(rng, lambda t: F.fold(t, (7, 8), **kw),
             lambda t: torch.nn.functional.fold(t, (7, 8), **kw), [cols])


@pytest.mark.parity
def test_fold_unfold_modules_and_unbatched(rng):
    torch = _torch()
    ours, ref = Unfold(3, padding=1), torch.nn.Unfold(3, padding=1)
    assert repr(ours) == repr(ref)
    _compare(rng, ours, ref, [rng.standard_normal((3, 4, 5))])
    ours, ref = Fold((4, 5), 3, padding=1), torch.nn.Fold((4, 5), 3, padding=1)
    assert repr(ours) == repr(ref)
    _compare(rng, ours, ref, [rng.standard_normal((27, 20))])


def test_fold_unfold_gradcheck(rng):
    x = ember.tensor(rng.standard_normal((1, 2, 4, 3)), requires_grad=True)
    assert gradgradcheck(lambda t: F.unfold(t, 2, padding=1, stride=(1, 2)), (x,))
    c = ember.tensor(rng.standard_normal((1, 8, 6)), requires_grad=True)
    assert gradgradcheck(lambda t: F.fold(t, (3, 4), 2), (c,))


def test_fold_errors():
    with pytest.raises(RuntimeError, match=r"fold: input of shape \(1, 8, 5\) does not match"):
        F.fold(ember.randn(1, 8, 5), (3, 4), 2)
    with pytest.raises(RuntimeError, match=r"unfold: expected 4-D"):
        F.unfold(ember.randn(4, 4), 2)


@pytest.mark.parity
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_matches_torch(rng, align_corners):
    torch = _torch()
    theta = rng.standard_normal((2, 2, 3))
    _compare(rng, lambda t: F.affine_grid(t, (2, 3, 4, 5), align_corners=align_corners),
             lambda t: torch.nn.functional.affine_grid(t, (2, 3, 4, 5),
                                                       align_corners=align_corners), [theta])
    theta3 = rng.standard_normal((1, 3, 4))
    _compare(rng, lambda t: F.affine_grid(t, (1, 2, 2, 3, 4), align_corners=align_corners),
             lambda t: torch.nn.functional.affine_grid(t, (1, 2, 2, 3, 4),
                                                       align_corners=align_corners), [theta3])


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_matches_torch(rng, mode, padding_mode, align_corners):
    torch = _torch()
    x = rng.standard_normal((2, 3, 5, 6))
    grid = rng.uniform(-1.4, 1.4, (2, 4, 7, 2))  # some points outside the image
    _compare(rng, lambda a, g: F.grid_sample(a, g, mode, padding_mode, align_corners),
             lambda a, g: torch.nn.functional.grid_sample(a, g, mode, padding_mode,
                                                          align_corners), [x, grid])


def test_grid_sample_identity_grid_reproduces_input(rng):
    x = ember.tensor(rng.standard_normal((1, 2, 4, 5)))
    grid = F.affine_grid(ember.eye(2, 3, dtype=ember.float64).unsqueeze(0), (1, 2, 4, 5),
                         align_corners=False)
    np.testing.assert_allclose(F.grid_sample(x, grid, align_corners=False).numpy(), x.numpy(),
                               atol=1e-12)


def test_grid_sample_and_affine_grid_gradcheck(rng):
    x = ember.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    # keep samples away from integer pixel positions, where bilinear weights have kinks
    grid = ember.tensor(rng.uniform(-0.9, 0.9, (1, 2, 3, 2)) + 0.013, requires_grad=True)
    for pm in ("zeros", "border", "reflection"):
        assert gradcheck(lambda a, g, pm=pm: F.grid_sample(a, g, padding_mode=pm,
                                                    align_corners=False), (x, grid))
    theta = ember.tensor(rng.standard_normal((1, 2, 3)), requires_grad=True)
    assert gradcheck(lambda t: F.affine_grid(t, (1, 1, 3, 2), align_corners=False), (theta,))


def test_grid_sample_errors():
    with pytest.raises(RuntimeError, match=r"grid_sampler\(\): expected grid to have size 2"):
        F.grid_sample(ember.randn(1, 1, 4, 4), ember.randn(1, 3, 3, 3))
    with pytest.raises(ValueError, match="padding_mode"):
        F.grid_sample(ember.randn(1, 1, 4, 4), ember.randn(1, 3, 3, 2), padding_mode="wrap")
    with pytest.raises(ValueError, match="affine matrices"):
        F.affine_grid(ember.randn(1, 3, 3), (1, 1, 4, 4))
