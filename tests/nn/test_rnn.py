"""RNN / LSTM / GRU layers and cells, packed sequences and the nn.utils.rnn helpers."""
import numpy as np
import pytest

import ember
from ember.nn.modules import rnn as R
from ember.nn.utils import rnn as U


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _twin(cls_name, **kw):
    """The same float64 layer in ember and torch (weights copied through NumPy)."""
    torch = _torch()
    ref = getattr(torch.nn, cls_name)(**kw).double()
    ours = getattr(R, cls_name)(**kw, dtype=ember.float64)
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                          ref.state_dict().items()})
    return ours, ref


def _close(a, b, tol=1e-10):
    a = a.detach().numpy() if isinstance(a, ember.Tensor) else a
    np.testing.assert_allclose(a, b.detach().numpy(), rtol=tol, atol=tol)


def _states(rng, cls_name, kw, batch, batched=True):
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    h_size = kw.get("proj_size", 0) or kw["hidden_size"]
    lead = (layers, batch) if batched else (layers,)
    h = rng.standard_normal(lead + (h_size,))
    if cls_name != "LSTM":
        return h
    return h, rng.standard_normal(lead + (kw["hidden_size"],))


def _to(states, lib, grad):
    torch = _torch()
    make = ember.tensor if lib == "ember" else torch.tensor
    if isinstance(states, tuple):
        return tuple(make(s, requires_grad=grad) for s in states)
    return make(states, requires_grad=grad)


def _check_run(rng, ours, ref, x, hx=None, lengths=None):
    """Compare outputs, final states, and the gradients of input, h_0 and every parameter."""
    torch = _torch()
    bf = ours.batch_first
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eh = th = None
    if hx is not None:
        eh, th = _to(hx, "ember", True), _to(hx, "torch", True)
    ein, tin = ex, tx
    if lengths is not None:
        ein = U.pack_padded_sequence(ex, lengths, batch_first=bf, enforce_sorted=False)
        tin = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first=bf,
                                                      enforce_sorted=False)
    eo, ehn = ours(ein, eh)
    to, thn = ref(tin, th)
    if lengths is not None:
        assert isinstance(eo, U.PackedSequence)
        _close(eo.data, to.data)
        eo = U.pad_packed_sequence(eo, batch_first=bf)[0]
        to = torch.nn.utils.rnn.pad_packed_sequence(to, batch_first=bf)[0]
    _close(eo, to)
    ehn = ehn if isinstance(ehn, tuple) else (ehn,)
    thn = thn if isinstance(thn, tuple) else (thn,)
    for a, b in zip(ehn, thn):
        _close(a, b)
    go = rng.standard_normal(tuple(to.shape))
    gh = [rng.standard_normal(tuple(t.shape)) for t in thn]
    loss = (eo * ember.tensor(go)).sum()
    tloss = (to * torch.tensor(go)).sum()
    for a, b, g in zip(ehn, thn, gh):
        loss = loss + (a * ember.tensor(g)).sum()
        tloss = tloss + (b * torch.tensor(g)).sum()
    loss.backward()
    tloss.backward()
    _close(ex.grad, tx.grad)
    if hx is not None:
        for a, b in zip(eh if isinstance(eh, tuple) else (eh,), th if isinstance(th, tuple)
                        else (th,)):
            _close(a.grad, b.grad)
    for name, p in ref.named_parameters():
        _close(getattr(ours, name).grad, p.grad)


CONFIGS = [
    dict(input_size=4, hidden_size=5),
    dict(input_size=4, hidden_size=5, num_layers=2, bidirectional=True, batch_first=True),
    dict(input_size=3, hidden_size=4, num_layers=2, bias=False),
]


@pytest.mark.parity
@pytest.mark.parametrize("cls_name", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("kw", CONFIGS)
@pytest.mark.parametrize("packed", [False, True])
def test_recurrent_layers_match_torch(rng, cls_name, kw, packed):
    ours, ref = _twin(cls_name, **kw)
    batch, steps = 3, 5
    shape = (batch, steps) if kw.get("batch_first") else (steps, batch)
    x = rng.standard_normal(shape + (kw["input_size"],))
    hx = _states(rng, cls_name, kw, batch) if kw.get("num_layers") == 2 else None
    _check_run(rng, ours, ref, x, hx, lengths=[4, 5, 2] if packed else None)


@pytest.mark.parity
def test_lstm_proj_size_bidirectional_packed_matches_torch(rng):
    kw = dict(input_size=4, hidden_size=6, proj_size=3, num_layers=2, bidirectional=True)
    ours, ref = _twin("LSTM", **kw)
    x = rng.standard_normal((5, 3, 4))
    _check_run(rng, ours, ref, x, _states(rng, "LSTM", kw, 3), lengths=[2, 5, 3])
    assert tuple(ours.weight_hr_l1_reverse.shape) == (3, 6)


@pytest.mark.parity
def test_rnn_relu_and_unbatched_input_match_torch(rng):
    ours, ref = _twin("RNN", input_size=3, hidden_size=4, nonlinearity="relu", num_layers=2)
    assert repr(ours) == repr(ref)
    x = rng.standard_normal((6, 3))  # unbatched (L, H_in)
    _check_run(rng, ours, ref, x, _states(rng, "RNN", dict(hidden_size=4, num_layers=2), 0,
                                          batched=False))


@pytest.mark.parity
def test_rnn_reprs_and_parameter_names_match_torch():
    torch = _torch()
    kw = dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True, batch_first=True,
              dropout=0.5, proj_size=2)
    ours, ref = R.LSTM(**kw), torch.nn.LSTM(**kw)
    assert repr(ours) == repr(ref)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in ref.named_parameters()]
    for n, p in ref.named_parameters():
        assert tuple(getattr(ours, n).shape) == tuple(p.shape)
    assert repr(R.GRU(2, 3, bias=False)) == repr(torch.nn.GRU(2, 3, bias=False))


