"""Generic ops on the one pool (ember/ops/_kernels/pooled.py, NOTE [One pool]): sums over big
arrays, against NumPy and torch, with the parallel kernels counted."""
import numpy as np
import pytest

import ember
from ember.ops._kernels import pooled as P


def _count_parallel(monkeypatch, twin):
    calls = []
    inner = twin.parallel

    def counted(*args):
        calls.append(1)
        return inner(*args)

    monkeypatch.setattr(twin, "parallel", counted)
    return calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, dim", [
    ((32, 20, 20, 256), 2), ((32, 20, 20, 256), 1), ((32, 20, 20, 256), (0, 1, 2)),
    ((3, 50000, 2), -2), ((1, 140000, 1, 3), (1, 2)), ((200000, 3), 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_on_pool_matches_numpy(rng, one_pool, monkeypatch, dtype, shape, dim, keepdim):
    """Same additions in the same order as NumPy's reduction: equal results."""
    if shape == (32, 20, 20, 256) and dtype == np.float64 and not keepdim:
        shape = (8, 20, 20, 256)  # float64 at full size adds nothing but time
    calls = _count_parallel(monkeypatch, P._k_sum_mid)
    x = rng.standard_normal(shape).astype(dtype)
    y = ember.tensor(x).sum(dim=dim, keepdim=keepdim).numpy()
    ref = np.add.reduce(x, axis=dim, keepdims=keepdim)
    assert y.shape == ref.shape and y.dtype == dtype and len(calls) == 1
    np.testing.assert_array_equal(y, ref)


def test_sum_on_pool_leaves_other_reductions_to_numpy(rng, one_pool, monkeypatch):
    calls = _count_parallel(monkeypatch, P._k_sum_mid)
    x = rng.standard_normal((64, 20, 200)).astype(np.float32)
    for dim in (-1, (0, 2), None):  # the last axis, a gap between dims, everything
        got = ember.tensor(x).sum(dim=dim).numpy()
        np.testing.assert_allclose(got, np.add.reduce(x, axis=dim), rtol=1e-5, atol=1e-3)
    got = ember.tensor(x[:, ::2]).sum(dim=1).numpy()  # not contiguous
    np.testing.assert_allclose(got, x[:, ::2].sum(1), rtol=1e-5, atol=1e-4)
    assert ember.tensor(x).sum(dim=1, dtype=ember.float64).dtype == ember.float64
    assert not calls


@pytest.mark.parity
def test_gnmt_attention_on_pool_matches_torch(rng, one_pool, monkeypatch):
    """GNMT-S's additive attention scores (tanh of a three-way broadcast sum, a product with
    v) on the pool: values and the gradients of q, k, the bias and v vs torch."""
    torch = pytest.importorskip("torch")
    sum_calls = _count_parallel(monkeypatch, P._k_sum_mid)
    arrays = [rng.standard_normal(s).astype(np.float32) * 0.5
              for s in ((16, 20, 1, 64), (16, 1, 20, 64), (64,), (64,))]
    ours = [ember.tensor(a, requires_grad=True) for a in arrays]
    ref = [torch.tensor(a, requires_grad=True) for a in arrays]
    for lib, (q, k, b, v) in ((ember, ours), (torch, ref)):
        (lib.tanh(q + k + b) @ v).square().sum().backward()
    for a, t in zip(ours, ref, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-4)
    assert len(sum_calls) >= 3  # q's, k's and the bias's broadcast undone
