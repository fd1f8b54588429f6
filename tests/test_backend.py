"""The array backend's reuse pool for long-lived results (NOTE [Reused buffers])."""
import numpy as np
import pytest

import ember
from ember import _backend

pytestmark = pytest.mark.skipif(not _backend._COUNTS_EXACT,
                                reason="the pool is off where reference counts are not exact")


@pytest.fixture
def empty_pool(monkeypatch):
    monkeypatch.setattr(_backend, "_REUSE", {})
    monkeypatch.setattr(_backend, "_REUSE_IDS", set())
    monkeypatch.setattr(_backend, "_REUSE_BYTES", [0])
    monkeypatch.setattr(_backend, "_REUSE_MIN_BYTES", 0)  # the tests use small arrays


def test_an_array_nobody_holds_is_handed_out_again(empty_pool):
    a = _backend.reusable_empty((3, 4), np.float32)
    assert a.shape == (3, 4) and a.dtype == np.float32 and a.flags.c_contiguous
    assert _backend.is_reused(a)
    first = id(a)
    del a
    b = _backend.reusable_empty((3, 4), np.float32)
    assert id(b) == first


def test_a_held_array_or_view_is_never_handed_out(empty_pool):
    a = _backend.reusable_empty((5,), np.float64)
    a[...] = 7.0
    b = _backend.reusable_empty((5,), np.float64)
    assert b is not a
    view = a[1:]
    del a
    c = _backend.reusable_empty((5,), np.float64)  # the view keeps a alive
    assert c is not view.base and np.all(view == 7.0)
    t = ember.from_numpy(b)  # a tensor wrapping b holds it too
    del b
    d = _backend.reusable_empty((5,), np.float64)
    assert d is not t._data


def test_the_pool_is_bounded_per_shape_and_in_bytes(empty_pool, monkeypatch):
    held = [_backend.reusable_empty((2,), np.float32) for _ in range(_backend._REUSE_PER_SHAPE + 3)]
    assert sum(_backend.is_reused(a) for a in held) == _backend._REUSE_PER_SHAPE
    monkeypatch.setattr(_backend, "_REUSE_LIMIT", 100)
    big = _backend.reusable_empty((1000,), np.float32)
    assert not _backend.is_reused(big)  # over the byte limit: a plain array


def test_pool_off_gives_plain_arrays(empty_pool, monkeypatch):
    monkeypatch.setattr(_backend, "_COUNTS_EXACT", False)
    a = _backend.reusable_empty((4,), np.float32)
    assert not _backend.is_reused(a)


def test_small_arrays_are_not_pooled(empty_pool, monkeypatch):
    monkeypatch.setattr(_backend, "_REUSE_MIN_BYTES", 1024)
    assert not _backend.is_reused(_backend.reusable_empty((255,), np.float32))
    assert _backend.is_reused(_backend.reusable_empty((256,), np.float32))


def _conv_step(conv, x):
    conv(x).square().sum().backward()


def test_conv_weight_grad_is_stolen_and_its_buffer_reused_across_steps(empty_pool):
    # the gradient becomes weight.grad without a copy, and after zero_grad(set_to_none) the
    # next step writes into the same pages
    conv = ember.nn.Conv2d(3, 4, 3, padding=1)
    x = ember.randn(2, 3, 6, 6)
    _conv_step(conv, x)
    g1 = conv.weight.grad._data
    assert _backend.is_reused(g1) and g1.base is None
    ident = id(g1)
    del g1
    conv.zero_grad()
    _conv_step(conv, x)
    assert id(conv.weight.grad._data) == ident


def test_a_gradient_kept_by_the_user_is_not_overwritten(empty_pool):
    conv = ember.nn.Conv2d(3, 4, 3, padding=1, bias=False)  # the loss is then quadratic in x
    x = ember.randn(2, 3, 6, 6)
    _conv_step(conv, x)
    kept = conv.weight.grad
    before = kept.numpy().copy()
    conv.zero_grad()  # set_to_none: only `kept` holds the old gradient now
    _conv_step(conv, 2 * x)
    np.testing.assert_array_equal(kept.numpy(), before)
    np.testing.assert_allclose(conv.weight.grad.numpy(), 4 * before, rtol=1e-5, atol=1e-5)


def test_gradients_accumulate_without_zero_grad(empty_pool):
    conv = ember.nn.Conv2d(3, 4, 1)  # pointwise path
    x = ember.randn(2, 3, 5, 5)
    _conv_step(conv, x)
    once = conv.weight.grad.numpy().copy()
    _conv_step(conv, x)
    np.testing.assert_allclose(conv.weight.grad.numpy(), 2 * once, rtol=1e-5, atol=1e-6)


def test_linear_weight_grad_reused_and_kept_gradients_safe(empty_pool):
    lin = ember.nn.Linear(6, 5, bias=False)
    x = ember.randn(4, 6)
    lin(x).square().sum().backward()
    g1 = lin.weight.grad
    assert _backend.is_reused(g1._data) and g1._data.base is None
    before = g1.numpy().copy()
    lin.zero_grad()
    lin(2 * x).square().sum().backward()  # quadratic in x: 4x the first gradient
    np.testing.assert_array_equal(g1.numpy(), before)
    np.testing.assert_allclose(lin.weight.grad.numpy(), 4 * before, rtol=1e-5, atol=1e-6)


