"""Forward-mode AD through dual numbers, and autograd.functional."""
import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
from ember.autograd import gradcheck
from ember.autograd.functional import hessian, hvp, jacobian, jvp, vjp
from ember.autograd.gradcheck import GradcheckError


def _jvp_fw(fn, x, v):
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        out = fn(d)
        return fwAD.unpack_dual(out).tangent


@pytest.mark.parametrize("fn", [
    lambda a: a.sin() * a, lambda a: (a * a).exp(), lambda a: a / (a.abs() + 1),
    lambda a: a.tanh().sum(), lambda a: a.reshape(2, 3) @ a.reshape(3, 2),
    lambda a: a.reshape(2, 3).mean(1), lambda a: a.amax(), lambda a: a.sigmoid().log(),
    lambda a: a.reshape(2, 3).t().cumsum(0), lambda a: ember.logsumexp(a.reshape(3, 2), 1),
], ids=["sin_mul", "exp", "div", "tanh_sum", "matmul", "mean", "amax", "logsigmoid",
        "transpose_cumsum", "logsumexp"])
def test_forward_ad_matches_numerical_jacobian(fn, rng):
    x = ember.tensor(rng.standard_normal(6), requires_grad=True)
    assert gradcheck(fn, (x,), check_forward_ad=True)


def test_forward_ad_tangent_values():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64)
    t = _jvp_fw(lambda d: d ** 2 + d.exp(), x, ember.tensor([1.0, 0.0], dtype=ember.float64))
    np.testing.assert_allclose(t.numpy(), [2 + np.e, 0.0])


def test_dual_level_exit_drops_tangents():
    x = ember.ones(2)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.ones(2))
        y = d * 2
    assert fwAD.unpack_dual(y).tangent is None


def test_make_dual_outside_level_raises():
    with pytest.raises(RuntimeError, match="dual_level"):
        fwAD.make_dual(ember.ones(2), ember.ones(2))


def test_make_dual_shape_mismatch_raises():
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(ember.ones(2), ember.ones(3))



def test_make_dual_keeps_a_same_layout_tangent_and_copies_others():
    # torch keeps the tangent object (and its dtype) when its strides are the primal's; a
    # tangent laid out differently is copied into the primal's layout and dtype
    x = ember.randn(3, 4, dtype=ember.float64)
    t = ember.randn(3, 4)
    tt = ember.randn(4, 3).T
    with fwAD.dual_level():
        kept = fwAD.unpack_dual(fwAD.make_dual(x, t)).tangent
        copied = fwAD.unpack_dual(fwAD.make_dual(x, tt)).tangent
        assert kept is t and kept.dtype == ember.float32
        assert copied is not tt and copied.stride() == (4, 1)
        assert copied.dtype == ember.float64
        np.testing.assert_allclose(copied.numpy(), tt.numpy(), rtol=1e-7)
        y = fwAD.make_dual(x, t) * 3
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), 3 * t.numpy(),
                                   rtol=1e-6)


@pytest.mark.parity
def test_make_dual_tangent_identity_matches_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    import torch.autograd.forward_ad as tfw

    def identities(mod, fw):
        p, t = mod.zeros(3, 3, dtype=mod.float64), mod.ones(3, 3)
        with fw.dual_level():
            return (fw.unpack_dual(fw.make_dual(p, t)).tangent is t,
                    fw.unpack_dual(fw.make_dual(p, t.T)).tangent is t,
                    fw.unpack_dual(fw.make_dual(p.T, t)).tangent is t,
                    fw.unpack_dual(fw.make_dual(p, t[:, ::2].repeat(1, 2)[:, :3])).tangent
                    is t)
    assert identities(ember, fwAD) == identities(torch, tfw)

