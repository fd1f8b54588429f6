"""vmap's batching rules against torch.func.vmap: one batched call per op family, the per-slice
fallback, grad inside vmap (per-sample gradients), nesting, randomness and chunking."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import func as efunc
from ember.func import _rules, _vmap

torch = pytest.importorskip("torch")
tfunc = torch.func

RNG = np.random.default_rng(7)


def _arr(*shape):
    return RNG.standard_normal(shape)


def _to(lib, a):
    return lib.tensor(a) if isinstance(a, np.ndarray) else a


def _np(t):
    return np.asarray(t.detach().numpy())


def _same(a, b, rtol=1e-7, atol=1e-10):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y, rtol, atol)
        return
    if isinstance(a, dict):
        for k in b:
            _same(a[k], b[k], rtol, atol)
        return
    assert tuple(a.shape) == tuple(b.shape), (tuple(a.shape), tuple(b.shape))
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


@pytest.fixture
def batched_only():
    """Asserts that the body ran batched: no per-slice op and no whole-function fallback."""
    _rules.SLICED.clear()
    before = _vmap.FALLBACKS[0]
    yield
    assert not _rules.SLICED, f"ops ran slice by slice: {_rules.SLICED}"
    assert _vmap.FALLBACKS[0] == before, "the function was evaluated slice by slice"


def _check(build, arrays, **kw):
    """vmap(build(lib)) in ember and torch on the same inputs; returns ember's result."""
    outs = []
    for lib, fn in ((ember, efunc), (torch, tfunc)):
        args = [_to(lib, a) for a in arrays]
        outs.append(fn.vmap(build(lib), **kw)(*args))
    _same(outs[0], outs[1])
    return outs[0]


# ------------------------------------------------------------------------------ op families


@pytest.mark.parity
@pytest.mark.parametrize("in_dims", [0, 1, -1, (0, None), (None, 1), (1, 0)])
def test_elementwise_broadcast(batched_only, in_dims):
    a = _arr(3, 4) if in_dims != (None, 1) else _arr(4)
    b = _arr(3, 4) if in_dims not in ((0, None),) else _arr(4)
    if in_dims in ((None, 1), (1, 0)):
        b = _arr(4, 3)
    _check(lambda lib: lambda x, y: lib.tanh(x) * y + x / (1 + y * y) - lib.exp(-x.abs()),
           [a, b], in_dims=in_dims)
    _check(lambda lib: lambda x, y: lib.where(x > y, x, y ** 2).clamp(-1, 1), [a, b],
           in_dims=in_dims)


@pytest.mark.parity
def test_broadcast_across_logical_ranks(batched_only):
    _check(lambda lib: lambda x, y: x + y, [_arr(5, 3), _arr(2, 4, 3)], in_dims=(0, None))
    _check(lambda lib: lambda x, y: x * y, [_arr(5, 2, 3), _arr(5, 3)])
    _check(lambda lib: lambda x: x * 2.5 + 1, [_arr(4)])  # 0-d samples


@pytest.mark.parity
@pytest.mark.parametrize("case", ["sum", "sum_dim", "mean_keep", "amax", "max_dim", "cumsum",
                                  "norm", "prod_neg", "var"])
def test_reductions(batched_only, case):
    fns = {
        "sum": lambda lib: lambda x: x.sum(),
        "sum_dim": lambda lib: lambda x: x.sum(dim=(0, -1)),
        "mean_keep": lambda lib: lambda x: x.mean(1, keepdim=True),
        "amax": lambda lib: lambda x: lib.amax(x, dim=-1),
        "max_dim": lambda lib: lambda x: x.max(dim=1).values,
        "cumsum": lambda lib: lambda x: x.cumsum(0),
        "norm": lambda lib: lambda x: lib.linalg.vector_norm(x, dim=1),
        "prod_neg": lambda lib: lambda x: x.prod(-2),
        "var": lambda lib: lambda x: x.var(dim=0),
    }
    _check(fns[case], [_arr(4, 3, 5)], in_dims=1)


