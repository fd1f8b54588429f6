"""Causal attention in query tiles (NOTE [Causal attention in query tiles] in
ember/ops/_kernels/attention.py): the GEMMs skip the masked blocks; values and gradients must
stay those of the full products - against the composite of ember ops (float64, tiles forced
small), gradcheck, and against torch at the sizes where the tiles are used by default."""

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.ops._kernels import attention as katt
from ember.testing import assert_close


def _composite(q, k, v, scale=None):
    """softmax(q k^T * scale) v with an explicit top-left causal mask, in ember ops."""
    n_query, n_key = q.shape[-2], k.shape[-2]
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = q.matmul(k.transpose(-2, -1)) * scale
    allowed = ember.tensor(np.tril(np.ones((n_query, n_key), dtype=bool)))
    return scores.masked_fill(allowed.logical_not(), float("-inf")).softmax(-1).matmul(v)


def _inputs(rng, lead, n_query, n_key, n_embed, dtype):
    shapes = (lead + (n_query, n_embed), lead + (n_key, n_embed), lead + (n_key, n_embed))
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


@pytest.fixture
def small_tiles(monkeypatch):
    # tiles of 2 rows: the tile logic runs on shapes small enough for gradcheck
    monkeypatch.setattr(katt, "_TILE_MIN", 2)


@pytest.mark.parametrize("n_query, n_key, tiles_max", [(4, 4, 8), (9, 9, 8), (5, 11, 8),
                                                       (11, 5, 8), (12, 12, 3), (1, 6, 8)])
def test_tiles_cover_every_seen_key_once(n_query, n_key, tiles_max, monkeypatch):
    monkeypatch.setattr(katt, "_TILE_MIN", 2)
    monkeypatch.setattr(katt, "_TILES_MAX", tiles_max)
    tiles = katt._tiles(n_query, n_key, True)
    rows = [i for lo, hi, _ in tiles for i in range(lo, hi)]
    assert rows == list(range(n_query))
    assert len(tiles) <= tiles_max
    for lo, hi, n in tiles:
        # every row of the tile sees keys 0..min(i, S-1), all below n; n stays within S
        assert all(min(i + 1, n_key) <= n for i in range(lo, hi)) and n <= n_key
    # the key tiles (the dV / dK products) cover the keys some query sees, each once (one
    # tile: all keys, the plain products)
    keys = [j for lo, _, n in tiles if n > lo for j in range(lo, n)]
    assert keys == list(range(min(n_query, n_key) if len(tiles) > 1 else n_key))
    assert katt._tiles(n_query, n_key, False) == [(0, n_query, n_key)]


@pytest.mark.parametrize("sizes", [(8, 8), (9, 9), (6, 10), (10, 6)])
def test_tiled_causal_matches_composite_float64(rng, small_tiles, sizes):
    assert len(katt._tiles(*sizes, True)) > 1
    arrays = _inputs(rng, (2, 3), *sizes, 4, np.float64)
    grad = rng.standard_normal((2, 3, sizes[0], 4))
    results = []
    for fn in (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
               _composite):
        xs = [ember.tensor(a, requires_grad=True) for a in arrays]
        out = fn(*xs)
        out.backward(ember.tensor(grad))
        results.append([out.detach().numpy()] + [x.grad.numpy() for x in xs])
    for ours, ref in zip(*results, strict=True):
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sizes", [(7, 7), (5, 8), (8, 5)])
def test_tiled_causal_gradcheck(rng, small_tiles, sizes):
    xs = [ember.tensor(a, requires_grad=True) for a in _inputs(rng, (2,), *sizes, 3, np.float64)]

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.7)

    assert ember.autograd.gradcheck(fn, xs)


def test_tiled_causal_gradcheck_with_dropout(rng, small_tiles):
    xs = [ember.tensor(a, requires_grad=True) for a in _inputs(rng, (2,), 6, 6, 3, np.float64)]

    def fn(q, k, v):
        ember.manual_seed(5)  # the same dropout mask on every evaluation
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.3, is_causal=True)

    assert ember.autograd.gradcheck(fn, xs)


def test_tiled_causal_no_batch_dims(rng, small_tiles):
    # 2-D (L, E) inputs: no batch axis to slice
    arrays = _inputs(rng, (), 6, 6, 4, np.float64)
    xs = [ember.tensor(a, requires_grad=True) for a in arrays]
    out = F.scaled_dot_product_attention(*xs, is_causal=True)
    ref = _composite(*(ember.tensor(a) for a in arrays))
    np.testing.assert_allclose(out.detach().numpy(), ref.numpy(), rtol=1e-12, atol=1e-12)
    assert ember.autograd.gradcheck(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), xs)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sizes", [(128, 128), (70, 100), (100, 70), (65, 65)])
def test_tiled_causal_matches_torch_at_default_tiles(rng, sizes, dtype):
    # L >= 64: the default tiles are in use; keys after the last query (S > L) get zero
    # gradients, queries after the last key (L > S) see every key
    torch = pytest.importorskip("torch")
    assert len(katt._tiles(*sizes, True)) > 1
    arrays = _inputs(rng, (2, 2), *sizes, 16, dtype)
    grad = rng.standard_normal((2, 2, sizes[0], 16)).astype(dtype)
    results = []
    for lib in (ember, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = lib.nn.functional.scaled_dot_product_attention(*xs, is_causal=True)
        out.backward(lib.tensor(grad))
        results.append([out.detach().numpy()] + [x.grad.numpy() for x in xs])
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {}
    for ours, ref in zip(*results, strict=True):
        assert_close(ours, ref, **tol)


@pytest.mark.parity
def test_tiled_causal_on_permuted_projection_matches_torch(rng):
    # a GPT block's strided q/k/v head views of one (B, T, 3, H, E) projection, T = 128
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((2, 128, 3 * 2 * 16)).astype(np.float32)
    grad = rng.standard_normal((2, 2, 128, 16)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        q, k, v = x.view(2, 128, 3, 2, 16).permute(2, 0, 3, 1, 4).unbind(0)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        out.backward(lib.tensor(grad))
        results.append((out.detach().numpy(), x.grad.numpy()))
    for ours, ref in zip(*results, strict=True):
        assert_close(ours, ref, rtol=1e-4, atol=1e-5)


def test_tiles_switch_off_gives_one_tile(rng, monkeypatch):
    # EMBER_CAUSAL_TILES=0 (an A/B switch) computes the full products: same values
    arrays = _inputs(rng, (2,), 70, 70, 4, np.float64)
    grad = rng.standard_normal((2, 70, 4))
    results = []
    for env in ("1", "0"):
        monkeypatch.setenv("EMBER_CAUSAL_TILES", env)
        monkeypatch.setattr(katt, "_tiles_on", [None])
        assert (len(katt._tiles(70, 70, True)) > 1) == (env == "1")
        xs = [ember.tensor(a, requires_grad=True) for a in arrays]
        out = F.scaled_dot_product_attention(*xs, is_causal=True)
        out.backward(ember.tensor(grad))
        results.append([out.detach().numpy()] + [x.grad.numpy() for x in xs])
    for tiled, whole in zip(*results, strict=True):
        np.testing.assert_allclose(tiled, whole, rtol=1e-12, atol=1e-12)
