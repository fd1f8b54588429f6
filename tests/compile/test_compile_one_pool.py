"""ember.compile with ember's one pool on (NOTE [One pool] in ember/_onepool.py; issue 19): the
generated fused kernels' parallel twins, the embedding kernels in parts on the pool, and replays
that start no second pool - each equal to the serial path bit for bit, and compiled == eager."""
import copy

import numpy as np
import pytest

import ember
from ember import _kernel_threads, _onepool
from ember._dynamo import fusion, runtime
from ember.ops.nn import embedding as emb_op


@pytest.fixture
def parallel_loads(monkeypatch):
    """The fused kernels loaded in their parallel version (one entry per load)."""
    seen = []
    real = fusion._load

    def spy(group, flat, parallel=False):
        if parallel:
            seen.append((group.shape, flat))
        return real(group, flat, parallel)

    monkeypatch.setattr(fusion, "_load", spy)
    return seen


def _chain(x, b):
    return ((x * 1.5 + b).relu() * x).clamp(-1.0, 1.0)


def _run(fn, *args):
    """fn compiled, with the pool on then off (the serial kernels), and eagerly: three results."""
    c = ember.compile(fn)
    c(*args)  # the capture (runs eagerly)
    on = c(*args)
    _onepool.set_enabled(False)
    try:
        off = c(*args)
    finally:
        _onepool.set_enabled(True)
    return on, off, fn(*args)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_chain_on_the_pool_equals_serial_and_eager(one_pool, parallel_loads, dtype):
    rng = np.random.default_rng(0)
    x = ember.from_numpy(rng.standard_normal(1 << 16).astype(dtype))
    b = ember.from_numpy(np.array(0.25, dtype))
    on, off, eager = _run(_chain, x, b)
    assert parallel_loads == [((1 << 16,), True)]
    np.testing.assert_array_equal(on.numpy(), off.numpy())
    np.testing.assert_array_equal(on.numpy(), eager.numpy())
    assert on.dtype == eager.dtype


def test_fused_chain_strided_and_broadcast_on_the_pool(one_pool, parallel_loads):
    rng = np.random.default_rng(1)
    # a transposed operand and a broadcast row: the strided kernel, split over its first dim
    x = ember.from_numpy(rng.standard_normal((300, 256)).astype(np.float32)).t()
    b = ember.from_numpy(rng.standard_normal(300).astype(np.float32))
    on, off, eager = _run(_chain, x, b)
    assert parallel_loads == [((256, 300), False)]
    np.testing.assert_array_equal(on.numpy(), off.numpy())
    np.testing.assert_array_equal(on.numpy(), eager.numpy())


def test_small_or_unsplittable_groups_stay_serial(one_pool, parallel_loads):
    rng = np.random.default_rng(2)
    small = ember.from_numpy(rng.standard_normal(1000).astype(np.float32))
    one_row = ember.from_numpy(rng.standard_normal((300, 1)).astype(np.float32)).t()
    for x in (small, one_row.expand(1, 300).contiguous()[:, ::2]):
        on, off, eager = _run(_chain, x, ember.tensor(0.5))
        np.testing.assert_array_equal(on.numpy(), eager.numpy())
    assert parallel_loads == []