@pytest.mark.parity
@pytest.mark.parametrize("shapes,in_dims", [
    (((4, 3, 5), (4, 5, 2)), 0),          # both batched matrices
    (((4, 3, 5), (5, 2)), (0, None)),     # shared right matrix
    (((3, 5), (4, 5, 2)), (None, 0)),
    (((4, 5), (4, 5, 2)), 0),             # vector @ matrix
    (((4, 3, 5), (4, 5)), 0),             # matrix @ vector
    (((4, 5), (4, 5)), 0),                # dot
    (((4, 2, 3, 5), (5, 6)), (0, None)),  # stacked matrices
    (((4, 5), (7, 5, 2)), (0, None)),     # vector @ stacked
])
def test_matmul(batched_only, shapes, in_dims):
    _check(lambda lib: lambda a, b: lib.matmul(a, b), [_arr(*s) for s in shapes],
           in_dims=in_dims)


@pytest.mark.parity
def test_linear_and_addmm_forms(batched_only):
    _check(lambda lib: lambda x, w, b: lib.nn.functional.linear(x, w, b),
           [_arr(6, 2, 4), _arr(3, 4), _arr(3)], in_dims=(0, None, None))
    _check(lambda lib: lambda x, w, b: lib.nn.functional.linear(x, w, b),
           [_arr(6, 4), _arr(6, 3, 4), _arr(6, 3)], in_dims=(0, 0, 0))
    _check(lambda lib: lambda x, w, b: lib.nn.functional.linear(x, w, b),
           [_arr(5, 4), _arr(6, 3, 4), _arr(3)], in_dims=(None, 0, None))
    _check(lambda lib: lambda x, w: lib.dot(x, w), [_arr(6, 4), _arr(6, 4)])
    _check(lambda lib: lambda x, w: lib.einsum("ij,kj->ik", x, w), [_arr(6, 2, 4), _arr(3, 4)],
           in_dims=(0, None))
    _check(lambda lib: lambda x, w: lib.einsum("ij,jk->k", x, w), [_arr(6, 2, 4), _arr(6, 4, 3)])


@pytest.mark.parity
@pytest.mark.parametrize("in_dims", [(0, None, None), (0, 0, 0), (None, 0, None)])
def test_conv2d(batched_only, in_dims):
    x = _arr(3, 2, 2, 6, 6) if in_dims[0] == 0 else _arr(2, 2, 6, 6)
    w = _arr(3, 4, 2, 3, 3) if in_dims[1] == 0 else _arr(4, 2, 3, 3)
    b = _arr(3, 4) if in_dims[2] == 0 else _arr(4)
    _check(lambda lib: lambda x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1, stride=2),
           [x, w, b], in_dims=in_dims)


@pytest.mark.parity
def test_pooling_and_unbatched_conv_input(batched_only):
    _check(lambda lib: lambda x: lib.nn.functional.max_pool2d(x, 2),
           [_arr(3, 2, 4, 4)])
    _check(lambda lib: lambda x: lib.nn.functional.avg_pool2d(x, 2), [_arr(3, 1, 2, 4, 4)])
    _check(lambda lib: lambda x: lib.nn.functional.adaptive_avg_pool2d(x, 1),
           [_arr(3, 2, 2, 4, 4)])


@pytest.mark.parity
def test_indexing_gather_embedding(batched_only):
    _check(lambda lib: lambda x: x[1:, ::2], [_arr(4, 3, 5)])
    _check(lambda lib: lambda x: x[..., 0], [_arr(4, 3, 5)])
    idx = np.array([2, 0, 1])
    _check(lambda lib: lambda x, i: x[:, i], [_arr(4, 3, 5), idx], in_dims=(0, None))
    _check(lambda lib: lambda x, i: lib.index_select(x, 1, i), [_arr(4, 3, 5), idx],
           in_dims=(0, None))
    gi = RNG.integers(0, 5, (4, 3, 2))
    _check(lambda lib: lambda x, i: lib.gather(x, 1, i), [_arr(4, 3, 5), gi])
    _check(lambda lib: lambda x, i: lib.gather(x, 1, i), [_arr(3, 5), gi], in_dims=(None, 0))
    tokens = RNG.integers(0, 7, (4, 6))
    _check(lambda lib: lambda t, w: lib.nn.functional.embedding(t, w), [tokens, _arr(7, 3)],
           in_dims=(0, None))


