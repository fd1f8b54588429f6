"""The gate-major LSTM layer op (NOTE [Gate-major LSTM layer]): values and gradients against
torch and float64 gradcheck, with the edge cases its layout could get wrong (batch of one, one
step, reverse direction, no bias, outputs whose gradient is missing, inputs not requiring
grad, float32 vs float64)."""
import numpy as np
import pytest

import ember
from ember.ops._kernels import rnn as K
from ember.ops.nn.rnn import LSTMLayer


def _args(rng, steps, batch, inp, hidden, bias=True, dtype=np.float64):
    def t(*shape, scale=0.5):
        return ember.tensor((rng.standard_normal(shape) * scale).astype(dtype),
                            requires_grad=True)
    b = (t(4 * hidden), t(4 * hidden)) if bias else (None, None)
    return (t(steps, batch, inp, scale=1.0), t(batch, hidden), t(batch, hidden),
            t(4 * hidden, inp), t(4 * hidden, hidden), *b)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("steps, batch, inp, hidden", [(3, 2, 3, 4), (1, 1, 2, 1), (4, 3, 1, 2)])
def test_lstm_layer_gradcheck(rng, reverse, bias, steps, batch, inp, hidden):
    args = _args(rng, steps, batch, inp, hidden, bias)
    args = tuple(a for a in args if a is not None)

    def f(*a):
        x, h0, c0, w_ih, w_hh, *b = a
        b_ih, b_hh = b if b else (None, None)
        return LSTMLayer.apply(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse=reverse)

    assert ember.autograd.gradcheck(f, args)
    for k in range(3):  # one output used at a time: the other gradients arrive as None
        assert ember.autograd.gradcheck(lambda *a, k=k: f(*a)[k], args)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("steps", [1, 4])
def test_lstm_layer_zero_h0_gradients(rng, reverse, steps):
    # NOTE [grad W_hh without h0's columns]: with h0 all zeros grad W_hh skips h0's columns of
    # G (at one step, every column: an empty product); h0 itself still gets its gradient
    x, _, c0, w_ih, w_hh, b_ih, b_hh = _args(rng, steps, 3, 2, 4)
    h0 = ember.zeros(3, 4, dtype=ember.float64, requires_grad=True)
    args = (x, h0, c0, w_ih, w_hh, b_ih, b_hh)
    assert ember.autograd.gradcheck(lambda *a: LSTMLayer.apply(*a, reverse=reverse), args)
    LSTMLayer.apply(*args, reverse=reverse)[0].sum().backward()
    if steps == 1:  # the one step read h0 = 0: no gradient reaches W_hh
        np.testing.assert_array_equal(w_hh.grad.numpy(), 0.0)
    else:
        assert np.abs(w_hh.grad.numpy()).max() > 0


def test_lstm_layer_inputs_without_grad(rng):
    x, h0, c0, w_ih, w_hh, b_ih, b_hh = _args(rng, 3, 2, 3, 4)
    x, h0 = x.detach(), h0.detach()
    out, h, c = LSTMLayer.apply(x, h0, c0, w_ih, w_hh, b_ih, b_hh)
    (out.sum() + c.sum()).backward()
    assert x.grad is None and h0.grad is None
    assert c0.grad is not None and w_ih.grad is not None and b_hh.grad is not None
    # both biases get the same gradient, in two different arrays
    np.testing.assert_array_equal(b_ih.grad.numpy(), b_hh.grad.numpy())
    b_ih.grad.add_(1.0)
    assert not np.array_equal(b_ih.grad.numpy(), b_hh.grad.numpy())


