"""The one-node binary_cross_entropy_with_logits (ember.ops.nn.loss.BinaryCrossEntropyWithLogits)
that the functional takes without weight / pos_weight."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.ops.nn.loss import BinaryCrossEntropyWithLogits


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_fused_gradcheck_and_gradgradcheck(rng, reduction):
    x = ember.tensor(rng.standard_normal((4, 3)) * 3, requires_grad=True)
    t = ember.tensor(rng.uniform(size=(4, 3)), requires_grad=True)

    def f(a, b):
        return F.binary_cross_entropy_with_logits(a, b, reduction=reduction)

    assert f(x, t).grad_fn is not None
    assert ember.autograd.gradcheck(f, (x, t))
    assert ember.autograd.gradgradcheck(f, (x, t))


def test_bce_with_logits_fused_matches_composed_form(rng):
    x = ember.tensor(rng.standard_normal((6, 5)) * 4)
    t = ember.tensor(rng.uniform(size=(6, 5)))
    ref = (1 - t) * x - F.logsigmoid(x)
    out = BinaryCrossEntropyWithLogits.apply(x, t, "none")
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12, atol=1e-14)


def test_bce_with_logits_fused_extreme_logits_are_finite():
    x = ember.tensor([-1e4, -100.0, 0.0, 100.0, 1e4], requires_grad=True)
    t = ember.tensor([0.0, 1.0, 0.5, 0.0, 1.0])
    loss = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [0.0, 100.0, np.log(2), 100.0, 0.0],
                               rtol=1e-6, atol=1e-6)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, -1.0, 0.0, 1.0, 0.0], atol=1e-6)


def test_bce_with_logits_fused_empty_input():
    x = ember.zeros(0, requires_grad=True)
    t = ember.zeros(0)
    assert np.isnan(F.binary_cross_entropy_with_logits(x, t).item())
    s = F.binary_cross_entropy_with_logits(x, t, reduction="sum")
    assert s.item() == 0.0
    s.backward()
    assert tuple(x.grad.shape) == (0,)


@pytest.mark.parity
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_bce_with_logits_matches_torch(rng, reduction, dtype):
    """float32/64 take the fused op, bfloat16 the composed one; values and both gradients."""
    torch = pytest.importorskip("torch")
    xs = (rng.standard_normal((64, 3)) * 4).astype(np.float32)
    ts = rng.integers(0, 2, (64, 3)).astype(np.float32)
    res = []
    for lib in (ember, torch):
        x = lib.tensor(xs).to(getattr(lib, dtype)).requires_grad_()
        t = lib.tensor(ts).to(getattr(lib, dtype)).requires_grad_()
        loss = lib.nn.functional.binary_cross_entropy_with_logits(x, t, reduction=reduction)
        loss.float().sum().backward()
        assert loss.dtype == getattr(lib, dtype)
        res.append([a.detach().float().numpy() for a in (loss, x.grad, t.grad)])
    tol = {"float32": 1e-5, "float64": 1e-12, "bfloat16": 5e-2}[dtype]  # bf16 sums round coarsely
    for a, b in zip(*res, strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
