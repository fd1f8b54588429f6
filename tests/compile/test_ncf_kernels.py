"""Kernels behind the NCF training step (issue 19/21): the embedding gradient in a pooled
buffer, the one-output Linear's input gradient, Adam over many parameters at once."""
import numpy as np
import pytest

import ember
from ember.ops.nn.embedding import dense_grad


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_dense_grad_equals_add_at_and_reuses_only_free_buffers(dtype):
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 300, 1000)
    rows = rng.standard_normal((1000, 64)).astype(dtype)
    want = np.zeros((300, 64), dtype)
    np.add.at(want, idx, rows)
    first = dense_grad(300, idx, rows)
    np.testing.assert_array_equal(first, want)  # same order of additions: the same bits
    first_copy = first.copy()
    second = dense_grad(300, idx[:10], rows[:10])  # `first` is still held: a new buffer
    assert second is not first
    np.testing.assert_array_equal(first, first_copy)
    del first
    third = dense_grad(300, idx[:10], rows[:10])  # zeroed before the scatter
    np.testing.assert_array_equal(third, second)


def test_embedding_dense_grad_bad_index_raises():
    rows = np.ones((3, 32), np.float32)
    with pytest.raises(IndexError, match="index 7 is out of range for 5 rows"):
        dense_grad(5, np.array([0, 7, 1]), rows)


def test_embedding_weight_grad_kept_across_backwards_is_not_overwritten():
    emb = ember.nn.Embedding(2000, 32)
    idx = ember.tensor([1, 5, 5, 7])
    emb(idx).sum().backward()
    kept = emb.weight.grad
    emb.weight.grad = None
    (2 * emb(ember.tensor([3]))).sum().backward()
    assert float(kept[5].sum()) == 64.0 and float(kept[3].sum()) == 0.0
    assert float(emb.weight.grad[3].sum()) == 64.0 and float(emb.weight.grad[5].sum()) == 0.0


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_linear_one_output_input_grad_is_the_outer_product(dtype):
    rng = np.random.default_rng(1)
    lin = ember.nn.Linear(48, 1).to(dtype)
    x = ember.tensor(rng.standard_normal((300, 48))).to(dtype).requires_grad_()
    g = rng.standard_normal((300, 1))
    lin(x).backward(ember.tensor(g).to(dtype))
    w = lin.weight.detach().numpy()
    want = (g.astype(w.dtype) * w)
    np.testing.assert_array_equal(x.grad.numpy(), want)
    assert x.grad.dtype == dtype


def test_linear_one_output_gradcheck_float64():
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal((5, 4))).requires_grad_()
    w = ember.tensor(rng.standard_normal((4, 1))).t().requires_grad_()  # non-contiguous
    b = ember.tensor(rng.standard_normal(1)).requires_grad_()
    assert ember.autograd.gradcheck(ember.nn.functional.linear, (x, w, b))


def _adam_float32_reference(p, g, m, v, lr, b1, b2, eps, step, wd):
    """torch's Adam/AdamW update written as float32 NumPy operations, one rounding each."""
    f = np.float32
    if wd:
        p = p * f(1 - lr * wd)
    m = m + f(1 - b1) * (g - m)
    v = v * f(b2) + f(1 - b2) * g * g
    denom = np.sqrt(v) / f((1 - b2 ** step) ** 0.5) + f(eps)
    return p + f(-lr / (1 - b1 ** step)) * (m / denom), m, v


@pytest.mark.parametrize("cls,wd", [(ember.optim.Adam, 0.0), (ember.optim.AdamW, 0.1)])
def test_adam_common_case_loop_equals_float32_operations_bitwise(cls, wd):
    # the straight-line loop of the common case (NOTE [Unsigned loop indices]) rounds each
    # operation as separate float32 operations do
    rng = np.random.default_rng(4)
    x = rng.standard_normal(100_003).astype(np.float32)
    w = ember.nn.Parameter(ember.from_numpy(x.copy()))
    opt = cls([w], lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=wd)
    p, m, v = x.copy(), np.zeros_like(x), np.zeros_like(x)
    for step in range(1, 4):
        g = rng.standard_normal(x.size).astype(np.float32)
        w.grad = ember.from_numpy(g)
        opt.step()
        p, m, v = _adam_float32_reference(p, g, m, v, 1e-2, 0.9, 0.999, 1e-8, step, wd)
        np.testing.assert_array_equal(w.detach().numpy(), p)
        np.testing.assert_array_equal(opt.state[w]["exp_avg_sq"].numpy(), v)