def test_lstm_layer_weight_modified_before_backward_raises(rng):
    x, h0, c0, w_ih, w_hh, b_ih, b_hh = _args(rng, 2, 2, 3, 4)
    out, _, _ = LSTMLayer.apply(x, h0, c0, w_ih, w_hh, b_ih, b_hh)
    with ember.no_grad():
        w_hh.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lstm_step_kernels_match_numpy(rng, dtype):
    """The flat gate-major step kernels against the batch-major NumPy formulas."""
    hidden, batch = 5, 3
    z = rng.standard_normal((4 * hidden, batch)).astype(dtype) * 3
    c_prev = rng.standard_normal((hidden, batch)).astype(dtype)
    act = np.empty_like(z)
    c, tanh_c, h = (np.empty_like(c_prev) for _ in range(3))
    K._k_lstm_step_fwd_t(z.reshape(-1), act.reshape(-1), c_prev.reshape(-1), c.reshape(-1),
                         tanh_c.reshape(-1), h.reshape(-1))
    ref_h, ref_c, ref_saved = K.lstm_cell_forward(np.ascontiguousarray(z.T),
                                                  np.ascontiguousarray(c_prev.T))
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12,
                                                                    "atol": 1e-14}
    np.testing.assert_allclose(h.T, ref_h, **tol)
    np.testing.assert_allclose(c.T, ref_c, **tol)
    np.testing.assert_allclose(act.T, ref_saved[0], **tol)
    gh, go, gc = (rng.standard_normal((hidden, batch)).astype(dtype) for _ in range(3))
    dc = gc.copy()
    grad = np.empty_like(z)
    K._k_lstm_step_bwd_t(gh.reshape(-1), go.reshape(-1), dc.reshape(-1), act.reshape(-1),
                         tanh_c.reshape(-1), c_prev.reshape(-1), grad.reshape(-1), dtype(1))
    ref_gg, ref_gc = K.lstm_cell_backward(np.ascontiguousarray((gh + go).T),
                                          np.ascontiguousarray(gc.T), ref_saved,
                                          np.ascontiguousarray(c_prev.T))
    np.testing.assert_allclose(grad.T, ref_gg, **tol)
    np.testing.assert_allclose(dc.T, ref_gc, **tol)


def _pair(torch, dtype, **kw):
    ref = torch.nn.LSTM(**kw).to(getattr(torch, np.dtype(dtype).name))
    ours = ember.nn.LSTM(**kw, dtype=getattr(ember, np.dtype(dtype).name))
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                          ref.state_dict().items()})
    return ours, ref


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [
    dict(input_size=6, hidden_size=5, num_layers=2, bidirectional=True, batch_first=True),
    dict(input_size=3, hidden_size=8, bias=False),
    dict(input_size=4, hidden_size=3, num_layers=3),
])
@pytest.mark.parametrize("loss_on", ["out", "h_n", "c_n"])
def test_lstm_module_matches_torch(rng, dtype, kw, loss_on):
    """Values and every gradient, with the loss on one of the three results only."""
    torch = pytest.importorskip("torch")
    ours, ref = _pair(torch, dtype, **kw)
    x = rng.standard_normal((7, 4, kw["input_size"])).astype(dtype)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, (eh, ec) = ours(ex)
    to, (th, tc) = ref(tx)
    tol = {"rtol": 2e-5, "atol": 2e-6} if dtype == np.float32 else {"rtol": 1e-10,
                                                                    "atol": 1e-12}
    for a, b in ((eo, to), (eh, th), (ec, tc)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol)
    pick = {"out": 0, "h_n": 1, "c_n": 2}[loss_on]
    e, t = (eo, eh, ec)[pick], (to, th, tc)[pick]
    w = rng.standard_normal(tuple(t.shape)).astype(dtype)
    (e * ember.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), **tol)
    for name, p in ref.named_parameters():
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(), p.grad.numpy(), **tol,
                                   err_msg=name)


@pytest.fixture
def pool_off():
    """The one pool off for a test (the BLAS-threads switch applies to the serial loops)."""
    from ember import _onepool
    _onepool.set_enabled(False)
    yield
    _onepool.set_enabled(None)


def test_lstm_loop_blas_threads_switch_restores_and_keeps_values(rng, monkeypatch, pool_off):
    """EMBER_LSTM_BLAS_THREADS (NOTE [BLAS threads in the LSTM time loop]): same values, and
    OpenBLAS's thread count is restored after forward and backward."""
    from ember import _kernel_threads as kt
    from ember.ops.nn import rnn as ops

    funcs = kt._openblas()
    if not funcs:
        pytest.skip("numpy's OpenBLAS is not reachable through threadpoolctl here")
    get, _ = funcs
    args = _args(rng, 3, 2, 3, 4, dtype=np.float32)
    ref = [a.detach().numpy() for a in LSTMLayer.apply(*args)]
    before = get()
    monkeypatch.setattr(ops, "_LOOP_BLAS", [1])
    outs = LSTMLayer.apply(*args)
    assert get() == before
    for a, b in zip(outs, ref, strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b)
    outs[0].sum().backward()
    assert get() == before and args[4].grad is not None
    monkeypatch.setattr(ops, "_LOOP_BLAS", [None])
    monkeypatch.setenv("EMBER_LSTM_BLAS_THREADS", "two")
    with pytest.raises(ValueError, match="EMBER_LSTM_BLAS_THREADS: expected a positive"):
        LSTMLayer.apply(*args)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch, hidden", [(1, 3), (5, 16), (33, 7)])
