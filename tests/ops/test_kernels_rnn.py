"""ember.ops._kernels.rnn against NumPy formulas and torch's LSTMCell / GRUCell."""

import numpy as np
import pytest

from ember.ops._kernels import rnn

TOL = {np.float64: {"rtol": 1e-10, "atol": 1e-12}, np.float32: {"rtol": 1e-5, "atol": 1e-6}}


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def lstm_ref(gates, c_prev, grad_h, grad_c):
    i, f, g, o = np.split(gates.astype(np.float64), 4, axis=1)
    i, f, g, o = sigmoid(i), sigmoid(f), np.tanh(g), sigmoid(o)
    c = f * c_prev + i * g
    h = o * np.tanh(c)
    dc = grad_c + grad_h * o * (1 - np.tanh(c) ** 2)
    grad_gates = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                                 dc * i * (1 - g ** 2), grad_h * np.tanh(c) * o * (1 - o)], axis=1)
    return h, c, grad_gates, dc * f


def gru_ref(gi, gh, h_prev, grad_h):
    gi_r, gi_z, gi_n = np.split(gi.astype(np.float64), 3, axis=1)
    gh_r, gh_z, gh_n = np.split(gh.astype(np.float64), 3, axis=1)
    r, z = sigmoid(gi_r + gh_r), sigmoid(gi_z + gh_z)
    n = np.tanh(gi_n + r * gh_n)
    h = (1 - z) * n + z * h_prev
    d_n = grad_h * (1 - z) * (1 - n ** 2)
    d_r = d_n * gh_n * r * (1 - r)
    d_z = grad_h * (h_prev - n) * z * (1 - z)
    return (h, np.concatenate([d_r, d_z, d_n], axis=1),
            np.concatenate([d_r, d_z, d_n * r], axis=1), grad_h * z)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch, hidden", [(3, 5), (1, 1), (0, 4), (16, 33), (17, 6)])
def test_lstm_cell_matches_reference(rng, batch, hidden, dtype):
    # up to rnn._FUSED_MAX_ROWS rows the one-pass kernel with vmath's sigmoid/tanh, above it
    # NumPy's ufuncs and the state-update kernel
    gates = (rng.standard_normal((batch, 4 * hidden)) * 3).astype(dtype)
    c_prev = rng.standard_normal((batch, hidden)).astype(dtype)
    grad_h = rng.standard_normal((batch, hidden)).astype(dtype)
    grad_c = rng.standard_normal((batch, hidden)).astype(dtype)
    h, c, saved = rnn.lstm_cell_forward(gates, c_prev)
    grad_gates, grad_c_prev = rnn.lstm_cell_backward(grad_h, grad_c, saved, c_prev)
    want = lstm_ref(gates, c_prev, grad_h, grad_c)
    for got, ref in zip((h, c, grad_gates, grad_c_prev), want):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, ref, **TOL[dtype])


def test_lstm_cell_backward_accepts_missing_grads(rng):
    gates, c_prev = rng.standard_normal((2, 12)), rng.standard_normal((2, 3))
    grad_h = rng.standard_normal((2, 3))
    _, _, saved = rnn.lstm_cell_forward(gates, c_prev)
    got = rnn.lstm_cell_backward(grad_h, None, saved, c_prev)
    want = lstm_ref(gates, c_prev, grad_h, np.zeros((2, 3)))[2:]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.parametrize("rows", [1, 20])
def test_lstm_cell_saturated_gates_stay_finite(rows):
    gates = np.tile(np.array([[-800.0, 800.0, -800.0, 800.0]]), (rows, 1))
    h, c, saved = rnn.lstm_cell_forward(gates, np.ones((rows, 1)))
    np.testing.assert_allclose(h[:, 0], np.tanh(1.0))
    np.testing.assert_allclose(c[:, 0], 1.0)
    ones = np.ones((rows, 1))
    assert np.all(np.isfinite(rnn.lstm_cell_backward(ones, ones, saved, ones)[0]))
    nan = rnn.lstm_cell_forward(np.full((rows, 4), np.nan), ones)[0]
    assert np.isnan(nan).all()  # NaN propagates (one-pass kernel for 1 row, NumPy for 20)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch, hidden", [(3, 5), (1, 1), (0, 4), (16, 33)])
def test_gru_cell_matches_reference(rng, batch, hidden, dtype):
    gi = (rng.standard_normal((batch, 3 * hidden)) * 2).astype(dtype)
    gh = (rng.standard_normal((batch, 3 * hidden)) * 2).astype(dtype)
    h_prev = rng.standard_normal((batch, hidden)).astype(dtype)
    grad_h = rng.standard_normal((batch, hidden)).astype(dtype)
    want = gru_ref(gi, gh, h_prev, grad_h)
    h, saved = rnn.gru_cell_forward(gi, gh, h_prev)
    gh[:] = 0   # the saved state must not alias the caller's gh
    got = (h,) + rnn.gru_cell_backward(grad_h, saved, h_prev)
    for g, w in zip(got, want):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, w, **TOL[dtype])


# ---------------------------------------------------------------------------------------------
# torch parity: the whole cell, with our kernels between the caller-side matmuls


