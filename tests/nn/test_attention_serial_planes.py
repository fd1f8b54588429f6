"""Attention's plane kernels with the one pool off (NOTE [Serial plane kernels] in
ember/ops/_kernels/attention.py): used serially while every BLAS call of the tiles stays within
OpenBLAS's one-thread bound. Values and gradients against torch and against the NumPy path,
gradcheck, and the cases that must keep the NumPy path."""

import numpy as np
import pytest
from _attention_checks import (
    assert_gradcheck_causal,
    assert_matches_torch,
    assert_paths_agree,
    qkv_arrays,
)

import ember
import ember.nn.functional as F
from ember import _blas_parts
from ember.ops._kernels import attention as katt


@pytest.fixture
def plane_calls(pool_off, monkeypatch, request):
    """Pool off, the serial use on, in one call per direction (the parts off: their tests are
    in test_attention_blas_parts.py); returns {"fwd": n, "bwd": n} serial plane-kernel calls."""
    monkeypatch.setattr(katt, "_planes_on", [True])
    # the small cases here would take the few-query kernel (NOTE [One query row]): the planes
    # are what is tested
    monkeypatch.setattr(katt, "_FEW_QUERIES", 1)
    _blas_parts.set_enabled(False)
    request.addfinalizer(lambda: _blas_parts.set_enabled(None))
    calls = {"fwd": 0, "bwd": 0}
    for name, twin in (("fwd", katt._k_attention_fwd_planes),
                       ("bwd", katt._k_attention_bwd_planes)):
        def counting(*args, _name=name, _fn=twin.serial):
            calls[_name] += 1
            return _fn(*args)
        monkeypatch.setattr(twin, "serial", counting)
    return calls


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("is_causal, n", [(True, 128), (True, 40), (False, 16), (True, 5)])
def test_serial_planes_match_torch(rng, plane_calls, dtype, is_causal, n):
    torch = pytest.importorskip("torch")
    assert_matches_torch(torch, rng, qkv_arrays(rng, dtype, n, n, 2, 2, 16), is_causal)
    assert plane_calls == {"fwd": 1, "bwd": 1}


def test_serial_planes_equal_the_numpy_path(rng, plane_calls):
    """GPT-S's attention shape (tiles of 32 rows, E = 64, every product 2^18 multiply-adds at
    most): the same results as the NumPy path, which the switch restores."""
    q, k, v = qkv_arrays(rng, np.float32, 128, 128, 2, 4, 64)
    assert_paths_agree(rng, q, k, v, 0.125, lambda on: katt._planes_on.__setitem__(0, on))
    assert plane_calls == {"fwd": 1, "bwd": 1}  # the second round took the NumPy path


def test_serial_planes_gradcheck(rng, plane_calls, monkeypatch):
    monkeypatch.setattr(katt, "_TILE_MIN", 2)  # several tiles at a gradcheck size
    assert_gradcheck_causal(rng, 9, batch=1, heads=2, n_embed=3)
    assert plane_calls["bwd"] > 0


