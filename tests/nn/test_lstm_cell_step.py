"""The fused LSTMCell step (ember.ops.nn.rnn.LSTMCellStep) that nn.LSTMCell runs."""
import numpy as np
import pytest

import ember
from ember.nn.modules import rnn as R
from ember.ops.nn.rnn import LSTMCellStep


def _inputs(rng, batch=3, inp=4, hidden=5, bias=True):
    def t(*shape):
        return ember.tensor(rng.standard_normal(shape), requires_grad=True)
    b = (t(4 * hidden), t(4 * hidden)) if bias else (None, None)
    return (t(batch, inp), t(batch, hidden), t(batch, hidden), t(4 * hidden, inp),
            t(4 * hidden, hidden)) + b


@pytest.mark.parametrize("bias", [True, False])
def test_lstm_cell_step_gradcheck(rng, bias):
    args = _inputs(rng, bias=bias)
    assert ember.autograd.gradcheck(lambda *a: LSTMCellStep.apply(*a), args)


def test_lstm_cell_step_gradcheck_one_output_used(rng):
    args = _inputs(rng, batch=2, hidden=3)
    assert ember.autograd.gradcheck(lambda *a: LSTMCellStep.apply(*a)[0], args)
    assert ember.autograd.gradcheck(lambda *a: LSTMCellStep.apply(*a)[1], args)


def test_lstm_cell_step_matches_composed_ops(rng):
    x, h, c, w_ih, w_hh, b_ih, b_hh = _inputs(rng)
    gates = x @ w_ih.t() + b_ih + h @ w_hh.t() + b_hh
    i, f, g, o = gates.chunk(4, 1)
    c_ref = i.sigmoid() * g.tanh() + f.sigmoid() * c
    h_ref = o.sigmoid() * c_ref.tanh()
    h_new, c_new = LSTMCellStep.apply(x, h, c, w_ih, w_hh, b_ih, b_hh)
    np.testing.assert_allclose(h_new.detach().numpy(), h_ref.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(c_new.detach().numpy(), c_ref.detach().numpy(), rtol=1e-12)


def test_lstm_cell_step_skips_inputs_without_grad(rng):
    x, h, c, w_ih, w_hh, b_ih, b_hh = _inputs(rng)
    x = x.detach()
    h_new, _ = LSTMCellStep.apply(x, h, c, w_ih, w_hh, b_ih, b_hh)
    h_new.sum().backward()
    assert x.grad is None and h.grad is not None and w_ih.grad is not None
    # the two bias gradients are equal but separate tensors (no aliased .grad)
    np.testing.assert_array_equal(b_ih.grad.numpy(), b_hh.grad.numpy())
    b_ih.grad.add_(1.0)
    assert not np.array_equal(b_ih.grad.numpy(), b_hh.grad.numpy())


def test_lstm_cell_step_saved_input_modified_in_place_raises(rng):
    x, h, c, w_ih, w_hh, b_ih, b_hh = _inputs(rng)
    h_new, _ = LSTMCellStep.apply(x, h, c, w_ih, w_hh, b_ih, b_hh)
    with ember.no_grad():
        w_hh.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        h_new.sum().backward()


def test_lstm_cell_empty_batch(rng):
    cell = R.LSTMCell(4, 5, dtype=ember.float64)
    x = ember.zeros(0, 4, dtype=ember.float64, requires_grad=True)
    h, c = cell(x)
    assert tuple(h.shape) == (0, 5) and tuple(c.shape) == (0, 5)
    (h.sum() + c.sum()).backward()
    assert tuple(x.grad.shape) == (0, 4)
    np.testing.assert_array_equal(cell.weight_ih.grad.numpy(), 0.0)


@pytest.mark.parity
def test_lstm_cell_loop_float32_matches_torch(rng):
    """A 6-step LSTMCell loop (the small-batch benchmark's shape) with a head and backward."""
    torch = pytest.importorskip("torch")
    ref = torch.nn.LSTMCell(8, 16)
    ours = R.LSTMCell(8, 16)
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                          ref.state_dict().items()})
    xs = rng.standard_normal((6, 4, 8)).astype(np.float32)

    def run(lib, cell, x):
        h = c = None
        for t in range(x.shape[0]):
            h, c = cell(x[t]) if h is None else cell(x[t], (h, c))
        loss = (h * h).sum() + c.sum()
        loss.backward()
        return h

    ex, tx = ember.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
    eh, th = run(ember, ours, ex), run(torch, ref, tx)
    np.testing.assert_allclose(eh.detach().numpy(), th.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    for name, p in ref.named_parameters():
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(), p.grad.numpy(),
                                   rtol=1e-4, atol=1e-6)


@pytest.mark.parity
def test_lstm_cell_half_precision_state_falls_back_and_matches_torch(rng):
    """bfloat16 cells take the composed path (the kernels compile for float32/64 only)."""
    torch = pytest.importorskip("torch")
    ref = torch.nn.LSTMCell(3, 4).bfloat16()
    ours = R.LSTMCell(3, 4, dtype=ember.bfloat16)
    ours.load_state_dict({k: ember.tensor(v.float().numpy()).bfloat16() for k, v in
                          ref.state_dict().items()})
    x = rng.standard_normal((2, 3)).astype(np.float32)
    eh, _ = ours(ember.tensor(x).bfloat16())
    th, _ = ref(torch.tensor(x).bfloat16())
    assert eh.dtype == ember.bfloat16
    np.testing.assert_allclose(eh.float().detach().numpy(), th.float().detach().numpy(),
                               rtol=2e-2, atol=2e-2)


def test_lstm_cell_step_frees_saved_arrays_after_backward(rng):
    args = _inputs(rng)
    h_new, _ = LSTMCellStep.apply(*args)
    h_new.sum().backward(retain_graph=True)
    first = args[3].grad.numpy().copy()
    h_new.sum().backward()  # retained: a second pass adds the same gradient again
    np.testing.assert_allclose(args[3].grad.numpy(), 2 * first, rtol=1e-12)
    with pytest.raises(RuntimeError, match="second time|freed"):
        h_new.sum().backward()