def test_lstm_cell_fused_kernel_matches_numpy_path(rng, monkeypatch, dtype, batch, hidden):
    """The one-pass cell kernel (every contiguous float batch) against the NumPy-ufunc path
    (the fallback for other layouts), forced here with a zero row cap."""
    gates = (rng.standard_normal((batch, 4 * hidden)) * 4).astype(dtype)
    c_prev = rng.standard_normal((batch, hidden)).astype(dtype)
    fused = K.lstm_cell_forward(gates, c_prev)
    monkeypatch.setattr(K, "_FUSED_MAX_ROWS", 0)
    ufuncs = K.lstm_cell_forward(gates, c_prev)
    tol = {"rtol": 1e-6, "atol": 1e-7} if dtype == np.float32 else {"rtol": 1e-14,
                                                                    "atol": 1e-15}
    for a, b in zip(fused[:2] + fused[2], ufuncs[:2] + ufuncs[2], strict=True):
        np.testing.assert_allclose(a, b, **tol)


# ---- the one pool (NOTE [LSTM layer on the one pool]) ------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("blocks", [1, 2, 3])
def test_lstm_step_pool_kernels_match_serial_kernels(rng, one_pool, dtype, blocks):
    """The span-parallel step kernels against the flat serial ones, with spans of uneven
    sizes; the backward also fills the step's columns of the gate gradient G."""
    hidden, batch, steps = 7, 3, 4
    z = (rng.standard_normal((4 * hidden, batch)) * 3).astype(dtype)
    p = rng.standard_normal((4 * hidden, batch)).astype(dtype)
    c_prev = rng.standard_normal((hidden, batch)).astype(dtype)
    bias = rng.standard_normal(4 * hidden).astype(dtype)
    ref = [np.empty_like(z)] + [np.empty_like(c_prev) for _ in range(3)]  # act, c, tanh_c, h
    # the serial layer's order: z + (projection + bias)
    K._k_lstm_step_fwd_t((z + (p + bias[:, None])).reshape(-1), ref[0].reshape(-1),
                         c_prev.reshape(-1), *(a.reshape(-1) for a in ref[1:]))
    ours = [np.empty_like(a) for a in ref]
    K._k_lstm_step_fwd_pool.parallel(z.reshape(-1), p.reshape(-1),
                                     np.repeat(bias, batch), ours[0].reshape(-1),
                                     c_prev.reshape(-1), *(a.reshape(-1) for a in ours[1:]),
                                     hidden, blocks)
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_array_equal(a, b)
    act, tanh_c = ref[0], ref[2]
    dh, g_out, dc = (rng.standard_normal((hidden, batch)).astype(dtype) for _ in range(3))
    dc_ref, g_ref = dc.copy(), np.empty_like(z)
    K._k_lstm_step_bwd_t(dh.reshape(-1), g_out.reshape(-1), dc_ref.reshape(-1),
                         act.reshape(-1), tanh_c.reshape(-1), c_prev.reshape(-1),
                         g_ref.reshape(-1), dtype(1))
    g = np.empty_like(z)
    gates = np.full((4 * hidden, steps * batch), np.nan, dtype)
    K._k_lstm_step_bwd_pool.parallel(dh.reshape(-1), g_out.reshape(-1), dc.reshape(-1),
                                     act.reshape(-1), tanh_c.reshape(-1), c_prev.reshape(-1),
                                     g.reshape(-1), gates[:, 2 * batch:3 * batch], dtype(1),
                                     hidden, blocks)
    np.testing.assert_array_equal(g, g_ref)
    np.testing.assert_array_equal(dc, dc_ref)
    np.testing.assert_array_equal(gates[:, 2 * batch:3 * batch], g_ref)
    assert np.isnan(np.delete(gates, np.s_[2 * batch:3 * batch], axis=1)).all()


