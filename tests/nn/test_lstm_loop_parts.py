"""The LSTM layer's time loops in two parts with MKL's sgemm (NOTE [LSTM time loop in two
parts]): the same values and gradients as the step-by-step loops to float32 rounding, at two
BLAS threads and at one (where a single part runs every chunk), and against torch."""
import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import ember
from ember import _mkl
from ember.ops._kernels import rnn as K
from ember.ops.nn import rnn as R
from ember.ops.nn.rnn import LSTMLayer


@pytest.fixture
def loops(blas_parts_on, monkeypatch):
    """The parts on; counts the runs of the two-part loops (direction of each)."""
    if not _mkl.sgemm_address():
        pytest.skip("MKL (the mkl extra) is not loaded: the two-part loops need its sgemm")
    runs = []
    real = R._loop_in_parts

    def counted(direction, *args):
        runs.append(direction)
        real(direction, *args)

    monkeypatch.setattr(R, "_loop_in_parts", counted)
    return runs


def _args(rng, steps, batch, inp, hidden, bias):
    def a(*shape, scale=0.5):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    b = (a(4 * hidden), a(4 * hidden)) if bias else (None, None)
    return (a(steps, batch, inp, scale=1.0), a(batch, hidden), a(batch, hidden),
            a(4 * hidden, inp), a(4 * hidden, hidden), *b)


def _run(arrays, reverse, two_parts, monkeypatch, outputs=(0, 1, 2)):
    monkeypatch.setattr(R, "_LOOP_PARTS", [two_parts])
    ts = [None if a is None else ember.tensor(a, requires_grad=True) for a in arrays]
    out, h, c = LSTMLayer.apply(*ts, reverse=reverse)
    g = np.linspace(-1, 1, out.numel()).reshape(out.shape).astype(np.float32)
    loss = {0: (out * ember.tensor(g)).sum(), 1: h.sum(), 2: 2 * c.sum()}
    sum(loss[k] for k in outputs).backward()
    return ([v.detach().numpy() for v in (out, h, c)]
            + [t.grad.numpy() for t in ts if t is not None])


@pytest.mark.parametrize("threads", [2, 1])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("steps, batch, inp, hidden", [(6, 32, 16, 64), (3, 1, 3, 7),
                                                       (1, 3, 2, 2), (4, 5, 8, 33)])
def test_two_part_loops_match_step_loops(loops, rng, monkeypatch, threads, reverse, bias,
                                         steps, batch, inp, hidden):
    arrays = _args(rng, steps, batch, inp, hidden, bias)
    with threadpool_limits(limits=threads, user_api="blas"):
        ref = _run(arrays, reverse, False, monkeypatch)
        assert loops == []
        got = _run(arrays, reverse, True, monkeypatch)
    assert loops == ["fwd", "bwd"]
    for a, b in zip(ref, got, strict=True):
        scale = max(1.0, float(np.abs(a).max()))
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=2e-6 * scale)


@pytest.mark.parametrize("outputs", [(0,), (1,), (2,)])
def test_two_part_loops_one_output_used(loops, rng, monkeypatch, outputs):
    # a gradient reaching only h_T, c_T or the output sequence (the others arrive as None)
    arrays = _args(rng, 5, 4, 3, 6, True)
    ref = _run(arrays, False, False, monkeypatch, outputs)
    got = _run(arrays, False, True, monkeypatch, outputs)
    assert loops == ["fwd", "bwd"]
    for a, b in zip(ref, got, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=2e-6)


def test_two_part_loops_float64_and_one_unit_keep_step_loops(loops, rng, monkeypatch):
    # float64 (no MKL sgemm for it here) and a single hidden unit (no halves) run the old loops
    for dtype, hidden in ((np.float64, 4), (np.float32, 1)):
        arrays = tuple(None if a is None else a.astype(dtype)
                       for a in _args(rng, 3, 2, 3, hidden, True))
        _run(arrays, False, True, monkeypatch)
    assert loops == []


def test_sgemm_kernel_matches_numpy(rng):
    # the row-major wrapper of MKL's Fortran sgemm, both layouts of A, with and without C added
    f = _mkl.sgemm_address()
    if not f:
        pytest.skip("MKL (the mkl extra) is not loaded")
    a = rng.standard_normal((6, 9)).astype(np.float32)
    b = rng.standard_normal((5, 4)).astype(np.float32)
    c = rng.standard_normal((3, 10)).astype(np.float32)
    scratch = np.zeros(8, np.int64)

    @numba.njit
    def call(ta, m, n, k, a_at, lda, b_at, ldb, acc, c_at, ldc, s):
        K._sgemm(f, s, ta, m, n, k, a_at, lda, b_at, ldb, acc, c_at, ldc)

    # C[:3, 2:6] (ldc 10) += A[:3, 1:6] (lda 9) @ B (5 x 4)
    want = c.copy()
    want[:, 2:6] += a[:3, 1:6] @ b
    got = c.copy()
    call(False, 3, 4, 5, a.ctypes.data + 4, 9, b.ctypes.data, 4, True, got.ctypes.data + 8, 10,
         scratch.ctypes.data)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    # C[:3, :4] = A[:5, 2:5]^T (A stored 5 x 3 at lda 9) @ B
    want = c.copy()
    want[:, :4] = a[:5, 2:5].T @ b
    got = c.copy()
    call(True, 3, 4, 5, a.ctypes.data + 8, 9, b.ctypes.data, 4, False, got.ctypes.data, 10,
         scratch.ctypes.data)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parity
def test_two_part_loops_lstm_module_matches_torch(loops, rng):
    torch = pytest.importorskip("torch")
    ref = torch.nn.LSTM(16, 24, num_layers=2)
    ours = ember.nn.LSTM(16, 24, num_layers=2)
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                          ref.state_dict().items()})
    x = rng.standard_normal((9, 8, 16)).astype(np.float32)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, (eh, _) = ours(ex)
    to, (th, _) = ref(tx)
    w = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    ((eo * ember.tensor(w)).sum() + eh.sum()).backward()
    ((to * torch.tensor(w)).sum() + th.sum()).backward()
    assert loops == ["fwd", "fwd", "bwd", "bwd"]
    tol = {"rtol": 2e-5, "atol": 2e-6}
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), **tol)
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), **tol)
    for name, p in ref.named_parameters():
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(), p.grad.numpy(), **tol)