def test_one_big_op_is_a_group_only_when_captured_on_the_pool(one_pool, parallel_loads):
    rng = np.random.default_rng(9)
    x = ember.from_numpy(rng.standard_normal((256, 512)).astype(np.float32))
    b = ember.from_numpy(rng.standard_normal(512).astype(np.float32))

    def f(x, b):
        return x + b

    on, off, eager = _run(f, x, b)  # captured with the pool on: a group of one
    assert parallel_loads == [((256, 512), False)]  # the strided kernel: b broadcasts
    np.testing.assert_array_equal(on.numpy(), eager.numpy())
    np.testing.assert_array_equal(off.numpy(), eager.numpy())
    _onepool.set_enabled(False)
    c = ember.compile(f)
    for _ in range(2):  # captured with the pool off: NumPy's add, as before
        got = c(x, b)
    _onepool.set_enabled(True)
    c(x, b)
    assert len(parallel_loads) == 1
    np.testing.assert_array_equal(got.numpy(), eager.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backward_gradient_sum_on_the_pool(one_pool, dtype):
    rng = np.random.default_rng(10)
    a = rng.standard_normal((128, 300)).astype(dtype)
    b = rng.standard_normal((128, 300)).astype(dtype)
    got = fusion.add(a, b)
    np.testing.assert_array_equal(got, np.add(a, b))
    assert got.flags.c_contiguous and got.dtype == dtype
    for x, y in ((a.T, b.T), (a, b[:1]), (a[:4], b[:4]), (a, b.astype(np.float16))):
        np.testing.assert_array_equal(fusion.add(x, y), np.add(x, y))  # NumPy's, as before


def test_fused_gelu_chain_gradients_on_the_pool(one_pool, parallel_loads):
    rng = np.random.default_rng(3)
    data = rng.standard_normal((64, 1024)).astype(np.float32)

    def f(x):
        return (ember.nn.functional.gelu(x * 2.0 + 1.0) * x).sum()

    c = ember.compile(f)
    grads = []
    for on in (True, True, False):  # capture, replay on the pool, serial replay
        _onepool.set_enabled(on)
        x = ember.from_numpy(data.copy()).requires_grad_()
        c(x).backward()
        grads.append(x.grad.numpy())
    _onepool.set_enabled(True)
    assert len(parallel_loads) >= 2  # forward and backward groups
    np.testing.assert_array_equal(grads[1], grads[2])
    x = ember.from_numpy(data.copy()).requires_grad_()
    f(x).backward()
    # the fused erf is float32-exact up to an ulp (NOTE [Vectorisable erf] in fusion.py)
    np.testing.assert_allclose(grads[1], x.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_kernels_on_the_pool_equal_take_and_add_at(one_pool, dtype):
    rng = np.random.default_rng(4)
    w1 = rng.standard_normal((5000, 32)).astype(dtype)
    w2 = rng.standard_normal((3000, 16)).astype(dtype)
    i1, i2 = rng.integers(0, 5000, (64, 80)), rng.integers(0, 3000, (64, 80))
    np.testing.assert_array_equal(emb_op.lookup(w1, i1), np.take(w1, i1, axis=0))
    ctxs = [type("C", (), {})() for _ in range(2)]
    got = emb_op.gather_cat(ctxs, [w1, w2], [i1, i2], [None, None], [False, False])
    np.testing.assert_array_equal(
        got, np.concatenate([np.take(w1, i1, axis=0), np.take(w2, i2, axis=0)], axis=-1))
    assert ctxs[0].num == 5000 and ctxs[1].indices is i2
    idx = rng.integers(0, 5000, 4096)
    wide = rng.standard_normal((4096, 96)).astype(dtype)
    for rows in (wide[:, 40:72], wide[:, :32].copy()):  # a column slice read in place
        want = np.zeros((5000, 32), dtype)
        np.add.at(want, idx, rows)  # in order, as eager's scatter: the same bits
        np.testing.assert_array_equal(emb_op.dense_grad(5000, idx, rows), want)


def test_embedding_kernels_on_the_pool_report_bad_indices(one_pool):
    rng = np.random.default_rng(5)
    w = rng.standard_normal((2000, 32)).astype(np.float32)
    i1, i2 = rng.integers(0, 2000, 4096), rng.integers(0, 2000, 4096)
    i2[[3000, 100]] = [2000, 2001]  # the first in row order is reported
    ctxs = [type("C", (), {})() for _ in range(2)]
    with pytest.raises(IndexError, match="index out of range in self: index 2001 for a weight "
                       "with 2000 rows"):
        emb_op.gather_cat(ctxs, [w, w], [i1, i2], [None, None], [False, False])
    with pytest.raises(IndexError, match="out of bounds"):  # np.take's own error, as eager
        emb_op.lookup(w, i2)
    bad = np.zeros(4096, np.int64)
    bad[[4000, 100]] = [70000, -3]
    with pytest.raises(IndexError, match="index -3 is out of range for 2000 rows"):
        emb_op.dense_grad(2000, bad, np.ones((4096, 32), np.float32))


def _ncf_like(n=3000, d=32):
    class M(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.ug, self.ig = ember.nn.Embedding(n, d), ember.nn.Embedding(n, d)
            self.um, self.im = ember.nn.Embedding(n, d), ember.nn.Embedding(n, d)
            self.fc1, self.fc2 = ember.nn.Linear(2 * d, 32), ember.nn.Linear(32, 16)
            self.head = ember.nn.Linear(d + 16, 1)

        def forward(self, u, i):
            g = self.ug(u) * self.ig(i)
            m = ember.cat([self.um(u), self.im(i)], dim=1)
            m = ember.relu(self.fc2(ember.relu(self.fc1(m))))
            return self.head(ember.cat([g, m], dim=1)).squeeze(1)
    return M()


@pytest.mark.parametrize("opt_cls", [ember.optim.Adam, ember.optim.AdamW])
def test_compiled_ncf_step_on_the_pool_equals_eager(one_pool, opt_cls, monkeypatch):
    monkeypatch.setattr(runtime, "REPLAY_KERNEL_THREADS", [2])  # ignored with the pool on
    monkeypatch.setattr(runtime, "REPLAY_SPLIT_GEMMS", [True])
    spawned = []
    real = _kernel_threads.parallel_range

    def spy(fn, n, grain):
        spawned.append(_kernel_threads.num_workers())
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
    rng = np.random.default_rng(6)
    for _ in range(4):
        u, i = (ember.from_numpy(rng.integers(0, 3000, 4096)) for _ in range(2))
        y = ember.from_numpy(rng.integers(0, 2, 4096).astype(np.float32))
        np.testing.assert_allclose(compiled(u, i, y).item(), eager(u, i, y).item(), rtol=1e-5)
    assert max(spawned, default=1) == 1  # no Python kernel threads beside the pool
    for p, q in zip(model.parameters(), twin.parameters(), strict=True):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-7)


def test_compiled_block_on_the_pool_equals_eager(one_pool):
    d, heads = 64, 4
    nn = ember.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (z.reshape(b, t, heads, d // heads).transpose(1, 2) for z in (q, k, v))
            att = ((q @ k.transpose(-2, -1)) * (1.0 / (d // heads) ** 0.5)).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))

    ember.manual_seed(0)
    block = Block()
    twin = copy.deepcopy(block)
    data = np.random.default_rng(7).standard_normal((8, 64, d)).astype(np.float32)
    x1 = ember.from_numpy(data.copy()).requires_grad_()
    x2 = ember.from_numpy(data.copy()).requires_grad_()
    c = ember.compile(block)
    for _ in range(2):
        block.zero_grad()
        x1.grad = None
        got = c(x1)
        got.square().mean().backward()
    want = twin(x2)
    want.square().mean().backward()
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(x1.grad.numpy(), x2.grad.numpy(), rtol=1e-4, atol=1e-6)
    for p, q in zip(block.parameters(), twin.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_replay_thread_switches_are_off_with_the_pool_on(one_pool, monkeypatch):
    before = _kernel_threads._default[0]
    assert runtime._kernel_enter(2) is False and _kernel_threads._default[0] == before
    assert runtime._blas_enter(1) == 0 and runtime._blas_enter(4) == 0
    _onepool.set_enabled(False)
    entered = runtime._kernel_enter(2)
    try:
        assert entered is True and _kernel_threads._default[0] == 2
    finally:
        runtime._kernel_exit(entered)
    assert _kernel_threads._default[0] == before


def test_rows_matmul_and_matmul_on_the_pool(one_pool, monkeypatch):
    from ember.ops import products
    calls = []
    real = _onepool.matmul

    def spy(a, b, out=None):
        calls.append((a.shape, b.shape))
        return real(a, b, out=out)

    monkeypatch.setattr(_onepool, "matmul", spy)
    rng = np.random.default_rng(11)
    a = rng.standard_normal((8, 64, 256)).astype(np.float32)
    w = rng.standard_normal((768, 256)).astype(np.float32)
    for x in (a, a.transpose(1, 0, 2)):  # rows in order, and permuted rows (not copied)
        got = products.rows_matmul(x, w.T)
        np.testing.assert_allclose(got, np.matmul(x, w.T), rtol=1e-5, atol=1e-4)
        assert got.shape == x.shape[:-1] + (768,)
    assert calls == [((512, 256), (256, 768))] * 2
    lin = ember.nn.Linear(256, 768)
    y = lin(ember.from_numpy(a))
    want = np.matmul(a, lin.weight.detach().numpy().T) + lin.bias.detach().numpy()
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-5, atol=1e-4)
    m = ember.from_numpy(rng.standard_normal((4, 128, 256)).astype(np.float32))
    n = ember.from_numpy(rng.standard_normal((4, 256, 64)).astype(np.float32))
    np.testing.assert_allclose((m @ n).numpy(), np.matmul(m.numpy(), n.numpy()), rtol=1e-5,
                               atol=1e-4)
    assert calls[-1] == ((4, 128, 256), (4, 256, 64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_replay_relu_backward_rows_on_the_pool(one_pool, dtype):
    from ember._dynamo.raw_backward import _relu
    from ember.ops._kernels import pointwise
    from ember.ops.unary import relu
    rng = np.random.default_rng(8)
    y = np.maximum(rng.standard_normal((4096, 16)), 0).astype(dtype)
    y[0, :4] = [np.inf, np.nan, -0.0, 1e-300]  # torch's rule: zeroed where y <= 0 only
    ctx = type("Ctx", (), {"_to_save": (y,)})()
    g = rng.standard_normal((4096, 48)).astype(dtype)[:, 32:]  # a column slice, read in place
    (got,) = _relu(relu, ctx, (g,), 1)
    want = pointwise.masked_grad(np.ascontiguousarray(g), y, 0, None)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


_SINGLE = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: ember.sub(a, b, alpha=2),
    "Mul": lambda a, b: a * b, "Div": lambda a, b: a / b, "Neg": lambda a, b: -a,
    "Relu": lambda a, b: a.relu(), "Square": lambda a, b: a.square(),
    "Sqrt": lambda a, b: a.sqrt(), "Rsqrt": lambda a, b: a.rsqrt(),
    "Reciprocal": lambda a, b: a.reciprocal(), "Abs": lambda a, b: a.abs(),
    "Clamp": lambda a, b: a.clamp(-0.5, 0.7), "Maximum": lambda a, b: ember.maximum(a, b),
    "Minimum": lambda a, b: ember.minimum(a, b), "Erf": lambda a, b: a.erf(),
    "Gelu": lambda a, b: ember.nn.functional.gelu(a)}


@pytest.mark.parametrize("name", sorted(_SINGLE))
def test_each_fusible_op_alone_on_the_pool_equals_eager(one_pool, parallel_loads, name):
    from ember.testing import assert_close
    rng = np.random.default_rng(12)
    a = rng.standard_normal((256, 300)).astype(np.float32)
    a[0, :3] = [np.nan, np.inf, -0.0]
    b = rng.uniform(0.5, 2.0, 300).astype(np.float32)
    fn = _SINGLE[name]
    x, y = ember.from_numpy(a), ember.from_numpy(b)
    c = ember.compile(fn)
    c(x, y)
    got = c(x, y)
    assert "_G" in c.sources[0] and parallel_loads  # a group of one, on the pool
    assert_close(got, fn(x, y), equal_nan=True)
    xg = ember.from_numpy(np.abs(a[1:]) + 0.5).requires_grad_()  # finite, positive
    cg = ember.compile(lambda t: fn(t, y).sum())
    for _ in range(2):
        xg.grad = None
        cg(xg).backward()
    have = xg.grad
    xg.grad = None
    fn(xg, y).sum().backward()
    assert_close(have, xg.grad)
