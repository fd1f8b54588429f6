"""The backend's GEMM orientation (NOTE [GEMM orientation] in ember/_backend.py): a turned-round
product must equal the plain one, and every caller that turns round must still match torch."""
import numpy as np
import pytest

import ember
from ember import _backend


def _pair(rng, rows, k, n, dtype, weight_view=True):
    a = rng.standard_normal((rows, k)).astype(dtype)
    w = rng.standard_normal((n, k)).astype(dtype)
    return a, (w.T if weight_view else np.ascontiguousarray(w.T))


@pytest.mark.parametrize("rows, turned", [(1, False), (2, True), (32, True), (64, True),
                                          (65, False)])
def test_gemm_turns_round_only_for_few_rows_of_float32(rng, rows, turned):
    a, b = _pair(rng, rows, 48, 80, np.float32)
    assert _backend.turns_round(a, b) is turned
    got = _backend.gemm(a, b)
    assert got.shape == (rows, 80) and got.dtype == np.float32 and got.flags.c_contiguous
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype, weight_view", [(np.float64, True), (np.float32, False)])
def test_gemm_keeps_the_plain_call_otherwise(rng, dtype, weight_view):
    a, b = _pair(rng, 8, 16, 24, dtype, weight_view)
    assert not _backend.turns_round(a, b)
    np.testing.assert_array_equal(_backend.gemm(a, b), np.matmul(a, b))


def test_gemm_writes_into_out(rng):
    a, b = _pair(rng, 4, 10, 12, np.float32)
    out = np.full((4, 12), np.nan, np.float32)
    assert _backend.gemm(a, b, out=out) is out
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=1e-5, atol=1e-5)


def test_turns_round_rejects_non_contiguous_rows(rng):
    a, b = _pair(rng, 8, 16, 24, np.float32)
    assert not _backend.turns_round(a[:, ::2], b[::2])
    assert not _backend.turns_round(np.asfortranarray(a), b)


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


@pytest.mark.parametrize("rows", [3, 64, 70])
def test_small_batch_linear_and_mm_match_torch(rng, rows):
    torch = _torch()
    x = rng.standard_normal((rows, 40)).astype(np.float32)
    w = rng.standard_normal((24, 40)).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    ex, ew, eb = (ember.tensor(v, requires_grad=True) for v in (x, w, b))
    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (x, w, b))
    ey = ember.nn.functional.linear(ex, ew, eb) + ex @ ew.t()
    ty = torch.nn.functional.linear(tx, tw, tb) + tx @ tw.t()
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-4)
    g = rng.standard_normal((rows, 24)).astype(np.float32)
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("batch", [5, 70])  # 5 turns the recurrent product round, 70 does not
def test_float32_lstm_layer_matches_torch_both_orientations(rng, batch):
    torch = _torch()
    ref = torch.nn.LSTM(12, 16, num_layers=2)
    ours = ember.nn.LSTM(12, 16, num_layers=2)
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                          ref.state_dict().items()})
    x = rng.standard_normal((7, batch, 12)).astype(np.float32)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, (eh, ec) = ours(ex)
    to, (th, tc) = ref(tx)
    for e, t in ((eo, to), (eh, th), (ec, tc)):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    (eo * ember.tensor(g)).sum().backward()
    (to * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    for (name, p), q in zip(ours.named_parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-4,
                                   err_msg=name)


# NOTE [OpenBLAS's small-matrix kernel]: which products run whole, in blocks of rows, or turned


@pytest.mark.parametrize("rows, k, n, expected", [
    (8, 256, 10, 8),      # allowed whole: as it comes
    (8, 256, 256, 4),     # two blocks of four rows
    (16, 256, 256, 4),    # four blocks: K >= 128
    (16, 64, 256, 0),     # four blocks of a short K: turned round
    (2, 256, 1024, 1),    # one row per block
    (8, 16, 64, 0),       # K under 32: the kernel is not allowed
    (2, 1024, 1024, 0),   # a block of one row is over the 1e6 multiply-adds
])
def test_small_kernel_rows(monkeypatch, rng, rows, k, n, expected):
    monkeypatch.setattr(_backend, "_small_kernel", [True])
    a, b = _pair(rng, rows, k, n, np.float32)
    assert _backend.turns_round(a, b)
    assert _backend.small_kernel_rows(a, b) == expected
    monkeypatch.setattr(_backend, "_small_kernel", [False])  # another BLAS: never
    assert _backend.small_kernel_rows(a, b) == 0


@pytest.mark.parametrize("rows, k, n", [(8, 256, 256), (7, 64, 256), (6, 256, 10)])
@pytest.mark.parametrize("small_kernel", [True, False])
def test_gemm_in_blocks_matches_the_turned_product(monkeypatch, rng, rows, k, n, small_kernel):
    monkeypatch.setattr(_backend, "_small_kernel", [small_kernel])
    a, b = _pair(rng, rows, k, n, np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64) + bias
    got = _backend.gemm(a, b, bias=bias)
    assert got.shape == (rows, n) and got.dtype == np.float32 and got.flags.c_contiguous
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)
    out = np.full((rows, n), np.nan, np.float32)
    assert _backend.gemm(a, b, out=out) is out
    np.testing.assert_allclose(out, ref - bias, rtol=1e-5, atol=1e-4)