@pytest.mark.parity
@pytest.mark.parametrize("case", ["softmax", "log_softmax", "layer_norm", "cat", "stack"])
def test_softmax_norm_and_joins(batched_only, case):
    fns = {
        "softmax": lambda lib: lambda x: lib.softmax(x, dim=0),
        "log_softmax": lambda lib: lambda x: lib.nn.functional.log_softmax(x, -1),
        "layer_norm": lambda lib: lambda x: lib.nn.functional.layer_norm(
            x, (5,), lib.ones(5, dtype=lib.float64) * 2, lib.zeros(5, dtype=lib.float64)),
        "cat": lambda lib: lambda x: lib.cat([x, x * 2, lib.ones(3, 5, dtype=lib.float64)], 0),
        "stack": lambda lib: lambda x: lib.stack([x, lib.ones(3, 5, dtype=lib.float64)], -1),
    }
    _check(fns[case], [_arr(4, 3, 5)])


@pytest.mark.parity
def test_views(batched_only):
    x = _arr(4, 2, 3, 5)
    _check(lambda lib: lambda v: v.reshape(6, 5), [x])
    _check(lambda lib: lambda v: v.view(-1), [x])
    _check(lambda lib: lambda v: v.transpose(0, 2).unsqueeze(1).squeeze(1), [x])
    _check(lambda lib: lambda v: v.permute(2, 0, 1).flatten(1), [x], in_dims=2)
    _check(lambda lib: lambda v: v[:, :1].expand(7, 2, 3, 5), [x])
    _check(lambda lib: lambda v: v.T.contiguous().mT, [x], in_dims=-1)


@pytest.mark.parity
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses(batched_only, reduction):
    logits, target = _arr(5, 3, 4), RNG.integers(0, 4, (5, 3))
    target[1, 2] = -100

    def ce(lib):
        return lambda x, t: lib.nn.functional.cross_entropy(x, t, reduction=reduction)

    _check(ce, [logits, target])
    weight = np.abs(_arr(4)) + 0.5
    _check(lambda lib: lambda x, t, w: lib.nn.functional.cross_entropy(
        x, t, weight=w, reduction=reduction), [logits, target, weight], in_dims=(0, 0, None))
    _check(lambda lib: lambda x, t: lib.nn.functional.cross_entropy(x, t), [_arr(5, 4),
                                                                           target[:, 0]])
    _check(lambda lib: lambda x, y: lib.nn.functional.mse_loss(x, y, reduction=reduction),
           [_arr(5, 3, 2), _arr(5, 3, 2)])
    probs = 1 / (1 + np.exp(-_arr(5, 3)))
    _check(lambda lib: lambda x, y: lib.nn.functional.binary_cross_entropy(
        x, y, reduction=reduction), [probs, (_arr(5, 3) > 0).astype(np.float64)])


def test_debug_unwrap_shows_the_batch_in_front():
    seen = []

    def f(v):
        seen.append(tuple(efunc.debug_unwrap(v).shape))
        return v

    efunc.vmap(f, in_dims=1)(ember.ones(2, 5))
    assert seen == [(5, 2)]
    t = ember.ones(3)
    assert efunc.debug_unwrap(t) is t


# ------------------------------------------------------------------------------ fallback


@pytest.mark.parity
def test_ops_without_a_rule_run_per_slice():
    _rules.SLICED.clear()
    _check(lambda lib: lambda m: lib.linalg.det(m) * m.sum(), [_arr(4, 3, 3)])
    assert _rules.SLICED  # det has no batching rule: it ran once per sample
    # per-slice ops stay differentiable: per-sample gradients through them
    _check(lambda lib: lambda m: lib.func.grad(lambda a: lib.linalg.det(a) ** 2)(m),
           [_arr(4, 3, 3)])


def test_functions_reading_values_fall_back_to_slices():
    before = _vmap.FALLBACKS[0]

    def f(x):
        return x * 2 if x.sum().item() > 0 else -x  # data-dependent control flow

    x = ember.tensor(_arr(6, 3))
    out = efunc.vmap(f)(x)
    # logsumexp reads its input's values through NumPy (isinf): the slices are exact too
    _check(lambda lib: lambda v: lib.logsumexp(v, dim=1), [_arr(4, 3, 5)], in_dims=1)
    expected = np.stack([r * 2 if r.sum() > 0 else -r for r in x.numpy()])
    np.testing.assert_allclose(out.numpy(), expected)
    assert _vmap.FALLBACKS[0] == before + 2


