"""GPT-S's training step on the one pool (NOTE [One pool] in ember/_onepool.py): Linear's GEMMs
and bias, the plane kernels of attention (NOTE [Attention on the one pool]), GELU, layer norm,
AdamW, cross-entropy, softmax and the pointwise gradient kernels as twin kernels. Values and
gradients against torch with the pool on, the parallel versions forced by zero thresholds
(small inputs, fast tests), and the whole GPT step against the same step with the pool off."""

import numpy as np
import pytest
from _attention_checks import (
    assert_gradcheck_causal,
    assert_matches_torch,
    assert_paths_agree,
    qkv_arrays,
    tol,
)

import ember
import ember.nn.functional as F
from ember import _onepool
from ember.ops._kernels import attention as _katt
from ember.ops._kernels import gelu as _kgelu
from ember.ops._kernels import loss as _kloss
from ember.ops._kernels import norm as _knorm
from ember.ops._kernels import pointwise as _kpw
from ember.ops._kernels import softmax as _ksm
from ember.optim import _kernels as _kopt

TWINS = {"add_row": _kpw._k_add_row, "att_fwd": _katt._k_attention_fwd_planes,
         "att_bwd": _katt._k_attention_bwd_planes, "gelu_fwd": _kgelu._k_gelu_fwd,
         "gelu_bwd": _kgelu._k_gelu_bwd, "gelu_tanh_fwd": _kgelu._k_gelu_tanh_fwd,
         "gelu_tanh_bwd": _kgelu._k_gelu_tanh_bwd, "ln_fwd": _knorm._k_layernorm_fwd,
         "ln_bwd": _knorm._k_layernorm_bwd, "adam": _kopt._k_adam_multi_chunks,
         "row_exp": _kloss._k_row_exp, "ce_fwd": _kloss._k_cross_entropy_fwd,
         "ce_bwd": _kloss._k_cross_entropy_bwd, "softmax_fwd": _ksm._k_softmax_fwd,
         "softmax_bwd": _ksm._k_softmax_bwd, "log_softmax_fwd": _ksm._k_log_softmax_fwd,
         "log_softmax_bwd": _ksm._k_log_softmax_bwd, "clamp": _kpw._k_clamp,
         "masked_grad": _kpw._k_masked_grad, "tanh_grad": _kpw._k_tanh_grad,
         "sigmoid_grad": _kpw._k_sigmoid_grad}


@pytest.fixture
def pool_calls(one_pool, monkeypatch):
    """The pool on with every threshold at zero; returns {name: calls of the parallel version}
    (and "gemm": pool GEMMs), so that a test can see the pool paths ran."""
    calls = {name: 0 for name in TWINS}
    calls["gemm"] = 0
    monkeypatch.setattr(_onepool, "MIN_MACS", 0)

    def counting(name, fn):
        def run(*args):
            calls[name] += 1
            return fn(*args)
        return run

    for name, tw in TWINS.items():
        monkeypatch.setattr(tw, "min_work", 0)
        monkeypatch.setattr(tw, "parallel", counting(name, tw.parallel))
    monkeypatch.setattr(_onepool, "_k_gemm_blocks", counting("gemm", _onepool._k_gemm_blocks))
    return calls


def _pair(torch, a):
    return (ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True))


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_on_the_pool_matches_torch(rng, pool_calls, dtype, bias):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((3, 30, 24)).astype(dtype)  # > 64 rows: not turned round
    w = rng.standard_normal((40, 24)).astype(dtype)
    b = rng.standard_normal(40).astype(dtype)
    g = rng.standard_normal((3, 30, 40)).astype(dtype)
    (ex, tx), (ew, tw), (eb, tb) = _pair(torch, x), _pair(torch, w), _pair(torch, b)
    ey = F.linear(ex, ew, eb if bias else None)
    ty = torch.nn.functional.linear(tx, tw, tb if bias else None)
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), **tol(dtype))
    for e, t in ((ex, tx), (ew, tw)) + (((eb, tb),) if bias else ()):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), **tol(dtype))
    assert pool_calls["gemm"] >= 3  # y, dx, dW on the pool
    assert pool_calls["add_row"] == (1 if bias else 0)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("sizes", [(70, 70), (40, 90), (90, 40), (5, 5), (1, 6)])
def test_attention_on_the_pool_matches_torch(rng, pool_calls, dtype, is_causal, sizes):
    torch = pytest.importorskip("torch")
    assert_matches_torch(torch, rng, qkv_arrays(rng, dtype, *sizes), is_causal)
    # a forward of a few query rows (this little work) takes the decoding kernel (NOTE [One
    # query row]); the rest the planes
    assert (pool_calls["att_fwd"], pool_calls["att_bwd"]) == (
        int(sizes[0] > _katt._FEW_QUERIES), 1)


