"""The NCF step's kernels in row parts on the kernel threads, and the switch that turns them on
inside compiled replays only (EMBER_COMPILE_KERNEL_THREADS, NOTE [Kernel threads in a replay]):
every split gives eager's single-thread values bit for bit (issue 19)."""
import copy

import numpy as np
import pytest
from _blas_bits import assert_serial_bits

import ember
from ember import _kernel_threads
from ember.ops.nn import embedding as emb_op


@pytest.fixture
def two_threads():
    before = ember._threads._requested[0]
    ember._threads._requested[0] = 2
    yield
    ember._threads._requested[0] = before


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2])
def test_dense_grad_of_a_column_slice_equals_add_at(dtype, threads, two_threads):
    ember._threads._requested[0] = threads
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 9000, 5000)
    wide = rng.standard_normal((5000, 3, 32)).astype(dtype)
    for rows in (wide[:, 1, :], wide.reshape(5000, 96)[:, 40:72], wide[:, 0, :].copy()):
        want = np.zeros((9000, 32), dtype)
        np.add.at(want, idx, rows)  # in order, as eager's scatter: the same bits
        np.testing.assert_array_equal(emb_op.dense_grad(9000, idx, rows), want)


def test_dense_grad_odd_layouts_and_bad_index(two_threads):
    rng = np.random.default_rng(1)
    rows = rng.standard_normal((6, 4)).astype(np.float32)
    idx = np.array([3, 1, 3, 0, 2, 3])
    want = np.zeros((5, 4), np.float32)
    np.add.at(want, idx[::-1], rows[::-1])
    np.testing.assert_array_equal(emb_op.dense_grad(5, idx[::-1], rows[::-1]), want)
    np.testing.assert_array_equal(emb_op.dense_grad(5, idx, rows[:, :0]), np.zeros((5, 0)))
    np.testing.assert_array_equal(emb_op.dense_grad(5, idx[:0], rows[:0]), np.zeros((5, 4)))
    big = np.ones((5000, 16), np.float32)
    bad = np.zeros(5000, np.int64)
    bad[[4000, 100]] = [70000, -3]  # the first in batch order is reported
    with pytest.raises(IndexError, match="index -3 is out of range for 9000 rows"):
        emb_op.dense_grad(9000, bad, big)


@pytest.mark.parametrize("threads", [1, 2])
def test_lookup_and_gather_cat_equal_take(threads, two_threads):
    ember._threads._requested[0] = threads
    rng = np.random.default_rng(2)
    w1 = rng.standard_normal((3000, 32)).astype(np.float32)
    w2 = rng.standard_normal((2000, 16)).astype(np.float32)
    i1, i2 = rng.integers(0, 3000, (64, 80)), rng.integers(0, 2000, (64, 80))
    np.testing.assert_array_equal(emb_op.lookup(w1, i1), np.take(w1, i1, axis=0))
    ctxs = [type("C", (), {})() for _ in range(2)]
    got = emb_op.gather_cat(ctxs, [w1, w2], [i1, i2], [None, None], [False, False])
    np.testing.assert_array_equal(
        got, np.concatenate([np.take(w1, i1, axis=0), np.take(w2, i2, axis=0)], axis=-1))
    assert ctxs[1].num == 2000 and ctxs[1].indices is i2
    i2[5, 7] = 2000
    with pytest.raises(IndexError, match="index out of range in self: index 2000 for a weight "
                       "with 2000 rows"):
        emb_op.gather_cat(ctxs, [w1, w2], [i1, i2], [None, None], [False, False])
    with pytest.raises(IndexError, match="out of bounds"):  # np.take's own error, as before
        emb_op.lookup(w2, i2)