def test_linear_double_backward_still_builds_a_graph(empty_pool):
    # with create_graph the weight gradient is made of ember ops, so it can be differentiated
    w = ember.randn(3, 2, dtype=ember.float64, requires_grad=True)
    x = ember.randn(4, 2, dtype=ember.float64)
    (gw,) = ember.autograd.grad(ember.nn.functional.linear(x, w).pow(2).sum(), w,
                                create_graph=True)
    assert gw.requires_grad
    (ggw,) = ember.autograd.grad(gw.sum(), w)
    # gw = 2 Y^T X with Y = X W^T, so d sum(gw) / d w[p, j] = 2 sum_n X[n, j] sum_i X[n, i]
    xn = x.numpy()
    expected = np.tile(2 * xn.T @ xn.sum(1), (3, 1))
    np.testing.assert_allclose(ggw.numpy(), expected, rtol=1e-12)


def test_kept_activations_are_never_overwritten(empty_pool):
    # outputs the user still holds keep their values while later calls of the same shapes run
    model = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3, padding=1), ember.nn.BatchNorm2d(4),
                                ember.nn.ReLU(), ember.nn.Hardtanh(0, 6))
    x = ember.randn(2, 3, 5, 5)
    kept = [model[0](x)]
    kept += [model[1](kept[0])]
    kept += [model[2](kept[1])]
    kept += [model[3](kept[2])]
    values = [k.detach().numpy().copy() for k in kept]
    for _ in range(3):
        model(ember.randn(2, 3, 5, 5)).sum().backward()
    for k, v in zip(kept, values):
        np.testing.assert_array_equal(k.detach().numpy(), v)
    assert all(_backend.is_reused(k._data) for k in kept)  # they did come from the pool
    ref = np.clip(np.maximum(values[1], 0), 0, 6)
    np.testing.assert_array_equal(values[3], ref)


def test_relu_of_a_non_contiguous_input_keeps_numpys_layout(empty_pool):
    x = ember.randn(4, 6).t()
    y = ember.relu(x)
    np.testing.assert_array_equal(y.numpy(), np.maximum(x.numpy(), 0))
    assert not _backend.is_reused(y._data)


def test_a_full_pool_drops_free_arrays_for_new_shapes(empty_pool, monkeypatch):
    monkeypatch.setattr(_backend, "_REUSE_LIMIT", 100 * 4)
    old = _backend.reusable_empty((100,), np.float32)  # fills the pool
    held = _backend.reusable_empty((60,), np.float32)  # does not fit while `old` is held
    assert not _backend.is_reused(held)
    del old
    new = _backend.reusable_empty((60,), np.float32)  # `old` is free now: dropped for it
    assert _backend.is_reused(new)
    assert _backend._REUSE_BYTES[0] == 60 * 4
    assert list(_backend._REUSE) == [((60,), np.dtype(np.float32))]


def test_eviction_never_drops_an_array_someone_holds(empty_pool, monkeypatch):
    monkeypatch.setattr(_backend, "_REUSE_LIMIT", 100 * 4)
    kept = _backend.reusable_empty((100,), np.float32)
    kept[...] = 3.0
    other = _backend.reusable_empty((50,), np.float32)
    assert _backend.is_reused(kept) and not _backend.is_reused(other)
    assert np.all(kept == 3.0)


def test_kept_lstm_outputs_and_cross_entropy_inputs_are_never_overwritten(empty_pool):
    # LSTM layers and cross-entropy take their saved sequences from the pool
    lstm = ember.nn.LSTM(4, 5)
    head = ember.nn.Linear(5, 7)
    target = ember.tensor([1, 2, 3])
    kept = []
    for step in range(3):
        x = ember.full((3, 1, 4), float(step + 1))
        out, _ = lstm(x)
        kept.append((out, out.detach().numpy().copy()))
        loss = ember.nn.functional.cross_entropy(head(out).reshape(3, 7), target)
        loss.backward()
    for out, values in kept:
        np.testing.assert_array_equal(out.detach().numpy(), values)


def test_broadcast_sums_and_tanh_gradients_are_pooled_and_kept_ones_never_overwritten(
        empty_pool, monkeypatch):
    # additive attention's pattern: a row-broadcast sum, tanh, and tanh's gradient, all big
    from ember.ops._kernels import pointwise
    monkeypatch.setattr(pointwise, "_ROWS_MIN_SIZE", 1)  # the row kernels on a small shape
    rng = np.random.default_rng(0)
    kept, grads = [], []
    for _ in range(3):
        q = ember.tensor(rng.standard_normal((2, 3, 1, 16)), requires_grad=True)
        k = ember.tensor(rng.standard_normal((2, 1, 4, 16)))
        s = q + k
        e = ember.tanh(s)
        e.sum().backward()
        kept.append((s, s.detach().numpy().copy(), q.detach().numpy().copy(), k.numpy().copy()))
        grads.append((q.grad, q.grad.numpy().copy()))
    for s, values, qn, kn in kept:
        np.testing.assert_array_equal(s.detach().numpy(), values)
        np.testing.assert_array_equal(values, qn + kn)
        assert _backend.is_reused(s._data)
    for g, values in grads:
        np.testing.assert_array_equal(g.numpy(), values)
    s, _, qn, kn = kept[-1]
    expected = (1 - np.tanh(qn + kn) ** 2).sum(axis=2, keepdims=True)
    np.testing.assert_allclose(grads[-1][1], expected, rtol=1e-12)
    g = ember.ones(2, 3, 4, 16, dtype=ember.float64)
    y = ember.tanh(ember.randn(2, 3, 4, 16, dtype=ember.float64))
    assert _backend.is_reused(pointwise.tanh_grad(g.numpy(), y.numpy()))
