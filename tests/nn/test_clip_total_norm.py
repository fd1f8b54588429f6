"""nn.utils.get_total_norm and clip_grads_with_norm_ (torch 2.13's two halves of
clip_grad_norm_): values, dtypes and errors against torch."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
from ember.nn.utils import clip_grad_norm_, clip_grads_with_norm_, get_total_norm

NORMS = [2.0, 1, math.inf, -math.inf, 0.5, 3, 0, "inf"]


def _pairs(torch, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(5)  # float64: the total is promoted
    c = rng.standard_normal((2, 2, 2)).astype(np.float32).transpose(2, 0, 1)  # non-contiguous
    arrays = [a, b, c]
    return [ember.tensor(x) for x in arrays], [torch.tensor(x) for x in arrays]


@pytest.mark.parity
@pytest.mark.parametrize("norm_type", NORMS)
def test_get_total_norm_matches_torch(norm_type, rng):
    torch = pytest.importorskip("torch")
    ours, ref = _pairs(torch, rng)
    got = get_total_norm(ours, norm_type)
    want = torch.nn.utils.get_total_norm(ref, norm_type)
    assert got.dtype == ember.float64 and want.dtype == torch.float64
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert not got.requires_grad


@pytest.mark.parity
def test_get_total_norm_forms_match_torch(rng):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal(6).astype(np.float32)
    one, one_t = ember.tensor(x), torch.tensor(x)
    np.testing.assert_allclose(get_total_norm(one).numpy(),
                               torch.nn.utils.get_total_norm(one_t).numpy(), rtol=1e-6)
    gen = get_total_norm(t for t in [one, one])
    np.testing.assert_allclose(gen.numpy(), torch.nn.utils.get_total_norm(
        t for t in [one_t, one_t]).numpy(), rtol=1e-6)
    empty, empty_t = get_total_norm([]), torch.nn.utils.get_total_norm([])
    assert empty.dtype == ember.float32 and empty.shape == () and empty.item() == empty_t.item()
    with_empty = get_total_norm([ember.tensor([]), one])
    assert with_empty.item() == pytest.approx(
        torch.nn.utils.get_total_norm([torch.tensor([]), one_t]).item(), rel=1e-6)
    w = ember.ones(2, requires_grad=True)
    assert not get_total_norm([w * 3]).requires_grad


@pytest.mark.parity
def test_get_total_norm_errors_match_torch():
    torch = pytest.importorskip("torch")
    for bad in [float("nan"), float("inf")]:
        with pytest.raises(RuntimeError, match="non-finite, so it cannot be clipped"):
            get_total_norm([ember.tensor([1.0, bad])], error_if_nonfinite=True)
        with pytest.raises(RuntimeError, match="non-finite, so it cannot be clipped"):
            torch.nn.utils.get_total_norm([torch.tensor([1.0, bad])], error_if_nonfinite=True)
    assert math.isnan(get_total_norm([ember.tensor([1.0, float("nan")])]).item())
    with pytest.raises(RuntimeError, match="inf norm on an empty tensor"):
        get_total_norm([ember.tensor([])], math.inf)
    with pytest.raises(RuntimeError, match="floating point or complex"):
        get_total_norm([ember.tensor([1, 2])])
    with pytest.raises(RuntimeError, match="get_total_norm: tensor 1 of the list is NoneType"):
        get_total_norm([ember.tensor([1.0]), None])
    with pytest.raises(RuntimeError):
        torch.nn.utils.get_total_norm([torch.tensor([1.0]), None])
    with pytest.raises(ValueError):
        get_total_norm([ember.tensor([1.0])], "fro")


def _params(lib, grads, dtype):
    out = []
    for g in grads:
        p = lib.nn.Parameter(lib.zeros(len(g), dtype=dtype))
        p.grad = lib.tensor(g, dtype=dtype)
        out.append(p)
    return out


@pytest.mark.parity
@pytest.mark.parametrize("max_norm, total", [(1.0, 3.0), (0.3, 0.7), (10.0, 3.0),
                                             (1.0, float("nan")), (1.0, float("inf"))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clip_grads_with_norm_matches_torch(max_norm, total, dtype):
    torch = pytest.importorskip("torch")
    grads = [[0.1, -0.2, 0.3], [1.5, 2.5]]
    ours = _params(ember, grads, getattr(ember, dtype))
    ref = _params(torch, grads, getattr(torch, dtype))
    # the factor is computed in total_norm's dtype (float32 here), then multiplies the grads
    assert clip_grads_with_norm_(ours, max_norm, ember.tensor(total)) is None
    torch.nn.utils.clip_grads_with_norm_(ref, max_norm, torch.tensor(total))
    for p, q in zip(ours, ref, strict=True):
        assert p.grad.dtype == getattr(ember, dtype)
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


def test_clip_grads_with_norm_skips_missing_grads_and_takes_one_tensor():
    p = ember.nn.Parameter(ember.zeros(2))
    q = ember.nn.Parameter(ember.zeros(2))
    p.grad = ember.tensor([3.0, 4.0])
    clip_grads_with_norm_(p, 1.0, ember.tensor(5.0))  # a single tensor, as torch accepts
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-6)
    clip_grads_with_norm_([q], 1.0, ember.tensor(5.0))  # no grads: nothing to do
    assert q.grad is None
    with pytest.raises(TypeError, match="clip_grads_with_norm_: total_norm must be a Tensor"):
        clip_grads_with_norm_([p], 1.0, 5.0)


def test_the_two_halves_equal_clip_grad_norm_():
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(4).astype(np.float32) for _ in range(3)]
    a = _params(ember, grads, ember.float32)
    b = _params(ember, grads, ember.float32)
    norm_a = clip_grad_norm_(a, 0.5, norm_type=3)
    norm_b = get_total_norm([p.grad for p in b], 3)
    clip_grads_with_norm_(b, 0.5, norm_b)
    assert norm_a.item() == norm_b.item()
    for p, q in zip(a, b, strict=True):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