def _gather_model(n=50, d=4):
    class M(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = ember.nn.Embedding(n, d), ember.nn.Embedding(n, 2 * d)
            self.fc = ember.nn.Linear(3 * d, 1)

        def forward(self, u, i):
            return self.fc(ember.cat([self.a(u), self.b(i)], dim=-1)).sum()
    return M()


def test_compiled_cat_of_lookups_is_one_gather_and_equals_eager():
    import copy
    ember.manual_seed(0)
    model = _gather_model()
    twin = copy.deepcopy(model)
    opt, opt_e = (ember.optim.Adam(m.parameters(), lr=1e-2) for m in (model, twin))

    def make(m, o):
        def step(u, i):
            o.zero_grad()
            loss = m(u, i)
            loss.backward()
            o.step()
            return loss
        return step

    compiled, eager = ember.compile(make(model, opt)), make(twin, opt_e)
    rng = np.random.default_rng(0)
    for _ in range(4):
        u = ember.from_numpy(rng.integers(0, 50, (3, 7)))
        i = ember.from_numpy(rng.integers(0, 50, (3, 7)))
        assert compiled(u, i).item() == eager(u, i).item()
    assert "Embedding x2 + Cat" in compiled.sources[0]
    for p, q in zip(model.parameters(), twin.parameters(), strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    for bad in (50, -1):  # eager's check, which the replay does not repeat, gives the same
        with pytest.raises(IndexError, match=f"index out of range in self: index {bad} for a "
                           "weight with 50 rows"):
            compiled(ember.from_numpy(np.full((3, 7), bad)), i)


def test_cat_of_lookups_used_twice_is_not_rewritten():
    emb = ember.nn.Embedding(10, 3)

    def f(u):
        a = emb(u)
        return ember.cat([a, emb(u + 1)], dim=1) * a.sum()

    c = ember.compile(f)
    u = ember.tensor([1, 2, 3])
    np.testing.assert_array_equal(c(u).detach().numpy(), f(u).detach().numpy())
    assert "Embedding x2 + Cat" not in c.sources[0]


def test_replay_blas_threads_switch_sets_and_restores(monkeypatch, pool_off):
    from ember._dynamo import runtime
    from ember._kernel_threads import _openblas
    funcs = _openblas()
    if not funcs:
        pytest.skip("numpy's OpenBLAS is not reachable through threadpoolctl here")
    get, set_ = funcs
    seen = []

    class Recording(ember.optim.SGD):
        def step(self, closure=None):
            seen.append(get())
            return super().step(closure)

    w = ember.nn.Parameter(ember.ones(3))
    opt = Recording([w], lr=0.1)

    def train(x):
        opt.zero_grad()
        loss = (w * x).sum()
        loss.backward()
        opt.step()
        return loss

    before = get()
    set_(2)
    try:
        monkeypatch.setattr(runtime, "REPLAY_BLAS_THREADS", [1])
        c = ember.compile(train)
        for _ in range(3):
            c(ember.ones(3))
        assert seen[0] == 2 and seen[1:] == [1, 1]  # the capture runs eagerly, replays at 1
        assert get() == 2
    finally:
        set_(before)
    np.testing.assert_allclose(w.detach().numpy(), np.full(3, 0.7), rtol=1e-6)


def test_replay_blas_threads_env_must_be_a_positive_integer(monkeypatch):
    from ember._dynamo import runtime
    monkeypatch.setenv("EMBER_COMPILE_BLAS_THREADS", "two")
    with pytest.raises(ValueError, match="EMBER_COMPILE_BLAS_THREADS: expected a positive "
                       "integer; got 'two'"):
        runtime._read_env()
    monkeypatch.setenv("EMBER_COMPILE_BLAS_THREADS", "0")
    with pytest.raises(ValueError, match="got '0'"):
        runtime._read_env()
    monkeypatch.setenv("EMBER_COMPILE_BLAS_THREADS", " 1 ")
    assert runtime._read_env() == 1


def _replay_threads_of(model, x):
    """The OpenBLAS thread count ember.compile chose for the replays of model(x)."""
    c = ember.compile(lambda t: model(t))
    c(x)
    c(x)
    return _graph_threads(c)[0]


def _graph_threads(c):
    return [e.graph.blas_threads for e in c._cache.values()]


def test_replay_blas_threads_one_for_mid_size_products_only(monkeypatch):
    # NOTE [BLAS threads in a replay]: below MID_GEMM multiply-adds the replay runs at one
    # OpenBLAS thread (NCF's 4096 x 64 x 32 products); a bigger product keeps the default
    from ember._dynamo import runtime
    monkeypatch.setattr(runtime, "REPLAY_BLAS_THREADS", [None])
    ember.manual_seed(0)
    ncf_like = ember.nn.Sequential(ember.nn.Linear(64, 32), ember.nn.ReLU(), ember.nn.Linear(32, 1))
    assert 4096 * 64 * 32 < runtime.MID_GEMM
    assert _replay_threads_of(ncf_like, ember.randn(4096, 64)) == 1
    big = ember.nn.Linear(512, 512)
    assert 1024 * 512 * 512 >= runtime.MID_GEMM
    assert _replay_threads_of(big, ember.randn(1024, 512)) is None
    mm = ember.compile(lambda a, b: a @ b)
    a, b = ember.randn(2048, 128), ember.randn(128, 128)
    np.testing.assert_allclose(mm(a, b).numpy(), mm(a, b).numpy())  # capture, then a replay
    assert _graph_threads(mm) == [None]
    no_product = ember.compile(lambda a: (a * 2).sum())
    no_product(ember.ones(3))
    assert _graph_threads(no_product) == [None]
    monkeypatch.setattr(runtime, "REPLAY_BLAS_THREADS", [2])  # the A/B switch wins
    assert _replay_threads_of(ember.nn.Linear(4, 4), ember.randn(8, 4)) == 2
