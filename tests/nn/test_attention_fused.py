"""The fused scaled_dot_product_attention Op (ember/ops/nn/attention.py): values and gradients
against the composite of ember ops and against torch, causal or not, L != S, dropout, float32
and float64, gradcheck and gradgradcheck."""

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.testing import assert_close


def _inputs(rng, lead, n_query, n_key, n_embed=4, n_value=5, dtype=np.float64):
    shapes = (lead + (n_query, n_embed), lead + (n_key, n_embed), lead + (n_key, n_value))
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _composite(q, k, v, is_causal=False, scale=None):
    """The formula with ember ops and an explicit mask (the unfused reference)."""
    n_query, n_key = q.shape[-2], k.shape[-2]
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = q.matmul(k.transpose(-2, -1)) * scale
    if is_causal:
        allowed = ember.tensor(np.tril(np.ones((n_query, n_key), dtype=bool)))
        scores = scores.masked_fill(allowed.logical_not(), float("-inf"))
    return scores.softmax(-1).matmul(v)


def _uses_fused_op(out):
    return "ScaledDotProductAttention" in out.grad_fn.name()


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("sizes", [(5, 5), (3, 7), (7, 3), (1, 6)])
def test_sdpa_fused_matches_composite(rng, sizes, is_causal):
    arrays = _inputs(rng, (2, 3), *sizes)
    grad = rng.standard_normal((2, 3, sizes[0], 5))
    results = []
    for fn in (F.scaled_dot_product_attention, _composite):
        xs = [ember.tensor(a, requires_grad=True) for a in arrays]
        out = fn(*xs, is_causal=is_causal)
        out.backward(ember.tensor(grad))
        results.append([out.detach().numpy()] + [x.grad.numpy() for x in xs])
    for ours, ref in zip(*results, strict=True):
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)


def test_sdpa_takes_the_fused_op_for_plain_and_causal_calls(rng):
    xs = [ember.tensor(a, requires_grad=True) for a in _inputs(rng, (2,), 3, 3)]
    assert _uses_fused_op(F.scaled_dot_product_attention(*xs))
    assert _uses_fused_op(F.scaled_dot_product_attention(*xs, is_causal=True, scale=0.3))
    mask = ember.ones(3, 3, dtype=ember.bool)
    assert not _uses_fused_op(F.scaled_dot_product_attention(*xs, attn_mask=mask))


@pytest.mark.parametrize("is_causal", [False, True])
def test_sdpa_fused_gradcheck(rng, is_causal):
    xs = [ember.tensor(a, requires_grad=True) for a in _inputs(rng, (2,), 3, 4, 3, 2)]

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, scale=0.8)

    assert ember.autograd.gradcheck(fn, xs)
    assert ember.autograd.gradgradcheck(fn, xs)


def test_sdpa_fused_gradcheck_with_dropout(rng):
    xs = [ember.tensor(a, requires_grad=True) for a in _inputs(rng, (2,), 4, 4, 3, 2)]

    def fn(q, k, v):
        ember.manual_seed(3)  # the same dropout mask on every evaluation
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.4, is_causal=True)

    assert ember.autograd.gradcheck(fn, xs)
    assert ember.autograd.gradgradcheck(fn, xs)


def test_sdpa_fused_dropout_drops_the_composites_entries(rng):
    # both paths draw the mask from ember's generator in the same shape: one seed, one result
    arrays = _inputs(rng, (2, 2), 4, 6)
    q, k, v = (ember.tensor(a) for a in arrays)
    ember.manual_seed(7)
    fused = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    ember.manual_seed(7)
    mask = ember.ones(4, 6, dtype=ember.bool)  # all allowed: takes the composite path
    composite = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.5)
    np.testing.assert_allclose(fused.numpy(), composite.numpy(), rtol=1e-12)
    ones = F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    np.testing.assert_array_equal(ones.numpy(), 0)