def _count_parallel(monkeypatch, twin):
    calls = []
    inner = twin.parallel

    def counted(*args):
        calls.append(1)
        return inner(*args)

    monkeypatch.setattr(twin, "parallel", counted)
    return calls


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [
    dict(input_size=32, hidden_size=64, num_layers=2, bidirectional=True),
    dict(input_size=32, hidden_size=64, bias=False, batch_first=True),
])
@pytest.mark.parametrize("loss_on", ["out", "c_n"])
def test_lstm_module_on_one_pool_matches_torch(rng, one_pool, monkeypatch, dtype, kw, loss_on):
    """Pool on, at a size where the parallel step kernels and the pool's GEMMs run (4H * B =
    16k elements a step, 1M multiply-adds per recurrent product): values and every gradient."""
    torch = pytest.importorskip("torch")
    fwd = _count_parallel(monkeypatch, K._k_lstm_step_fwd_pool)
    bwd = _count_parallel(monkeypatch, K._k_lstm_step_bwd_pool)
    ours, ref = _pair(torch, dtype, **kw)
    shape = (64, 3, 32) if kw.get("batch_first") else (3, 64, 32)
    x = rng.standard_normal(shape).astype(dtype)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, (eh, ec) = ours(ex)
    to, (th, tc) = ref(tx)
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10,
                                                                    "atol": 1e-12}
    for a, b in ((eo, to), (eh, th), (ec, tc)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol)
    e, t = (eo, to) if loss_on == "out" else (ec, tc)
    w = rng.standard_normal(tuple(t.shape)).astype(dtype)
    (e * ember.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), **tol)
    for name, p in ref.named_parameters():
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(), p.grad.numpy(), **tol,
                                   err_msg=name)
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    assert len(fwd) == len(bwd) == 3 * layers  # every step of every layer ran on the pool


def test_lstm_layer_pool_on_and_off_agree(rng, one_pool):
    """The pool's loops against the serial loops on the same inputs (float64, small: the twins'
    serial versions and np.matmul) - the pool path's own bookkeeping (step-major projection,
    G's columns, reverse order, missing output gradient)."""
    from ember import _onepool
    from ember.ops.nn import rnn as ops
    args = _args(rng, 4, ops._POOL_MIN_BATCH, 5, 6)
    for reverse in (False, True):
        results = []
        for on in (True, False):
            _onepool.set_enabled(on)
            for a in args:
                a.grad = None
            out, h, c = LSTMLayer.apply(*args, reverse=reverse)
            (h.sum() + (c * c).sum()).backward()
            results.append([out.detach().numpy(), h.detach().numpy()]
                           + [a.grad.numpy() for a in args])
        for a, b in zip(*results, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parity
@pytest.mark.parametrize("pool", [False, True])
def test_lstm_empty_batch_matches_torch(rng, pool):
    """A batch of 0 sequences: torch returns empty outputs and zero weight gradients (the
    layer's (T, rows, B) arrays used to fail to reshape, and a broadcast h_n gradient was
    written to in place)."""
    torch = pytest.importorskip("torch")
    from ember import _onepool
    _onepool.set_enabled(pool)
    try:
        ours, ref = _pair(torch, np.float32, input_size=3, hidden_size=4, num_layers=2,
                          bidirectional=True)
        x = np.zeros((5, 0, 3), np.float32)
        ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        outs = [ours(ex), ref(tx)]
        for o, (h, c) in outs:
            (o.sum() + h.sum() + c.sum()).backward()
        (eo, (eh, ec)), (to, (th, tc)) = outs
        assert eo.shape == tuple(to.shape) and eh.shape == tuple(th.shape)
        assert ec.shape == tuple(tc.shape) and ex.grad.shape == tuple(tx.grad.shape)
        for name, p in ref.named_parameters():
            np.testing.assert_array_equal(getattr(ours, name).grad.numpy(), p.grad.numpy())
    finally:
        _onepool.set_enabled(None)