def test_attention_planes_equal_the_numpy_path(rng, pool_calls):
    """Plane by plane the same products and rows as the NumPy path: equal results."""
    q, k, v = qkv_arrays(rng, np.float32, 70, 70)
    assert_paths_agree(rng, q, k, v, 0.3, _onepool.set_enabled)


def test_attention_on_the_pool_gradcheck(rng, pool_calls):
    assert_gradcheck_causal(rng, 66, batch=1, heads=1, n_embed=2)
    assert pool_calls["att_bwd"] > 0


@pytest.mark.parity
def test_attention_on_the_pool_other_layouts_take_the_numpy_path(rng, pool_calls):
    """A query whose last axis is not unit-stride does not suit the plane kernel: the NumPy
    path computes it, with the same results."""
    torch = pytest.importorskip("torch")
    qt = rng.standard_normal((2, 3, 8, 40))           # (..., E, L) stored, used transposed
    k, v = (rng.standard_normal((2, 3, 40, 8)) for _ in range(2))
    eo = F.scaled_dot_product_attention(ember.tensor(qt).transpose(-1, -2), ember.tensor(k),
                                        ember.tensor(v), is_causal=True)
    to = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(qt).transpose(-1, -2), torch.tensor(k), torch.tensor(v), is_causal=True)
    np.testing.assert_allclose(eo.numpy(), to.numpy(), rtol=1e-10, atol=1e-12)
    assert pool_calls["att_fwd"] == 0


@pytest.mark.parity
@pytest.mark.parametrize("approximate, dtype", [("none", np.float32), ("tanh", np.float32),
                                                ("tanh", np.float64)])
def test_gelu_on_the_pool_matches_torch(rng, pool_calls, approximate, dtype):
    torch = pytest.importorskip("torch")
    x = (rng.standard_normal((33, 65)) * 3).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    ex, tx = _pair(torch, x)
    ey = F.gelu(ex, approximate=approximate)
    ty = torch.nn.functional.gelu(tx, approximate=approximate)
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), **tol(dtype))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), **tol(dtype))
    suffix = "_tanh" if approximate == "tanh" else ""
    assert pool_calls[f"gelu{suffix}_fwd"] == 1 and pool_calls[f"gelu{suffix}_bwd"] == 1


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_on_the_pool_matches_torch(rng, pool_calls, dtype):
    torch = pytest.importorskip("torch")
    x = (rng.standard_normal((4, 50, 37)) + 3).astype(dtype)
    w, b = rng.standard_normal(37).astype(dtype), rng.standard_normal(37).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    (ex, tx), (ew, tw), (eb, tb) = _pair(torch, x), _pair(torch, w), _pair(torch, b)
    ey = F.layer_norm(ex, (37,), ew, eb, 1e-5)
    ty = torch.nn.functional.layer_norm(tx, (37,), tw, tb, 1e-5)
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), **tol(dtype))
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), **tol(dtype))
    assert pool_calls["ln_fwd"] == 1 and pool_calls["ln_bwd"] == 1


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("amsgrad", [False, True])
def test_adamw_on_the_pool_matches_torch(rng, pool_calls, dtype, amsgrad):
    """Parameters of several chunks (40000 elements: 3 of 2^14) and of less than one."""
    torch = pytest.importorskip("torch")
    arrays = [rng.standard_normal(n).astype(dtype) for n in (40000, 7, 300)]
    grads = [[rng.standard_normal(a.shape).astype(dtype) for a in arrays] for _ in range(3)]
    eps_ = [ember.tensor(a, requires_grad=True) for a in arrays]
    tps = [torch.tensor(a, requires_grad=True) for a in arrays]
    kw = {"lr": 1e-2, "betas": (0.9, 0.95), "weight_decay": 0.1, "amsgrad": amsgrad}
    eopt, topt = ember.optim.AdamW(eps_, **kw), torch.optim.AdamW(tps, **kw)
    for step in grads:
        for e, t, gr in zip(eps_, tps, step, strict=True):
            e.grad, t.grad = ember.tensor(gr), torch.tensor(gr)
        eopt.step()
        topt.step()
    for e, t in zip(eps_, tps, strict=True):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **tol(dtype))
    assert pool_calls["adam"] == 3


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.2, "ignore_index": 3},
                                {"weight": True, "reduction": "sum"}])