@pytest.mark.parity
@pytest.mark.parametrize("case", ["big product", "switch off", "dropout"])
def test_numpy_path_where_the_planes_do_not_apply(rng, plane_calls, monkeypatch, case):
    """A product above the one-thread bound (an unmasked 128 x 128 x 64 plane: scipy's
    OpenBLAS would wake its threads), EMBER_ATTENTION_PLANES=0 or dropout: the NumPy path,
    with the same values as torch."""
    torch = pytest.importorskip("torch")
    n, is_causal = (128, False) if case == "big product" else (40, True)
    q, k, v = qkv_arrays(rng, np.float32, n, n, 1, 2, 64)
    if case == "switch off":
        monkeypatch.setattr(katt, "_planes_on", [None])
        monkeypatch.setenv("EMBER_ATTENTION_PLANES", "0")
    p_drop = 0.5 if case == "dropout" else 0.0
    ember.manual_seed(0)
    eo = F.scaled_dot_product_attention(*(ember.tensor(a) for a in (q, k, v)),
                                        is_causal=is_causal, dropout_p=p_drop)
    assert plane_calls == {"fwd": 0, "bwd": 0}
    if case == "dropout":  # torch's dropout draws differ: check the shape and finiteness
        assert eo.shape == q.shape and np.isfinite(eo.numpy()).all()
        return
    to = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(a) for a in (q, k, v)), is_causal=is_causal)
    np.testing.assert_allclose(eo.numpy(), to.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("n_query, n_key, tile_min", [(128, 128, 32), (128, 128, 2),
                                                      (40, 90, 4), (90, 40, 4), (7, 7, 2),
                                                      (16, 16, 32)])
@pytest.mark.parametrize("causal", [True, False])
def test_largest_product_bounds_every_blas_call(n_query, n_key, tile_min, causal, monkeypatch):
    """`_largest_product` is the largest m * n * k among the calls the plane kernels make:
    query tiles against keys 0..n-1, key tiles lo..n-1 against queries lo..L-1."""
    monkeypatch.setattr(katt, "_TILE_MIN", tile_min)
    width = 8
    tiles = katt._tiles(n_query, n_key, causal)
    calls = [(hi - lo) * n * width for lo, hi, n in tiles]
    calls += [(n - lo) * width * (n_query - lo) for lo, _, n in tiles if n > lo]
    assert katt._largest_product(n_query, n_key, width, tiles) >= max(calls)
    # and it is tight for GPT-S's shape: 32 x 128 x 64 = 2^18, within the bound
    if (n_query, n_key, tile_min, causal) == (128, 128, 32, True):
        assert katt._largest_product(128, 128, 64, tiles) == katt._SERIAL_MAX_MACS


@pytest.mark.parametrize("shape, axes", [((2, 5, 3, 4, 6), (2, 0, 3, 1, 4)),
                                         ((3, 4, 7, 5), (0, 1, 2, 3)), ((7, 5), (0, 1))])
def test_plane_offsets_are_each_planes_byte_offset(shape, axes):
    """`_blas_matrix`'s per-plane byte offsets (cached by layout) against each plane's own
    address, for a permuted projection, a C-contiguous 4-D array and a single matrix."""
    a = np.zeros(shape, np.float32).transpose(axes)
    a = a[0] if a.ndim == 5 else a
    base, off, _ = katt._blas_matrix(a)
    planes = a.reshape(-1, *a.shape[-2:]) if a.ndim == 2 else list(
        a[idx] for idx in np.ndindex(*a.shape[:-2]))
    assert [base + int(o) for o in off] == [p.ctypes.data for p in planes]
    again = katt._blas_matrix(a)[1]
    assert again is off and not off.flags.writeable  # cached, and safe to share


@pytest.mark.parity
def test_serial_planes_in_parts_on_the_kernel_threads(rng, plane_calls, monkeypatch):
    """With two kernel threads the planes are split (one serial kernel call per part, forward
    and backward), with torch's values and gradients."""
    torch = pytest.importorskip("torch")
    from ember import _threads
    monkeypatch.setattr(_threads, "_requested", [2])
    assert_matches_torch(torch, rng, qkv_arrays(rng, np.float32, 40, 40, 3, 2, 16), True)
    assert plane_calls["fwd"] >= 2 and plane_calls["bwd"] >= 2  # 6 planes in parts


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows, cols", [(1, 1), (8, 8), (9, 3), (13, 17), (128, 64)])
def test_transpose_plane_copies_a_strided_plane_transposed(rng, dtype, rows, cols):
    """NOTE [Products against a transposed plane]: whole 8 x 8 blocks and the ragged edges."""
    ld = cols + 5  # a row stride wider than the row, as q/k/v pieces of one projection have
    buf = rng.standard_normal((rows, ld)).astype(dtype)
    out = np.full((cols, rows), np.nan, dtype)
    katt._transpose_plane(buf.ctypes.data, ld, rows, cols, out)
    np.testing.assert_array_equal(out, buf[:, :cols].T)
