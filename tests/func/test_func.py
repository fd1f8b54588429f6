"""ember.func against torch.func: per-sample gradients, ensembles, Jacobians, Hessians, JVPs."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import func as efunc

torch = pytest.importorskip("torch")
tfunc = torch.func

RNG = np.random.default_rng(0)


def _mlp(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))
    return model.double()


def _copy_weights(src, dst):
    with torch.no_grad():
        for (_, a), (_, b) in zip(src.named_parameters(), dst.named_parameters(), strict=True):
            b.copy_(torch.tensor(a.detach().numpy()))


def _close(a, b, rtol=1e-9):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=rtol,
                               atol=1e-12)


@pytest.mark.parity
def test_per_sample_gradients_match_torch_func():
    ours, ref = _mlp(ember), _mlp(torch)
    _copy_weights(ours, ref)
    x, y = RNG.standard_normal((6, 4)), RNG.integers(0, 3, 6)
    results = []
    for lib, fn, model in ((ember, efunc, ours), (torch, tfunc, ref)):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xb, yb, lib=lib, fn=fn, model=model):
            out = fn.functional_call(model, p, (xb.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, yb.unsqueeze(0))

        g = fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(x), lib.tensor(y))
        results.append(g)
    for k in results[1]:
        _close(results[0][k], results[1][k])


@pytest.mark.parity
def test_model_ensembling_with_stack_module_state():
    models = [_mlp(ember) for _ in range(3)]
    for i, m in enumerate(models):
        with ember.no_grad():
            for p in m.parameters():
                p.mul_(1 + i)
    params, buffers = efunc.stack_module_state(models)
    assert params["0.weight"].shape == (3, 8, 4) and params["0.weight"].requires_grad
    x = ember.tensor(RNG.standard_normal((5, 4)))

    def call(p, b, xb):
        return efunc.functional_call(models[0], (p, b), (xb,))

    out = efunc.vmap(call, in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(models):
        _close(out[i], torch.tensor(m(x).detach().numpy()))


@pytest.mark.parity
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacrev_jacfwd_hessian_match_torch(argnums):
    a, b = RNG.standard_normal(3), RNG.standard_normal(3)

    def f(lib):
        return lambda x, y: lib.sin(x) * y ** 2 + x.sum() * y

    for name in ("jacrev", "jacfwd"):
        ours = getattr(efunc, name)(f(ember), argnums)(ember.tensor(a), ember.tensor(b))
        ref = getattr(tfunc, name)(f(torch), argnums)(torch.tensor(a), torch.tensor(b))
        for o, r in zip(ours if isinstance(ours, tuple) else (ours,),
                        ref if isinstance(ref, tuple) else (ref,), strict=True):
            _close(o, r)
            assert not o.requires_grad

    def g(lib):
        return lambda x: (lib.tanh(x) * x ** 3).sum()

    _close(efunc.hessian(g(ember))(ember.tensor(a)), tfunc.hessian(g(torch))(torch.tensor(a)))


@pytest.mark.parity
def test_jvp_vjp_linearize_and_nested_grad_match_torch():
    a, t = RNG.standard_normal(4), RNG.standard_normal(4)

    def f(lib):
        return lambda x: lib.exp(x) * x.cumsum(0)

    out, tan = efunc.jvp(f(ember), (ember.tensor(a),), (ember.tensor(t),))
    rout, rtan = tfunc.jvp(f(torch), (torch.tensor(a),), (torch.tensor(t),))
    _close(out, rout)
    _close(tan, rtan)
    out, vjp_fn = efunc.vjp(f(ember), ember.tensor(a))
    rout, rvjp = tfunc.vjp(f(torch), torch.tensor(a))
    _close(vjp_fn(ember.tensor(t))[0], rvjp(torch.tensor(t))[0])
    _, jvp_fn = efunc.linearize(f(ember), ember.tensor(a))
    _close(jvp_fn(ember.tensor(t)), rtan)

    def h(lib, fn):
        return fn.grad(lambda x: fn.grad(lambda y: (y.sin() * y).sum())(x).sum())

    _close(h(ember, efunc)(ember.tensor(a)), h(torch, tfunc)(torch.tensor(a)))


def test_grad_options_and_errors():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64)
    g, aux = efunc.grad(lambda v: ((v ** 2).sum(), v.mean()), has_aux=True)(x)
    _close(g, torch.tensor([2.0, 4.0], dtype=torch.float64))
    assert aux.item() == 1.5
    gx, gy = efunc.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, x + 1)
    _close(gx, torch.tensor([2.0, 3.0], dtype=torch.float64))
    g, value = efunc.grad_and_value(lambda v: (v ** 2).sum())(x)
    assert value.item() == 5.0
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar"):
        efunc.grad(lambda v: v * 2)(x)
    with pytest.raises(RuntimeError, match="only 1 positional inputs"):
        efunc.grad(lambda v: v.sum(), argnums=3)(x)


def test_vmap_dims_and_errors():
    x = ember.tensor(RNG.standard_normal((3, 4)))
    out = efunc.vmap(lambda v: v * 2, in_dims=1, out_dims=1)(x)
    _close(out, torch.tensor(x.numpy() * 2))
    out = efunc.vmap(lambda a, b: a + b, in_dims=(0, None))(x, ember.ones(4))
    _close(out, torch.tensor(x.numpy() + 1))
    nested = efunc.vmap(efunc.vmap(lambda a: a.sum()))(x)
    _close(nested, torch.tensor(x.numpy()))
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        efunc.vmap(lambda a, b: a + b)(ember.ones(2), ember.ones(3))
    with pytest.raises(ValueError, match="in_dim=2"):
        efunc.vmap(lambda a: a, in_dims=2)(x)
    ember.manual_seed(0)
    same = efunc.vmap(lambda a: a + ember.rand(()), randomness="same")(ember.zeros(3))
    assert len(set(same.tolist())) == 1
    assert ember.vmap is efunc.vmap


def test_functional_call_buffers_ties_and_strict():
    bn = ember.nn.BatchNorm1d(2).eval()
    out = efunc.functional_call(bn, {"running_mean": ember.ones(2)}, ember.ones(3, 2))
    np.testing.assert_allclose(out.detach().numpy(), 0.0, atol=1e-6)
    assert bn.running_mean.tolist() == [0.0, 0.0]  # restored afterwards
    with pytest.raises(RuntimeError, match="Missing key"):
        efunc.functional_call(bn, {"weight": ember.ones(2)}, ember.ones(3, 2), strict=True)
    lin = ember.nn.Linear(2, 2)
    with pytest.warns(FutureWarning):
        ember.nn.utils.stateless.functional_call(lin, {}, ember.ones(1, 2))


def test_transforms_stay_differentiable_for_the_callers_autograd():
    x = ember.tensor([0.5, -1.0, 2.0], dtype=ember.float64, requires_grad=True)
    g = efunc.grad(lambda t: (t ** 3).sum())(x)             # 3 x^2, connected to x
    assert g.requires_grad
    np.testing.assert_allclose(ember.autograd.grad(g.sum(), x)[0].numpy(), 6 * x.detach().numpy())
    w = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64, requires_grad=True)
    plain = ember.tensor([0.5, -1.0, 2.0], dtype=ember.float64)
    g = efunc.grad(lambda t: (t * w).pow(2).sum())(plain)   # 2 t w^2, through the closed-over w
    np.testing.assert_allclose(ember.autograd.grad(g.sum(), w)[0].numpy(),
                               4 * plain.numpy() * w.detach().numpy())
    # nothing outside requires grad: results and aux come back detached
    g, aux = efunc.grad(lambda t: ((t ** 2).sum(), t.exp()), has_aux=True)(plain)
    out, _ = efunc.vjp(lambda t: t.sin(), plain)
    assert not (g.requires_grad or aux.requires_grad or out.requires_grad)


def test_transform_argument_errors():
    f = lambda a, b: (a * b).sum()  # noqa: E731
    x = ember.ones(3)
    with pytest.raises(RuntimeError, match="argnums must be int or Tuple"):
        efunc.grad(f, argnums=0.5)(x, x)
    with pytest.raises(RuntimeError, match="should be a tuple: \\(output, aux\\)"):
        efunc.grad(lambda a: a.sum(), has_aux=True)(x)
    with pytest.raises(ValueError, match="`chunk_size` should be greater than 0"):
        efunc.jacrev(lambda a: a * 2, chunk_size=0)
    with pytest.raises(ValueError, match="Expected primal to be floating point"):
        efunc.jacfwd(lambda a: a * 2)(ember.arange(3))
    with pytest.raises(RuntimeError, match="self is not batched but the result is"):
        efunc.vmap(lambda a, w: w.add_(a), in_dims=(0, None))(ember.ones(2, 3), ember.zeros(3))


def test_transforms_follow_the_callers_grad_mode_and_refuse_integer_outputs():
    x = ember.tensor([0.5, -1.0], dtype=ember.float64, requires_grad=True)
    with ember.no_grad():
        g = efunc.grad(lambda t: (t ** 3).sum())(x)
    assert not g.requires_grad
    with pytest.raises(RuntimeError, match="All outputs of f must be floating-point or complex"):
        efunc.jacrev(lambda t: t.argmax())(x.detach())


def test_jvp_inside_vmap_is_per_sample_and_autograd_grad_does_not_mix_samples():
    x = ember.tensor([[0.1, 0.2], [0.3, 0.4], [1.0, -1.0]])
    out, tangent = efunc.vmap(lambda s: efunc.jvp(lambda t: t * 3, (s,), (ember.ones_like(s),)))(x)
    np.testing.assert_allclose(tangent.numpy(), np.full((3, 2), 3.0))   # was 9: the samples summed
    w = ember.tensor([0.5, -0.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="autograd.grad inside vmap: an output is batched"):
        efunc.vmap(lambda s: ember.autograd.grad((s * w).sum(), w)[0])(x)


def test_nested_transforms_return_detached_results_at_the_top():
    w = ember.tensor([0.5, -1.0], dtype=ember.float64)
    g = efunc.grad(lambda v: efunc.jacrev(lambda t: (t * v).sin())(w).sum())(w)
    assert not g.requires_grad   # the inner jacrev's own inputs are not the caller's tensors
    # d/dv sum_i v_i cos(w_i v_i) at v = w (w entered by both transforms: one array, two leaves)
    np.testing.assert_allclose(g.numpy(), np.cos(w.numpy() ** 2) - w.numpy() ** 2 *
                               np.sin(w.numpy() ** 2), rtol=1e-12)
