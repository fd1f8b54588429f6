"""Attention of one query row (or a few) in one kernel (NOTE [One query row] in
ember/ops/_kernels/attention.py) against the two-GEMM path, its fallbacks and its gradients."""

import numpy as np
import pytest

import ember
from ember.ops._kernels import attention as katt

F = ember.nn.functional


def _heads(rng, b, h, s, e, dtype):
    """q (b, h, 1, e) as a decoding step makes it (heads interleaved in one projection row)
    and contiguous k, v (b, h, s, e)."""
    qkv = rng.standard_normal((b, 1, 3, h, e)).astype(dtype)
    q = ember.from_numpy(qkv).permute(2, 0, 3, 1, 4).unbind(0)[0]
    k = ember.from_numpy(rng.standard_normal((b, h, s, e)).astype(dtype))
    v = ember.from_numpy(rng.standard_normal((b, h, s, e)).astype(dtype))
    return q, k, v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(1, 4, 17, 64), (2, 3, 1, 8), (1, 1, 5, 3)])
def test_one_query_matches_two_gemm_path(monkeypatch, dtype, causal, shape):
    rng = np.random.default_rng(0)
    q, k, v = _heads(rng, *shape, dtype)
    calls = []
    kernel = katt._k_attention_one_query
    monkeypatch.setattr(katt, "_k_attention_one_query", lambda *a: calls.append(1) or kernel(*a))
    got = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert calls
    monkeypatch.setattr(katt, "_ONE_QUERY_MAX_WORK", 0)
    want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert len(calls) == 1
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)


def test_one_query_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    q, k, v = _heads(rng, 1, 4, 23, 16, np.float32)
    got = F.scaled_dot_product_attention(q, k, v, scale=0.3)
    want = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q.numpy().copy()), torch.from_numpy(k.numpy()),
        torch.from_numpy(v.numpy()), scale=0.3)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_masked_keys_and_non_finite_scores():
    k = ember.zeros(1, 1, 3, 2)
    v = ember.tensor([[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]])
    q = ember.tensor([[[[float("nan"), 0.0]]]])
    out = F.scaled_dot_product_attention(q, k, v)
    assert np.isnan(out.numpy()).all()
    q = ember.ones(1, 1, 1, 2)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # sees key 0 only
    np.testing.assert_allclose(out.numpy(), [[[[1.0, 2.0]]]])


def test_big_work_and_several_queries_take_the_gemm_path(monkeypatch):
    calls = []
    kernel = katt._k_attention_one_query
    monkeypatch.setattr(katt, "_k_attention_one_query", lambda *a: calls.append(1) or kernel(*a))
    rng = np.random.default_rng(2)
    q, k, v = _heads(rng, 4, 8, 512, 64, np.float32)  # 4*8*512*64 > the work bound
    F.scaled_dot_product_attention(q, k, v)
    F.scaled_dot_product_attention(ember.randn(1, 2, 17, 4), ember.randn(1, 2, 5, 4),
                                   ember.randn(1, 2, 5, 4))  # more than _FEW_QUERIES rows
    assert not calls


def _few(rng, b, h, n_query, n_key, e, dtype):
    """q (b, h, L, e) with interleaved heads (a prefill's qkv projection), contiguous k, v."""
    qkv = rng.standard_normal((b, n_query, 3, h, e)).astype(dtype)
    q = ember.from_numpy(qkv).permute(2, 0, 3, 1, 4).unbind(0)[0]
    k = ember.from_numpy(rng.standard_normal((b, h, n_key, e)).astype(dtype))
    v = ember.from_numpy(rng.standard_normal((b, h, n_key, e)).astype(dtype))
    return q, k, v


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(1, 4, 16, 16, 64), (2, 3, 5, 7, 8), (1, 2, 4, 3, 5)])
def test_few_queries_match_torch_and_the_gemm_path(monkeypatch, causal, shape):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    q, k, v = _few(rng, *shape, np.float32)
    calls = []
    kernel = katt._k_attention_one_query
    monkeypatch.setattr(katt, "_k_attention_one_query", lambda *a: calls.append(1) or kernel(*a))
    got = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert calls
    want = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(t.numpy().copy()) for t in (q, k, v)), is_causal=causal)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    monkeypatch.setattr(katt, "_ONE_QUERY_MAX_WORK", 0)
    gemm = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert len(calls) == 1 and got.stride() == gemm.stride()  # the same output layout
    np.testing.assert_allclose(got.numpy(), gemm.numpy(), rtol=1e-5, atol=1e-6)


def test_few_queries_gradients():
    rng = np.random.default_rng(6)
    q, k, v = (t.detach().contiguous().requires_grad_()
               for t in _few(rng, 2, 2, 4, 5, 3, np.float64))
    for causal in (False, True):
        assert ember.autograd.gradcheck(
            lambda a, b, c, causal=causal: F.scaled_dot_product_attention(
                a, b, c, is_causal=causal), (q, k, v))


def test_one_query_gradients():
    rng = np.random.default_rng(3)
    q, k, v = (t.detach().requires_grad_() for t in _heads(rng, 1, 2, 6, 4, np.float64))
    for causal in (False, True):
        assert ember.autograd.gradcheck(
            lambda a, b, c, causal=causal: F.scaled_dot_product_attention(
                a, b, c, is_causal=causal), (q, k, v))


def test_one_query_under_vmap_and_dropout():
    rng = np.random.default_rng(4)
    q, k, v = _heads(rng, 3, 2, 5, 4, np.float32)
    got = ember.func.vmap(F.scaled_dot_product_attention)(q, k, v)
    want = ember.stack([F.scaled_dot_product_attention(a, b, c) for a, b, c in zip(
        q, k, v, strict=True)])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    ember.manual_seed(0)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert out.shape == (3, 2, 1, 4)