@pytest.mark.parity
def test_functional_api_matches_torch(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    from torch.autograd import functional as TF
    a = rng.standard_normal(3)
    v = rng.standard_normal(3)

    def f(lib):
        return lambda x: (x ** 3).sum() + (x[0] * x[1]).sin()

    def g(lib):
        return lambda x: x.tanh() * x[2]

    ea, ev = ember.tensor(a), ember.tensor(v)
    ta, tv = torch.tensor(a), torch.tensor(v)
    np.testing.assert_allclose(hessian(f(ember), ea).numpy(), TF.hessian(f(torch), ta).numpy(),
                               rtol=1e-10)
    np.testing.assert_allclose(jacobian(g(ember), ea).numpy(), TF.jacobian(g(torch), ta).numpy(),
                               rtol=1e-10)
    np.testing.assert_allclose(vjp(g(ember), ea, ev)[1].numpy(),
                               TF.vjp(g(torch), ta, tv)[1].numpy(), rtol=1e-10)
    np.testing.assert_allclose(jvp(g(ember), ea, ev)[1].numpy(),
                               TF.jvp(g(torch), ta, tv)[1].numpy(), rtol=1e-10)
    np.testing.assert_allclose(hvp(f(ember), ea, ev)[1].numpy(),
                               TF.hvp(f(torch), ta, tv)[1].numpy(), rtol=1e-10)


class _ExpJvpOnly(ember.autograd.Function):
    """A Function with a jvp() and no backward(), as forward-mode-only Functions are written."""
    scale = 1.0

    @staticmethod
    def forward(ctx, a):
        ctx.result = ember.exp(a)
        return ctx.result

    @staticmethod
    def jvp(ctx, g):
        return g * _ExpJvpOnly.scale * ctx.result


def test_gradcheck_forward_only_function(rng):
    x = ember.tensor(rng.standard_normal(4), dtype=ember.float64, requires_grad=True)
    kw = dict(check_forward_ad=True, check_backward_ad=False, check_undefined_grad=False,
              check_batched_grad=False)
    assert gradcheck(_ExpJvpOnly.apply, (x,), **kw)
    _ExpJvpOnly.scale = 2.0   # a wrong jvp must fail, or return False when asked to
    try:
        with pytest.raises(GradcheckError, match="forward AD"):
            gradcheck(_ExpJvpOnly.apply, (x,), **kw)
        assert gradcheck(_ExpJvpOnly.apply, (x,), raise_exception=False, **kw) is False
    finally:
        _ExpJvpOnly.scale = 1.0
    # the backward check still runs by default, and a Function without backward fails it
    with pytest.raises(NotImplementedError, match="backward"):
        gradcheck(_ExpJvpOnly.apply, (x,), check_forward_ad=True)


def test_gradcheck_needs_one_mode():
    x = ember.ones(2, dtype=ember.float64, requires_grad=True)
    with pytest.raises(AssertionError, match="at least one of check_forward_ad"):
        gradcheck(ember.sin, (x,), check_forward_ad=False, check_backward_ad=False)


def test_forward_ad_through_in_place_ops_and_comparisons():
    x0 = np.array([0.3, -0.5, 1.2])
    t0 = np.array([1.0, 2.0, -1.0])
    with fwAD.dual_level():
        x = fwAD.make_dual(ember.tensor(x0), ember.tensor(t0))
        y = (x * 1).mul_(2).exp_()               # d exp(2x) = 2 exp(2x) dx
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(),
                                   2 * np.exp(2 * x0) * t0)
        h = x * 1
        h[1:].mul_(3)                            # a view written in place: the base's tangent
        np.testing.assert_allclose(fwAD.unpack_dual(h).tangent.numpy(), t0 * [1, 3, 3])
        w = ember.where(x > 0, x, ember.zeros(3, dtype=ember.float64))  # x > 0 has no tangent
        np.testing.assert_allclose(fwAD.unpack_dual(w).tangent.numpy(), t0 * (x0 > 0))


def test_functional_strict_and_v_errors():
    x, w = ember.ones(2, 3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                                           "independent of input 1"):
        jacobian(lambda a, b: a * 2, (x, w), strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        vjp(lambda a, b: a.sum(), (x, w), strict=True)
    with pytest.raises(RuntimeError, match="v can only be None if the user-provided function "
                                           "returns a single Tensor with a single element"):
        vjp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match="v can only be None if the input"):
        jvp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match="should contain a single element"):
        hessian(lambda a: a * 2, x)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        jacobian(lambda a: a * 2, x, strategy="forward-mode")
    # a linear function: its Hessian is zero, not an error
    np.testing.assert_array_equal(hessian(lambda a: (a * 2).sum(), x).numpy(),
                                  np.zeros((2, 3, 2, 3)))
    assert hvp(lambda a: (a * a).sum(), w, w)[1].tolist() == [2.0, 2.0, 2.0]


def test_function_jvp_reads_what_setup_context_saved_for_forward():
    class Square(ember.autograd.Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(inputs[0])
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors   # the backward's: the output
            return g * 2 * out.sqrt()

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors     # the forward's: the input
            return 2 * x * t

    x0 = ember.tensor([1.0, 3.0], dtype=ember.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x0, ember.tensor([1.0, -1.0], dtype=ember.float64))
        assert fwAD.unpack_dual(Square.apply(d)).tangent.tolist() == [2.0, -6.0]
    x = x0.clone().requires_grad_()
    Square.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 6.0]


def test_setitem_carries_tangents():
    with fwAD.dual_level():
        d = fwAD.make_dual(ember.tensor([1.0, -2.0, 3.0]), ember.tensor([10.0, 20.0, 30.0]))
        t = ember.zeros(2, 3)
        t[1] = d                     # a dual written into a plain tensor gives it a tangent
        t[0, d > 0] = d[d > 0] * 2
        np.testing.assert_array_equal(fwAD.unpack_dual(t).tangent.numpy(),
                                      [[20.0, 0.0, 60.0], [10.0, 20.0, 30.0]])