def test_cross_entropy_on_the_pool_matches_torch(rng, pool_calls, dtype, kw):
    torch = pytest.importorskip("torch")
    x = (rng.standard_normal((150, 30)) * 5).astype(dtype)  # past the one-kernel small path
    target = rng.integers(0, 30, 150)
    target[1] = 3  # ignored where ignore_index=3
    kw = dict(kw)
    weight = rng.random(30).astype(dtype) if kw.pop("weight", False) else None
    ex, tx = _pair(torch, x)
    et = target
    ew = None if weight is None else ember.tensor(weight)
    tw = None if weight is None else torch.tensor(weight)
    el = F.cross_entropy(ex, ember.tensor(et), weight=ew, **kw)
    tl = torch.nn.functional.cross_entropy(tx, torch.tensor(et), weight=tw, **kw)
    el.backward()
    tl.backward()
    np.testing.assert_allclose(el.item(), tl.item(), **tol(dtype))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), **tol(dtype))
    assert (pool_calls["row_exp"], pool_calls["ce_fwd"], pool_calls["ce_bwd"]) == (1, 1, 1)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [-1, 0])
def test_softmax_on_the_pool_matches_torch(rng, pool_calls, dtype, log, dim):
    torch = pytest.importorskip("torch")
    x = (rng.standard_normal((20, 33)) * 4).astype(dtype)
    x[3, 4] = np.inf  # a row (or column) with +inf comes out NaN, as torch's
    g = rng.standard_normal(x.shape).astype(dtype)
    ex, tx = _pair(torch, x)
    ey = (F.log_softmax if log else F.softmax)(ex, dim=dim)
    ty = (torch.log_softmax if log else torch.softmax)(tx, dim=dim)
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), **tol(dtype))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), **tol(dtype))
    name = "log_softmax" if log else "softmax"
    assert (pool_calls[f"{name}_fwd"], pool_calls[f"{name}_bwd"]) == (1, 1)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn, kernels", [("relu", ("clamp", "masked_grad")),
                                         ("hardtanh", ("clamp", "masked_grad")),
                                         ("tanh", ("tanh_grad",)),
                                         ("sigmoid", ("sigmoid_grad",))])
def test_pointwise_on_the_pool_match_torch(rng, pool_calls, dtype, fn, kernels):
    torch = pytest.importorskip("torch")
    x = (rng.standard_normal((30, 41)) * 2).astype(dtype)
    x[0, :3] = [-0.0, 0.0, np.nan]
    g = rng.standard_normal(x.shape).astype(dtype)
    ex, tx = _pair(torch, x)
    ey = getattr(F, fn)(ex)
    ty = getattr(torch.nn.functional, fn)(tx)
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), **tol(dtype))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), **tol(dtype))
    if fn in ("relu", "hardtanh"):  # -0.0 stays -0.0 (np.signbit), as torch's
        assert np.signbit(ey.detach().numpy()[0, 0]) == np.signbit(ty.detach().numpy()[0, 0])
    for name in kernels:
        assert pool_calls[name] == 1, name


def _gpt_step_grads(pool_on):
    from examples.models.table1 import _gpt_module
    _onepool.set_enabled(pool_on)
    ember.manual_seed(0)
    model = _gpt_module(ember)(vocab=64, ctx=32, d=32, heads=2, layers=2)
    rng = np.random.default_rng(1)
    # 96 rows: above NOTE [GEMM orientation]'s 64, where a turned product would add the bias in
    # its transposing pass rather than by add_row
    tokens = ember.tensor(rng.integers(0, 64, (3, 33)))
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 64), tokens[:, 1:].reshape(-1))
    loss.backward()
    return [loss.item()] + [p.grad.numpy().copy() for p in model.parameters()]


def test_gpt_step_on_the_pool_matches_the_step_without_it(pool_calls):
    on = _gpt_step_grads(True)
    for name in ("gemm", "att_fwd", "att_bwd", "gelu_fwd", "gelu_bwd", "ln_fwd", "ln_bwd",
                 "add_row"):
        assert pool_calls[name] > 0, name
    off = _gpt_step_grads(False)
    assert on[0] == pytest.approx(off[0], rel=1e-6)
    for a, b in zip(on[1:], off[1:], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_adamw_on_the_pool_with_kernel_threads_set(rng, pool_calls):
    """ember.set_num_threads(2) turns the kernel threads on; with the one pool on the update
    still runs on the pool (one pool, never two), with the same numbers as without it."""
    arrays = [rng.standard_normal(n).astype(np.float32) for n in (40000, 300)]
    grads = [rng.standard_normal(a.shape).astype(np.float32) for a in arrays]
    results = []
    before = ember.get_num_threads()
    for threads in (1, 2):
        ember.set_num_threads(threads)
        try:
            ps = [ember.tensor(a.copy(), requires_grad=True) for a in arrays]
            opt = ember.optim.AdamW(ps, lr=1e-2, weight_decay=0.1)
            for p, g in zip(ps, grads, strict=True):
                p.grad = ember.tensor(g)
            opt.step()
            results.append([p.detach().numpy() for p in ps])
        finally:
            ember.set_num_threads(before)
    assert pool_calls["adam"] == 2
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)