def _torch_cell(torch, cls, dtype, n_in, hidden):
    torch.manual_seed(0)
    return cls(n_in, hidden).to(torch.float64 if dtype == np.float64 else torch.float32)


def _params(cell):
    return [p.detach().numpy() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih,
                                         cell.bias_hh)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parity
def test_lstm_cell_matches_torch(rng, dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    batch, n_in, hidden = 4, 6, 5
    cell = _torch_cell(torch, torch.nn.LSTMCell, dtype, n_in, hidden)
    x, h0, c0, gh, gc = (rng.standard_normal((batch, n)).astype(dtype)
                         for n in (n_in, hidden, hidden, hidden, hidden))
    tx, th, tc = (torch.tensor(a, requires_grad=True) for a in (x, h0, c0))
    h_t, c_t = cell(tx, (th, tc))
    (h_t * torch.tensor(gh) + c_t * torch.tensor(gc)).sum().backward()
    w_ih, w_hh, b_ih, b_hh = _params(cell)
    h, c, saved = rnn.lstm_cell_forward(x @ w_ih.T + b_ih + h0 @ w_hh.T + b_hh, c0)
    grad_gates, grad_c0 = rnn.lstm_cell_backward(gh, gc, saved, c0)
    pairs = [(h, h_t), (c, c_t), (grad_gates @ w_ih, tx.grad), (grad_gates @ w_hh, th.grad),
             (grad_c0, tc.grad), (grad_gates.T @ x, cell.weight_ih.grad),
             (grad_gates.T @ h0, cell.weight_hh.grad), (grad_gates.sum(0), cell.bias_ih.grad)]
    for got, want in pairs:
        np.testing.assert_allclose(got, want.detach().numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parity
def test_gru_cell_matches_torch(rng, dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    batch, n_in, hidden = 4, 6, 5
    cell = _torch_cell(torch, torch.nn.GRUCell, dtype, n_in, hidden)
    x, h0, gh = (rng.standard_normal((batch, n)).astype(dtype) for n in (n_in, hidden, hidden))
    tx, th = torch.tensor(x, requires_grad=True), torch.tensor(h0, requires_grad=True)
    h_t = cell(tx, th)
    (h_t * torch.tensor(gh)).sum().backward()
    w_ih, w_hh, b_ih, b_hh = _params(cell)
    h, saved = rnn.gru_cell_forward(x @ w_ih.T + b_ih, h0 @ w_hh.T + b_hh, h0)
    grad_gi, grad_gh, grad_h0 = rnn.gru_cell_backward(gh, saved, h0)
    pairs = [(h, h_t), (grad_gi @ w_ih, tx.grad), (grad_gh @ w_hh + grad_h0, th.grad),
             (grad_gi.T @ x, cell.weight_ih.grad), (grad_gh.T @ h0, cell.weight_hh.grad),
             (grad_gi.sum(0), cell.bias_ih.grad), (grad_gh.sum(0), cell.bias_hh.grad)]
    for got, want in pairs:
        np.testing.assert_allclose(got, want.detach().numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch, hidden", [(1, 3), (5, 16), (33, 7)])
def test_gru_cell_fused_kernel_matches_numpy_path(rng, monkeypatch, dtype, batch, hidden):
    """The one-pass GRU kernel (contiguous float inputs of one dtype) against the NumPy-ufunc
    path (other layouts), forced here with a zero row cap; saturated gates included."""
    gi = (rng.standard_normal((batch, 3 * hidden)) * 4).astype(dtype)
    gh = (rng.standard_normal((batch, 3 * hidden)) * 4).astype(dtype)
    gi[0, :3] = [-200.0, 200.0, 60.0]  # r -> 0, z -> 1, n -> 1 without overflow warnings
    h_prev = rng.standard_normal((batch, hidden)).astype(dtype)
    fused = rnn.gru_cell_forward(gi, gh, h_prev)
    monkeypatch.setattr(rnn, "_FUSED_MAX_ROWS", 0)
    ufuncs = rnn.gru_cell_forward(gi, gh, h_prev)
    tol = {"rtol": 1e-6, "atol": 1e-7} if dtype == np.float32 else {"rtol": 1e-14,
                                                                    "atol": 1e-15}
    for a, b in zip(fused, ufuncs, strict=True):
        assert a.dtype == dtype
        np.testing.assert_allclose(a, b, **tol)
    assert np.isfinite(fused[0]).all() and np.isfinite(fused[1]).all()


def test_gru_cell_forward_mixed_layouts_take_numpy_path(rng):
    """A non-contiguous gh (a column slice) or mixed dtypes still compute the cell."""
    hidden = 4
    gi = rng.standard_normal((3, 3 * hidden))
    wide = rng.standard_normal((3, 6 * hidden))
    h_prev = rng.standard_normal((3, hidden))
    grad_h = rng.standard_normal((3, hidden))
    gh = wide[:, ::2]
    want = gru_ref(gi, gh, h_prev, grad_h)
    h, saved = rnn.gru_cell_forward(gi, gh, h_prev)
    np.testing.assert_allclose(h, want[0], **TOL[np.float64])
    h32, _ = rnn.gru_cell_forward(gi.astype(np.float32), gh.copy(), h_prev)
    np.testing.assert_allclose(h32, want[0], **TOL[np.float32])