def _ncf_like(n=3000, d=32):
    class M(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.ug, self.ig = ember.nn.Embedding(n, d), ember.nn.Embedding(n, d)
            self.um, self.im = ember.nn.Embedding(n, d), ember.nn.Embedding(n, d)
            self.fc = ember.nn.Linear(2 * d, 16)
            self.head = ember.nn.Linear(d + 16, 1)

        def forward(self, u, i):
            g = self.ug(u) * self.ig(i)
            m = ember.relu(self.fc(ember.cat([self.um(u), self.im(i)], dim=1)))
            return self.head(ember.cat([g, m], dim=1)).squeeze(1)
    return M()


@pytest.mark.parametrize("opt_cls", [ember.optim.Adam, ember.optim.AdamW])
def test_compiled_step_with_replay_kernel_threads_equals_eager_bitwise(opt_cls, monkeypatch,
                                                                     pool_off):
    from ember._dynamo import runtime
    monkeypatch.setattr(runtime, "REPLAY_KERNEL_THREADS", [2])
    workers = []
    real = _kernel_threads.parallel_range

    def spy(fn, n, grain):
        workers.append(_kernel_threads.num_workers())
        return real(fn, n, grain)

    for mod in (emb_op, ember.optim.adam):
        monkeypatch.setattr(mod, "parallel_range", spy)
    ember.manual_seed(0)
    model = _ncf_like()
    twin = copy.deepcopy(model)
    opts = [opt_cls(m.parameters(), lr=1e-2) for m in (model, twin)]
    loss_fn = ember.nn.BCEWithLogitsLoss()

    def make(m, o):
        def step(u, i, y):
            o.zero_grad()
            loss = loss_fn(m(u, i), y)
            loss.backward()
            o.step()
            return loss
        return step

    compiled, eager = ember.compile(make(model, opts[0])), make(twin, opts[1])
    rng = np.random.default_rng(3)
    for _ in range(4):
        u, i = (ember.from_numpy(rng.integers(0, 3000, 4096)) for _ in range(2))
        y = ember.from_numpy(rng.integers(0, 2, 4096).astype(np.float32))
        workers.clear()
        assert_serial_bits(compiled(u, i, y).item(), eager(u, i, y).item())
    assert workers and max(workers) == 2  # the replay ran its kernels with the pool on
    workers.clear()
    eager(u, i, y)  # eager keeps its own setting (one thread unless asked for)
    assert workers and max(workers) == _kernel_threads.num_workers()
    compiled(u, i, y)
    for p, q in zip(model.parameters(), twin.parameters(), strict=True):
        assert_serial_bits(p.detach().numpy(), q.detach().numpy())
        assert_serial_bits(p.grad.numpy(), q.grad.numpy())
        for k, v in opts[0].state[p].items():
            assert_serial_bits(np.asarray(v.numpy()),
                                          np.asarray(opts[1].state[q][k].numpy()))


def test_replay_kernel_threads_env_must_be_a_positive_integer(monkeypatch):
    from ember._dynamo import runtime
    for bad in ("two", "0"):
        monkeypatch.setenv("EMBER_COMPILE_KERNEL_THREADS", bad)
        with pytest.raises(ValueError, match="EMBER_COMPILE_KERNEL_THREADS: expected a "
                           f"positive integer; got '{bad}'"):
            runtime._read_kernel_env()
    monkeypatch.setenv("EMBER_COMPILE_KERNEL_THREADS", " 2 ")
    assert runtime._read_kernel_env() == 2
    monkeypatch.delenv("EMBER_COMPILE_KERNEL_THREADS")
    assert runtime._read_kernel_env() is None


def test_replay_split_gemms_switch_is_close_to_eager_and_restored(monkeypatch, pool_off):
    from ember._dynamo import runtime
    from ember.ops._kernels import split
    monkeypatch.setattr(runtime, "REPLAY_KERNEL_THREADS", [2])
    monkeypatch.setattr(runtime, "REPLAY_SPLIT_GEMMS", [True])
    seen = []
    real = split.blas_parts

    def spy(fn, size, align=None):
        seen.append(split.split_gemms())
        return real(fn, size, align)

    monkeypatch.setattr(split, "blas_parts", spy)
    ember.manual_seed(0)
    lin = ember.nn.Linear(64, 32)  # 4096 x 64 x 32 = 2^23 multiply-adds: split
    twin = copy.deepcopy(lin)
    x = ember.from_numpy(np.random.default_rng(5).standard_normal((4096, 64)).astype(np.float32))
    c = ember.compile(lambda t: lin(t).square().sum())
    for _ in range(3):
        lin.zero_grad()
        got = c(x)
        got.backward()
    assert any(seen) and not split.split_gemms()  # split inside replays only, then restored
    want = twin(x).square().sum()
    want.backward()
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-5)
    np.testing.assert_allclose(lin.weight.grad.numpy(), twin.weight.grad.numpy(), rtol=1e-4,
                               atol=1e-3)


def test_replay_kernel_threads_nested_enter_restores_once(pool_off):
    from ember._dynamo import runtime
    before = _kernel_threads._default[0]
    a = runtime._kernel_enter(2)
    b = runtime._kernel_enter(2)  # a replay on another thread meanwhile
    runtime._kernel_exit(a)
    assert _kernel_threads._default[0] == 2  # the other replay still runs with the pool
    runtime._kernel_exit(b)
    assert _kernel_threads._default[0] == before
    assert runtime._kernel_enter(None) is False


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_replay_relu_backward_of_a_column_slice_equals_masked_grad(dtype):
    from ember._dynamo.raw_backward import _relu
    from ember.ops._kernels import pointwise
    from ember.ops.unary import relu
    rng = np.random.default_rng(6)
    y = np.maximum(rng.standard_normal((300, 16)), 0).astype(dtype)
    y[0, :4] = [np.inf, np.nan, -0.0, 1e-300]  # torch's rule: zeroed where y <= 0 only
    ctx = type("Ctx", (), {"_to_save": (y,)})()
    g = rng.standard_normal((300, 48)).astype(dtype)[:, 32:]
    (got,) = _relu(relu, ctx, (g,), 1)
    want = pointwise.masked_grad(np.ascontiguousarray(g), y, 0, None)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    np.testing.assert_array_equal(got[0, :3], [g[0, 0], g[0, 1], 0])  # +inf and NaN pass


def test_compiled_relu_after_cat_backward_equals_eager():
    ember.manual_seed(0)
    fc = ember.nn.Linear(8, 16)
    twin = copy.deepcopy(fc)
    x = ember.randn(64, 8)
    a = ember.randn(64, 32, requires_grad=True)
    w = ember.randn(48)

    def f(m, a):
        return (ember.cat([a, ember.relu(m(x))], dim=1) * w).sum()

    c = ember.compile(lambda a: f(fc, a))
    for _ in range(2):
        fc.zero_grad()
        c(a).backward()
    f(twin, a).backward()
    np.testing.assert_array_equal(fc.weight.grad.numpy(), twin.weight.grad.numpy())
    np.testing.assert_array_equal(fc.bias.grad.numpy(), twin.bias.grad.numpy())