def test_rnn_default_init_is_uniform_in_inverse_sqrt_hidden():
    lstm = R.LSTM(10, 16, num_layers=2)
    bound = 1 / np.sqrt(16)
    values = np.concatenate([p.detach().numpy().ravel() for p in lstm.parameters()])
    assert np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.95 * bound


def test_rnn_dropout_between_layers_train_vs_eval(rng):
    gru = R.GRU(3, 4, num_layers=2, dropout=0.5)
    x = ember.tensor(rng.standard_normal((5, 2, 3)).astype(np.float32))
    gru.eval()
    a, b = gru(x)[0], gru(x)[0]
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    gru.train()
    ember.manual_seed(1)
    c = gru(x)[0]
    assert not np.allclose(c.detach().numpy(), a.detach().numpy())


@pytest.mark.parity
@pytest.mark.parametrize("cls_name", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells_match_torch(rng, cls_name):
    torch = _torch()
    ours, ref = _twin(cls_name, input_size=4, hidden_size=5)
    assert repr(ours) == repr(ref)
    for batch_shape in ((3,), ()):  # batched and unbatched
        x = rng.standard_normal(batch_shape + (4,))
        h = rng.standard_normal(batch_shape + (5,))
        ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        if cls_name == "LSTMCell":
            c = rng.standard_normal(batch_shape + (5,))
            eh = (ember.tensor(h, requires_grad=True), ember.tensor(c, requires_grad=True))
            th = (torch.tensor(h, requires_grad=True), torch.tensor(c, requires_grad=True))
            (ey, ec), (ty, tc) = ours(ex, eh), ref(tx, th)
            _close(ec, tc)
            ((ey * 2).sum() + (ec * ec).sum()).backward()
            ((ty * 2).sum() + (tc * tc).sum()).backward()
            _close(eh[1].grad, th[1].grad)
        else:
            eh, th = ember.tensor(h, requires_grad=True), torch.tensor(h, requires_grad=True)
            ey, ty = ours(ex, eh), ref(tx, th)
            (ey * ey).sum().backward()
            (ty * ty).sum().backward()
        _close(ey, ty)
        _close(ex.grad, tx.grad)
        for name, p in ref.named_parameters():
            _close(getattr(ours, name).grad, p.grad)
            getattr(ours, name).grad = None
            p.grad = None
    assert tuple(R.GRUCell(2, 3)(ember.randn(2)).shape) == (3,)  # default zero state


def test_lstm_cell_backward_is_once_differentiable(rng):
    cell = R.LSTMCell(2, 3, dtype=ember.float64)
    x = ember.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    h, c = cell(x)
    v = ember.ones(2, 3, dtype=ember.float64, requires_grad=True)
    (gx,) = ember.autograd.grad(h, x, v, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        gx.sum().backward()


def test_rnn_input_errors():
    lstm = R.LSTM(4, 5, num_layers=2)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. "
                                           "Expected 4, got 3"):
        lstm(ember.randn(5, 2, 3))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D"):
        lstm(ember.randn(5))
    with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0"):
        lstm(ember.randn(0, 2, 4))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(2, 2, 5\), got \[1, 2, 5\]"):
        lstm(ember.randn(5, 2, 4), (ember.zeros(1, 2, 5), ember.zeros(2, 2, 5)))
    with pytest.raises(ValueError, match="input must have the type"):
        lstm(ember.randn(5, 2, 4, dtype=ember.float64))
    with pytest.raises(ValueError, match="input must have the type"):  # checked before the size
        lstm(ember.randn(5, 2, 3, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 3 expected 4"):
        R.GRUCell(4, 5)(ember.randn(2, 3))
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        R.RNNBase("GRU", 3, 4, proj_size=2)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        R.RNN(3, 4, dropout=1.5)


# ---------------------------------------------------------------------------------------------
# nn.utils.rnn


@pytest.mark.parity
def test_pack_pad_round_trip_matches_torch(rng):
    torch = _torch()
    tu = torch.nn.utils.rnn
    x = rng.standard_normal((3, 6, 2))  # batch_first
    lengths = [2, 6, 4]
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ep = U.pack_padded_sequence(ex, lengths, batch_first=True, enforce_sorted=False)
    tp = tu.pack_padded_sequence(tx, lengths, batch_first=True, enforce_sorted=False)
    _close(ep.data, tp.data)
    np.testing.assert_array_equal(ep.batch_sizes.numpy(), tp.batch_sizes.numpy())
    np.testing.assert_array_equal(ep.sorted_indices.numpy(), tp.sorted_indices.numpy())
    np.testing.assert_array_equal(ep.unsorted_indices.numpy(), tp.unsorted_indices.numpy())
    eo, el = U.pad_packed_sequence(ep, batch_first=True, padding_value=-1.0, total_length=7)
    to, tl = tu.pad_packed_sequence(tp, batch_first=True, padding_value=-1.0, total_length=7)
    _close(eo, to)
    np.testing.assert_array_equal(el.numpy(), tl.numpy())
    g = rng.standard_normal(tuple(to.shape))
    eo.backward(ember.tensor(g))
    to.backward(torch.tensor(g))
    _close(ex.grad, tx.grad)


@pytest.mark.parity
def test_pad_pack_sequence_helpers_match_torch(rng):
    torch = _torch()
    tu = torch.nn.utils.rnn
    seqs = [rng.standard_normal((n, 2)) for n in (3, 5, 1)]
    ours = [ember.tensor(s) for s in seqs]
    ref = [torch.tensor(s) for s in seqs]
    for kw in (dict(), dict(batch_first=True, padding_value=2.0),
               dict(batch_first=True, padding_side="left")):
        _close(U.pad_sequence(ours, **kw), tu.pad_sequence(ref, **kw))
    ep, tp = U.pack_sequence(ours, enforce_sorted=False), tu.pack_sequence(ref,
                                                                          enforce_sorted=False)
    _close(ep.data, tp.data)
    for a, b in zip(U.unpack_sequence(ep), tu.unpack_sequence(tp)):
        _close(a, b)
    padded, lengths = U.pad_sequence(ours), [3, 5, 1]
    for a, b in zip(U.unpad_sequence(padded, lengths), seqs):
        np.testing.assert_array_equal(a.numpy(), b)


def test_pack_padded_sequence_errors():
    x = ember.randn(4, 3, 2)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        U.pack_padded_sequence(x, [2, 4, 1])
    with pytest.raises(RuntimeError, match="greater than 0"):
        U.pack_padded_sequence(x, [4, 0, 0])
    with pytest.raises(RuntimeError, match="equal to batch_size"):
        U.pack_padded_sequence(x, [4, 2])
    packed = U.pack_padded_sequence(x, [4, 2, 1])
    with pytest.raises(ValueError, match="total_length to be at least"):
        U.pad_packed_sequence(packed, total_length=3)
    with pytest.raises(IndexError, match=r"at least 2 dims \(T, B, \*\), got shape \(4,\)"):
        U.pack_padded_sequence(x[:, 0, 0], [4])
    with pytest.raises(RuntimeError, match="padding_side to be one of left or right"):
        U.pad_sequence([x[:, 0]], padding_side="middle")


def test_lstm_noncontiguous_and_batch_one_input(rng):
    lstm = R.LSTM(3, 4, batch_first=True, dtype=ember.float64)
    base = ember.tensor(rng.standard_normal((3, 6, 1)))
    x = base.transpose(0, 2)  # (1, 6, 3) batch of one, strided
    assert not x.is_contiguous()
    out, (h, c) = lstm(x)
    ref, (rh, rc) = lstm(x.contiguous())
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    np.testing.assert_array_equal(h.detach().numpy(), rh.detach().numpy())
    assert tuple(out.shape) == (1, 6, 4) and tuple(c.shape) == (1, 1, 4)


@pytest.mark.parity
@pytest.mark.parametrize("bidirectional", [False, True])
def test_gru_float32_matches_torch(rng, bidirectional):
    """float32 nn.GRU (the one-pass cell kernel with vmath's sigmoid/tanh) against torch:
    outputs, h_n and every gradient."""
    torch = _torch()
    kw = dict(input_size=6, hidden_size=40, num_layers=2, bidirectional=bidirectional)
    ref = torch.nn.GRU(**kw)
    ours = R.GRU(**kw)
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                          ref.state_dict().items()})
    x = rng.standard_normal((7, 8, 6)).astype(np.float32)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, eh = ours(ex)
    to, th = ref(tx)
    tol = {"rtol": 2e-5, "atol": 2e-6}
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), **tol)
    np.testing.assert_allclose(eh.detach().numpy(), th.detach().numpy(), **tol)
    w = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    ((eo * ember.tensor(w)).sum() + eh.sum()).backward()
    ((to * torch.tensor(w)).sum() + th.sum()).backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), **tol)
    for name, p in ref.named_parameters():
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(), p.grad.numpy(), **tol,
                                   err_msg=name)