# ------------------------------------------------------------------------------ transforms


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.ReLU(), lib.nn.Linear(8, 8),
                             lib.nn.Tanh(), lib.nn.Linear(8, 3)).double()


def _convnet(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3, padding=1), lib.nn.ReLU(),
                             lib.nn.MaxPool2d(2), lib.nn.Conv2d(4, 4, 3), lib.nn.ReLU(),
                             lib.nn.Flatten(), lib.nn.Linear(4, 3)).double()


def _copy(src, dst):
    with torch.no_grad():
        for (_, a), (_, b) in zip(src.named_parameters(), dst.named_parameters(), strict=True):
            b.copy_(torch.tensor(a.detach().numpy()))


def _per_sample_grads(make, x, y):
    ours, ref = make(ember), make(torch)
    _copy(ours, ref)
    results = []
    for lib, fn, model in ((ember, efunc, ours), (torch, tfunc, ref)):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xb, yb, lib=lib, fn=fn, model=model):
            out = fn.functional_call(model, p, (xb.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, yb.unsqueeze(0))

        results.append(fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(
            params, lib.tensor(x), lib.tensor(y)))
    _same(results[0], results[1], rtol=1e-8)


@pytest.mark.parity
def test_per_sample_gradients_mlp_run_batched(batched_only):
    _per_sample_grads(_mlp, _arr(7, 5), RNG.integers(0, 3, 7))


@pytest.mark.parity
def test_per_sample_gradients_convnet_run_batched(batched_only):
    _per_sample_grads(_convnet, _arr(5, 1, 6, 6), RNG.integers(0, 3, 5))


@pytest.mark.parity
def test_model_ensembling_against_torch(batched_only):
    ours = [_mlp(ember) for _ in range(3)]
    refs = [_mlp(torch) for _ in range(3)]
    for i, (o, r) in enumerate(zip(ours, refs, strict=True)):
        with ember.no_grad():
            for p in o.parameters():
                p.mul_(1 + i)
        _copy(o, r)
    x = _arr(4, 5)
    outs = []
    for lib, fn, models in ((ember, efunc, ours), (torch, tfunc, refs)):
        params, buffers = fn.stack_module_state(models)
        base = models[0]

        def call(p, b, xb, fn=fn, base=base):
            return fn.functional_call(base, (p, b), (xb,))

        outs.append(fn.vmap(call, in_dims=(0, 0, None))(params, buffers, lib.tensor(x)))
        # each model its own minibatch too
        outs.append(fn.vmap(call, in_dims=(0, 0, 0))(params, buffers, lib.tensor(
            np.stack([x, x + 1, x - 1]))))
    _same(outs[0], outs[2])
    _same(outs[1], outs[3])


@pytest.mark.parity
@pytest.mark.parametrize("transform", ["jacrev", "jacfwd", "hessian"])
def test_jacobians_and_hessians_under_vmap(batched_only, transform):
    def f(lib):
        return lambda x: lib.sin(x) * x.sum() + x ** 3

    def g(lib):
        return lambda x: (lib.tanh(x) * x ** 2).sum()

    fn = g if transform == "hessian" else f
    _check(lambda lib: getattr(lib.func, transform)(fn(lib)), [_arr(4, 3)])


@pytest.mark.parity
def test_nested_vmap_and_out_dims(batched_only):
    def outer(lib):
        return lib.func.vmap(lambda a, b: (a * b).sum() + lib.dot(a, b), in_dims=(None, 0))

    _check(outer, [_arr(3, 4), _arr(5, 4)], in_dims=(0, None))
    _check(lambda lib: lib.func.vmap(lambda a: a.softmax(-1), in_dims=1, out_dims=1),
           [_arr(2, 3, 4)], out_dims=-1)
    _check(lambda lib: lib.func.vmap(lib.func.vmap(lambda a: a.sum(0))), [_arr(2, 3, 4, 5)])
    # per-sample gradients under two levels of vmap
    _check(lambda lib: lib.func.vmap(lib.func.grad(lambda w, x: (lib.tanh(x @ w) ** 2).sum()),
                                     in_dims=(None, 0)),
           [_arr(4, 3), _arr(2, 5, 4)], in_dims=(None, 0))


@pytest.mark.parity
def test_grad_of_vmap_and_pytrees(batched_only):
    x = _arr(5, 3)
    outs = []
    for lib, fn in ((ember, efunc), (torch, tfunc)):
        def total(v, fn=fn, lib=lib):
            per = fn.vmap(lambda r: (lib.sin(r) * r).sum())(v)
            return (per ** 2).sum()
        outs.append(fn.grad(total)(lib.tensor(x)))
    _same(outs[0], outs[1])
    outs = []
    for lib, fn in ((ember, efunc), (torch, tfunc)):
        d = {"a": lib.tensor(x), "b": lib.tensor(x[:, :2].T.copy())}
        outs.append(fn.vmap(lambda d: {"y": d["a"] * 2, "z": (d["b"].sum(), d["a"][0])},
                            in_dims=({"a": 0, "b": 1},), out_dims={"y": 1, "z": (0, -1)})(d))
    _same(outs[0], outs[1])


def test_randomness_modes():
    x = ember.zeros(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        efunc.vmap(lambda a: a + ember.rand(3))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        efunc.vmap(lambda a: ember.nn.functional.dropout(a, 0.5))(x)
    ember.manual_seed(0)
    diff = efunc.vmap(lambda a: a + ember.rand(3), randomness="different")(x)
    assert len({tuple(r) for r in diff.tolist()}) == 4
    ember.manual_seed(0)
    same = efunc.vmap(lambda a: a + ember.rand(3), randomness="same")(x)
    assert len({tuple(r) for r in same.tolist()}) == 1
    ember.manual_seed(0)
    np.testing.assert_array_equal(same[0].numpy(), ember.rand(3).numpy())
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        efunc.vmap(lambda a: a, randomness="sometimes")


@pytest.mark.parity
@pytest.mark.parametrize("chunk_size", [1, 2, 3, 10])
def test_chunk_size(batched_only, chunk_size):
    _check(lambda lib: lambda a, b: (a @ b).relu(), [_arr(7, 3, 4), _arr(4, 2)],
           in_dims=(0, None), chunk_size=chunk_size)
    with pytest.raises(ValueError, match="chunk_size should be None or greater than 0"):
        efunc.vmap(lambda a: a, chunk_size=0)


def test_errors():
    with pytest.raises(ValueError, match="in_dim=0 for some input.*dimensionality 0"):
        efunc.vmap(lambda a: a)(ember.tensor(1.0))
    with pytest.raises(ValueError, match="out_dims=None for an output that is batched"):
        efunc.vmap(lambda a: a * 2, out_dims=None)(ember.ones(3))
    with pytest.raises(ValueError, match="must only return Tensors"):
        efunc.vmap(lambda a: 3)(ember.ones(3))
    assert efunc.vmap(lambda a: (a, 3), out_dims=(0, None))(ember.ones(3))[1] == 3
    # an unbatched output is expanded along the mapped dim
    out = efunc.vmap(lambda a: ember.ones(2), out_dims=1)(ember.ones(3))
    assert tuple(out.shape) == (2, 3)
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one"):
        efunc.vmap(lambda a: a if bool(a.sum() > 0) and bool(ember.ones(2)) else a)(
            ember.ones(2, 3))


def test_function_vmap_staticmethod_is_the_batching_rule():
    seen = []

    class Square(ember.autograd.Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            return 2 * g * ctx.saved_tensors[0]

        @staticmethod
        def vmap(info, in_dims, x):
            seen.append((info.batch_size, info.randomness, in_dims, tuple(x.shape)))
            return Square.apply(x).t(), 1   # the batch dim given back second

    x = ember.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    out = ember.func.vmap(Square.apply, randomness="different")(x)
    np.testing.assert_array_equal(out.numpy(), x.numpy() ** 2)
    assert seen == [(3, "different", (0,), (3, 2))]
    g = ember.func.vmap(ember.func.grad(lambda t: Square.apply(t).sum()))(x)
    np.testing.assert_array_equal(g.numpy(), 2 * x.numpy())
