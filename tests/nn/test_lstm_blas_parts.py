"""The LSTM layer's step kernels on OpenBLAS's threads (NOTE [LSTM steps on OpenBLAS's
threads]): the same values and gradients as the serial loops, bit for bit, and float64
gradcheck with the parts on."""
import numpy as np
import pytest

import ember
from ember import _blas_parts
from ember.ops.nn import rnn
from ember.ops.nn.rnn import LSTMLayer


@pytest.fixture
def parts(blas_parts_on, monkeypatch):
    """Parts forced on under two BLAS threads (tests/conftest.py); the step-by-step loops, not
    the two-part ones (tests/nn/test_lstm_loop_parts.py), which differ by rounding."""
    monkeypatch.setattr(rnn, "_LOOP_PARTS", [False])


def _args(rng, steps, batch, inp, hidden, bias, dtype):
    def a(*shape, scale=0.5):
        return (rng.standard_normal(shape) * scale).astype(dtype)
    b = (a(4 * hidden), a(4 * hidden)) if bias else (None, None)
    return (a(steps, batch, inp, scale=1.0), a(batch, hidden), a(batch, hidden),
            a(4 * hidden, inp), a(4 * hidden, hidden), *b)


def _run(arrays, reverse, use_parts):
    _blas_parts.set_enabled(use_parts)
    ts = [None if a is None else ember.tensor(a, requires_grad=True) for a in arrays]
    out, h, c = LSTMLayer.apply(*ts, reverse=reverse)
    g = np.linspace(-1, 1, out.numel()).reshape(out.shape).astype(arrays[0].dtype)
    (out * ember.tensor(g)).sum().backward(retain_graph=True)
    (h.sum() + 2 * c.sum()).backward()
    return ([v.detach().numpy() for v in (out, h, c)]
            + [t.grad.numpy() for t in ts if t is not None])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("steps, batch, inp, hidden", [(5, 32, 16, 64), (3, 1, 3, 7),
                                                       (1, 3, 2, 1)])
def test_parts_match_serial_loops(parts, rng, dtype, reverse, bias, steps, batch, inp, hidden):
    arrays = _args(rng, steps, batch, inp, hidden, bias, dtype)
    serial = _run(arrays, reverse, False)
    split = _run(arrays, reverse, True)
    for a, b in zip(serial, split, strict=True):
        np.testing.assert_array_equal(a, b)


def test_parts_gradcheck(parts, rng):
    arrays = _args(rng, 3, 4, 3, 5, True, np.float64)
    args = tuple(ember.tensor(a, requires_grad=True) for a in arrays)
    assert ember.autograd.gradcheck(lambda *a: LSTMLayer.apply(*a, reverse=False), args)


def test_parts_lstm_module_against_torch_layout(parts, rng):
    # nn.LSTM (two layers, bidirectional) through the parts: the same as with them off
    x = rng.standard_normal((6, 4, 8)).astype(np.float32)
    outs = []
    for use in (False, True):
        _blas_parts.set_enabled(use)
        ember.manual_seed(0)
        lstm = ember.nn.LSTM(8, 16, num_layers=2, bidirectional=True)
        xt = ember.tensor(x, requires_grad=True)
        y, (h, c) = lstm(xt)
        (y.sum() + h.sum()).backward()
        outs.append((y.detach().numpy(), xt.grad.numpy(), lstm.weight_hh_l1_reverse.grad.numpy()))
    for a, b in zip(*outs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_layer_copies_run_in_parts(parts, rng, parts_counted):
    # NOTE [LSTM layer copies in parts]: the output's and its gradient's transposes over the 5
    # steps, the gate gradients into G's 4 * 7 rows (both backwards)
    sizes = parts_counted
    arrays = _args(rng, 5, 6, 3, 7, True, np.float32)
    split = _run(arrays, False, True)
    assert sorted(sizes) == [5, 5, 28, 28]
    serial = _run(arrays, False, False)
    assert len(sizes) == 4
    for a, b in zip(serial, split, strict=True):
        np.testing.assert_array_equal(a, b)