def test_sdpa_fused_float32_noncontiguous_inputs(rng):
    # (B, L, H, E) projections transposed to (B, H, L, E), as a transformer block makes them
    arrays = [rng.standard_normal((2, 6, 3, 8)).astype(np.float32) for _ in range(3)]
    xs = [ember.tensor(a).transpose(1, 2) for a in arrays]
    out = F.scaled_dot_product_attention(*xs, is_causal=True)
    ref = _composite(*(ember.tensor(np.ascontiguousarray(a.transpose(0, 2, 1, 3)))
                       for a in arrays), is_causal=True)
    assert out.dtype == ember.float32
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("is_causal", [False, True])
def test_sdpa_fused_on_permuted_projection_matches_torch(rng, is_causal):
    # a GPT block's q, k, v: strided head views of one (B, T, 3, H, E) projection, taken by the
    # kernels as they are (no copies); values, gradients and the output's layout as torch's
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((2, 5, 3 * 4 * 8)).astype(np.float32)  # B 2, T 5, H 4, E 8
    grad = rng.standard_normal((2, 4, 5, 8)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        q, k, v = x.view(2, 5, 3, 4, 8).permute(2, 0, 3, 1, 4).unbind(0)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
        out.backward(lib.tensor(grad))
        results.append((out.detach().numpy(), x.grad.numpy(), tuple(out.stride())))
    (out, gx, strides), (ref_out, ref_gx, ref_strides) = results
    assert strides == ref_strides == (160, 8, 32, 1)
    assert_close(out, ref_out, rtol=1e-5, atol=1e-6)
    assert_close(gx, ref_gx, rtol=1e-5, atol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("sizes", [(8, 8), (1, 9), (4, 9), (9, 4)])
def test_sdpa_fused_matches_torch(rng, sizes, is_causal, dtype):
    # L != S with is_causal: torch's mask is top-left aligned (query i sees keys 0..i), also
    # for the single-query step of KV-cache generation
    torch = pytest.importorskip("torch")
    arrays = _inputs(rng, (2, 4), *sizes, n_embed=16, n_value=16, dtype=dtype)
    grad = rng.standard_normal((2, 4, sizes[0], 16)).astype(dtype)
    ours = [ember.tensor(a, requires_grad=True) for a in arrays]
    ref = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = F.scaled_dot_product_attention(*ours, is_causal=is_causal)
    expected = torch.nn.functional.scaled_dot_product_attention(*ref, is_causal=is_causal)
    assert tuple(out.stride()) == tuple(expected.stride())  # C-contiguous for contiguous q
    out.backward(ember.tensor(grad))
    expected.backward(torch.tensor(grad))
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {}
    assert_close(out.detach().numpy(), expected.detach().numpy(), **tol)
    for a, b in zip(ours, ref, strict=True):
        assert_close(a.grad.numpy(), b.grad.numpy(), **tol)


def test_sdpa_shape_fast_path_keeps_the_general_checks(rng):
    # the array-shape fast path (a decoding step) must leave every error to the general path
    q, k, v = (ember.tensor(a) for a in _inputs(rng, (2,), 3, 4))
    with pytest.raises(TypeError, match="argument 'value' must be Tensor"):
        F.scaled_dot_product_attention(q, k, v.numpy())
    with pytest.raises(RuntimeError, match="same dtype"):
        F.scaled_dot_product_attention(q, k, v.float())
    with pytest.raises(RuntimeError, match=r"expected query \(..., L, E\)"):
        F.scaled_dot_product_attention(q, k[..., :3], v)
    # one query against a cache of keys, as a decoding step calls it: the fused op, the
    # composite's values
    q1 = q[:, :1]
    out = F.scaled_dot_product_attention(q1, k, v, scale=0.7)
    assert out.shape == (2, 1, 5)
    assert_close(out, _composite(q1, k, v, scale=0.7), rtol=1e-12, atol=1e-12)
    int_q = ember.ones(2, 3, 4, dtype=ember.int64)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(int_q, int_q, int_q)
