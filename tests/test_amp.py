"""Mixed precision: ember.autocast (CPU op lists) and ember.amp.GradScaler, vs PyTorch."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import ember
from ember.amp import GradScaler, autocast
from ember.amp._state import maybe_autocast
from ember.optim import SGD


def _bf16_close(ours, ref):
    np.testing.assert_allclose(ours.float().detach().numpy(), ref.float().detach().numpy(),
                               rtol=2 ** -7, atol=1e-2)


# ------------------------------------------------------------------------------- autocast
def test_autocast_matmul_lowers_to_bfloat16_and_restores(rng):
    a = ember.tensor(rng.standard_normal((3, 4)), dtype=ember.float32)
    b = ember.tensor(rng.standard_normal((4, 5)), dtype=ember.float32)
    assert not ember.is_autocast_enabled("cpu")
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled("cpu")
        assert ember.get_autocast_dtype("cpu") is ember.bfloat16
        assert (a @ b).dtype is ember.bfloat16
        assert ember.mm(a, b).dtype is ember.bfloat16
        assert ember.bmm(a[None], b[None]).dtype is ember.bfloat16
        assert (a + 1).dtype is ember.float32  # ops outside the lists keep their dtype
    assert not ember.is_autocast_enabled("cpu")
    assert (a @ b).dtype is ember.float32


def test_autocast_no_argument_query_is_cuda_like_torch():
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled() is False  # the no-argument form asks about CUDA
        assert ember.is_autocast_enabled("cpu") is True


def test_autocast_float64_and_integer_inputs_untouched():
    a64 = ember.ones(2, 2, dtype=ember.float64)
    ai = ember.ones(2, 2, dtype=ember.int64)
    with ember.autocast("cpu"):
        assert (a64 @ a64).dtype is ember.float64
        assert (ai @ ai).dtype is ember.int64


def test_autocast_mixed_float_inputs_both_cast():
    a = ember.ones(2, 3)
    b = ember.ones(3, 2, dtype=ember.bfloat16)
    with ember.autocast("cpu"):
        assert (a @ b).dtype is ember.bfloat16
        assert (a.half() @ b.half()).dtype is ember.bfloat16  # float16 is eligible too


def test_autocast_float16_and_nesting():
    a = ember.ones(2, 2)
    with ember.autocast("cpu"):
        with ember.autocast("cpu", dtype=ember.float16):
            assert (a @ a).dtype is ember.float16
            assert ember.get_autocast_dtype("cpu") is ember.float16
        assert (a @ a).dtype is ember.bfloat16
        with ember.autocast("cpu", enabled=False):
            assert not ember.is_autocast_enabled("cpu")
            assert (a @ a).dtype is ember.float32
        assert ember.is_autocast_enabled("cpu")
    assert not ember.is_autocast_enabled("cpu")


def test_autocast_restores_state_after_exception():
    with pytest.raises(ValueError):
        with ember.autocast("cpu"):
            raise ValueError("boom")
    assert not ember.is_autocast_enabled("cpu")


def test_autocast_as_decorator():
    @ember.autocast("cpu")
    def f(x):
        assert ember.is_autocast_enabled("cpu")
        return x @ x

    x = ember.ones(2, 2)
    assert f(x).dtype is ember.bfloat16
    assert not ember.is_autocast_enabled("cpu")
    assert ember.amp.autocast is autocast is ember.autocast


def test_autocast_unsupported_dtype_and_device_disable_with_warning():
    a = ember.ones(2, 2)
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        ctx = ember.autocast("cpu", dtype=ember.float32)
    with ctx:
        assert not ember.is_autocast_enabled("cpu")
        assert (a @ a).dtype is ember.float32
    with pytest.warns(UserWarning, match="CUDA is not available"):
        ctx = ember.autocast("cuda")
    with ctx:
        assert (a @ a).dtype is ember.float32
        assert not ember.is_autocast_enabled("cuda")


def test_autocast_bad_arguments():
    with pytest.raises(ValueError, match="device_type"):
        ember.autocast(5)
    with pytest.raises(RuntimeError, match="foo"):
        ember.autocast("foo")
    with pytest.raises(TypeError, match="enabled"):
        ember.autocast("cpu", enabled=1)


def test_autocast_fp32_list_upcasts_and_other_ops_pass_through():
    x = ember.ones(2, 2, dtype=ember.bfloat16)
    with ember.autocast("cpu"):
        (y,) = maybe_autocast("mse_loss", x)
        assert y.dtype is ember.float32
        (z,) = maybe_autocast("softmax", x)  # not in PyTorch's CPU lists: unchanged
        assert z is x
        w, none = maybe_autocast("linear", ember.ones(2, 2), None)
        assert w.dtype is ember.bfloat16 and none is None
    (u,) = maybe_autocast("mse_loss", x)
    assert u is x  # outside autocast nothing is cast


_LOW = ["bfloat16", "float16"]


@pytest.mark.parametrize("dtype", _LOW)
def test_autocast_gradients_flow_back_in_parameter_dtype(rng, dtype):
    w = ember.tensor(rng.standard_normal((4, 3)), dtype=ember.float32, requires_grad=True)
    x = ember.tensor(rng.standard_normal((2, 4)), dtype=ember.float32)
    with ember.autocast("cpu", dtype=getattr(ember, dtype)):
        y = x @ w
    assert y.dtype is getattr(ember, dtype)
    y.float().sum().backward()
    assert w.grad.dtype is ember.float32
    expected = x.numpy().T @ np.ones((2, 3), np.float32)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=2 ** -7, atol=1e-2)


@pytest.mark.parametrize("dtype", _LOW)
def test_autocast_cache_reuses_parameter_cast_within_region(dtype):
    w = ember.ones(3, 3, requires_grad=True)
    x = ember.ones(2, 3)
    with ember.autocast("cpu", dtype=getattr(ember, dtype)):
        (c1,) = maybe_autocast("matmul", w)
        (c2,) = maybe_autocast("matmul", w)
        assert c1 is c2  # one cast of the parameter per region
        (x1,) = maybe_autocast("matmul", x)
        (x2,) = maybe_autocast("matmul", x)
        assert x1 is not x2  # activations are not cached
        (x @ w).float().sum().backward()
        (x @ w).float().sum().backward()
    with ember.autocast("cpu"):
        (c3,) = maybe_autocast("matmul", w)
        assert c3 is not c1  # the cache empties when the outermost region exits
    np.testing.assert_allclose(w.grad.numpy(), np.full((3, 3), 4.0))
    with ember.autocast("cpu", cache_enabled=False):
        (d1,) = maybe_autocast("matmul", w)
        (d2,) = maybe_autocast("matmul", w)
        assert d1 is not d2


def test_autocast_cache_invalidated_by_inplace_update():
    w = ember.ones(2, 2, requires_grad=True)
    with ember.autocast("cpu"):
        (c1,) = maybe_autocast("matmul", w)
        with ember.no_grad():
            w.mul_(3.0)
        (c2,) = maybe_autocast("matmul", w)
        assert c2 is not c1
        np.testing.assert_allclose(c2.float().detach().numpy(), np.full((2, 2), 3.0))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_custom_fwd_casts_inputs_and_disables_autocast(dtype):
    class Square(ember.autograd.Function):
        @staticmethod
        @ember.amp.custom_fwd(device_type="cpu", cast_inputs=ember.float32)
        def forward(ctx, x):
            assert not ember.is_autocast_enabled("cpu")
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @ember.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad  # float32: custom_bwd returns it in x's own dtype

    x = ember.ones(3, dtype=getattr(ember, dtype), requires_grad=True)
    with ember.autocast("cpu", dtype=getattr(ember, dtype)):
        y = Square.apply(x)
    assert y.dtype is ember.float32
    y.sum().backward()
    assert x.grad.dtype is getattr(ember, dtype)
    np.testing.assert_allclose(x.grad.float().numpy(), [2.0, 2.0, 2.0])


def _torch_and_ember_linear(rng, dtype, requires_grad):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    a = rng.standard_normal((5, 8)).astype(np.float32)
    w = rng.standard_normal((6, 8)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    ta, tw, tb = (torch.tensor(v, requires_grad=requires_grad) for v in (a, w, b))
    ea, ew, eb = (ember.tensor(v, requires_grad=requires_grad) for v in (a, w, b))
    with torch.autocast("cpu", dtype=getattr(torch, dtype)):
        ref = (ta @ tw.T, torch.nn.functional.linear(ta, tw, tb))
    with ember.autocast("cpu", dtype=getattr(ember, dtype)):
        mm = ea @ ew.T
        try:
            from ember.nn import functional as F
            lin = F.linear(ea, ew, eb)
        except ImportError:  # nn.functional not importable yet: linear's autocast hook by hand
            x, wc, bc = maybe_autocast("linear", ea, ew, eb)
            lin = x @ wc.T + bc
    return (tw, ew), ref, (mm, lin)



@pytest.mark.parity
@pytest.mark.parametrize("op, dtype", [("matmul", "bfloat16"), ("matmul", "float16"),
                                       ("linear", "bfloat16"),
                                       ("linear", "float16")])
def test_autocast_matmul_linear_match_torch(rng, op, dtype):
    _, ref, ours = _torch_and_ember_linear(rng, dtype, requires_grad=False)
    o, r = (ours[0], ref[0]) if op == "matmul" else (ours[1], ref[1])
    assert str(o.dtype).split(".")[-1] == str(r.dtype).split(".")[-1] == dtype
    _bf16_close(o, r)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", _LOW)
def test_autocast_matmul_grad_matches_torch(rng, dtype):
    (tw, ew), ref, ours = _torch_and_ember_linear(rng, dtype, requires_grad=True)
    ref[0].float().sum().backward()
    ours[0].float().sum().backward()
    assert ew.grad.dtype is ember.float32
    np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy(), rtol=2 ** -7, atol=5e-2)


# ----------------------------------------------------------------------------- GradScaler
class _Model:
    """w -> loss = sum(w * c): d loss / d w = c, so the gradients are known exactly."""

    def __init__(self, n=3):
        self.w = ember.ones(n, requires_grad=True)
        self.opt = SGD([self.w], lr=0.1)

    def backward(self, scaler, c=2.0):
        self.opt.zero_grad()
        scaler.scale((self.w * c).sum()).backward()


def test_gradscaler_scale_and_unscale():
    m = _Model()
    s = GradScaler(init_scale=8.0)
    assert s.get_scale() == 8.0
    loss = s.scale((m.w * 2).sum())
    assert loss.item() == 48.0
    loss.backward()
    np.testing.assert_allclose(m.w.grad.numpy(), [16.0] * 3)
    s.unscale_(m.opt)
    np.testing.assert_allclose(m.w.grad.numpy(), [2.0] * 3)
    with pytest.raises(RuntimeError, match="already been called"):
        s.unscale_(m.opt)
    s.step(m.opt)  # uses the already unscaled gradients
    np.testing.assert_allclose(m.w.detach().numpy(), [0.8] * 3, rtol=1e-6)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        s.step(m.opt)
    s.update()


def test_gradscaler_skips_step_on_inf_and_backs_off():
    m = _Model()
    s = GradScaler(init_scale=4.0)
    m.backward(s)
    m.w.grad._data[1] = np.inf  # an overflowing gradient
    before = m.w.detach().numpy().copy()
    assert s.step(m.opt) is None
    s.update()
    np.testing.assert_array_equal(m.w.detach().numpy(), before)  # the step was skipped
    assert s.get_scale() == 2.0
    m.backward(s)
    m.w.grad._data[0] = np.nan  # NaN counts too
    s.step(m.opt)
    s.update()
    np.testing.assert_array_equal(m.w.detach().numpy(), before)
    assert s.get_scale() == 1.0


def test_gradscaler_grows_after_growth_interval():
    m = _Model()
    s = GradScaler(init_scale=4.0, growth_factor=3.0, growth_interval=3)
    scales = []
    for _ in range(7):
        m.backward(s)
        s.step(m.opt)
        s.update()
        scales.append(s.get_scale())
    assert scales == [4.0, 4.0, 12.0, 12.0, 12.0, 36.0, 36.0]
    assert s._get_growth_tracker() == 1


def test_gradscaler_scale_containers_and_dtypes():
    s = GradScaler(init_scale=2.0)
    out = s.scale([ember.ones(1), (ember.ones(1),)])
    assert isinstance(out, list) and isinstance(out[1], tuple)
    np.testing.assert_allclose(out[1][0].numpy(), [2.0])
    assert s.scale(ember.ones(1, dtype=ember.bfloat16)).dtype is ember.bfloat16
    assert s.scale(ember.ones(1, dtype=ember.float64)).dtype is ember.float64
    with pytest.raises(ValueError, match="Tensor or an iterable"):
        s.scale(3.0)


def test_gradscaler_disabled_is_exact_pass_through():
    m = _Model()
    s = GradScaler(enabled=False)
    loss = (m.w * 2).sum()
    assert s.scale(loss) is loss
    loss.backward()
    s.unscale_(m.opt)
    np.testing.assert_allclose(m.w.grad.numpy(), [2.0] * 3)
    s.step(m.opt)
    s.update()
    np.testing.assert_allclose(m.w.detach().numpy(), [0.8] * 3, rtol=1e-6)
    assert s.get_scale() == 1.0 and s.state_dict() == {} and not s.is_enabled()


def test_gradscaler_errors():
    m = _Model()
    s = GradScaler()
    with pytest.raises(AssertionError, match="_scale is None"):
        s.step(m.opt)
    m.backward(s)
    with pytest.raises(RuntimeError, match="Closure"):
        s.step(m.opt, closure=lambda: 0.0)
    with pytest.raises(AssertionError, match="No inf checks"):
        s.update()
    with pytest.raises(AssertionError, match="growth factor"):
        GradScaler(growth_factor=0.5)
    with pytest.raises(AssertionError, match="backoff factor"):
        GradScaler(backoff_factor=1.5)
    half = ember.ones(2, dtype=ember.float16, requires_grad=True)
    opt = SGD([half], lr=0.1)
    s = GradScaler(init_scale=4.0)
    s.scale((half.float() * 2).sum()).backward()
    with pytest.raises(ValueError, match="FP16 gradients"):
        s.unscale_(opt)


def test_gradscaler_state_dict_roundtrip_and_pickle():
    m = _Model()
    s = GradScaler(init_scale=16.0, growth_interval=5)
    m.backward(s)
    s.step(m.opt)
    s.update()
    sd = s.state_dict()
    assert sd == {"scale": 16.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                  "growth_interval": 5, "_growth_tracker": 1}
    t = GradScaler()
    t.load_state_dict(sd)
    assert t.state_dict() == sd
    with pytest.raises(RuntimeError, match="state dict is empty"):
        t.load_state_dict({})
    u = pickle.loads(pickle.dumps(s))
    assert u.state_dict() == sd
    s.update(new_scale=5.0)
    assert s.get_scale() == 5.0
    s.update(new_scale=ember.tensor(3.0))
    assert s.get_scale() == 3.0


def test_gradscaler_device_cuda_disables_with_warning():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        s = GradScaler("cuda")
    assert not s.is_enabled()


@pytest.mark.parity
def test_gradscaler_matches_torch_sequence():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    kw = dict(init_scale=8.0, growth_factor=2.0, backoff_factor=0.25, growth_interval=2)
    ts = torch.amp.GradScaler("cpu", **kw)
    es = GradScaler("cpu", **kw)
    tw = torch.nn.Parameter(torch.ones(3))
    topt = torch.optim.SGD([tw], lr=0.1)
    m = _Model()
    bad_steps = {1, 4, 5}
    for i in range(8):
        topt.zero_grad()
        ts.scale((tw * 2).sum()).backward()
        m.backward(es)
        if i in bad_steps:
            tw.grad[2] = float("inf")
            m.w.grad._data[2] = np.inf
        ts.step(topt)
        es.step(m.opt)
        ts.update()
        es.update()
        assert es.get_scale() == ts.get_scale()
        assert es.state_dict() == ts.state_dict()
        np.testing.assert_allclose(m.w.detach().numpy(), tw.detach().numpy(), atol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("loss", ["cross_entropy", "mse_loss", "l1_loss",
                                  "binary_cross_entropy_with_logits"])
def test_losses_run_in_float32_under_autocast(loss, rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    import ember.nn.functional as F
    x = rng.standard_normal((4, 3)).astype(np.float32)
    if loss == "cross_entropy":
        t_np = np.array([0, 1, 2, 0])
    else:
        t_np = rng.random((4, 3)).astype(np.float32)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        ours = getattr(F, loss)(ember.tensor(x).bfloat16(), ember.tensor(t_np) if loss ==
                                "cross_entropy" else ember.tensor(t_np).bfloat16())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ref = getattr(torch.nn.functional, loss)(
            torch.tensor(x).bfloat16(),
            torch.tensor(t_np) if loss == "cross_entropy" else torch.tensor(t_np).bfloat16())
    assert str(ours.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1] == "float32"
    np.testing.assert_allclose(ours.item(), ref.item(), rtol=1e-5)


# the fp32 losses upcast their tensors given by keyword too (they bypassed the cast before)
@pytest.mark.parametrize("form", ["positional", "keyword"])
def test_fp32_losses_upcast_keyword_tensors_like_torch(form):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, t = (rng.standard_normal((4, 3)).astype(np.float32) for _ in range(2))
    y = np.array([0, 1, 2, 0])
    got = []
    for lib in (torch, ember):
        A, T = (lib.tensor(v).to(lib.bfloat16) for v in (a, t))
        Y = lib.tensor(y)
        F = lib.nn.functional
        with lib.autocast("cpu", dtype=lib.bfloat16):
            if form == "keyword":
                r = [F.mse_loss(input=A, target=T), F.cross_entropy(input=A, target=Y),
                     F.binary_cross_entropy_with_logits(input=A, target=T.sigmoid())]
            else:
                r = [F.mse_loss(A, T), F.cross_entropy(A, Y),
                     F.binary_cross_entropy_with_logits(A, T.sigmoid())]
        got.append([(str(v.dtype).split(".")[-1], float(v)) for v in r])
    assert [d for d, _ in got[1]] == [d for d, _ in got[0]] == ["float32"] * 3
    np.testing.assert_allclose([v for _, v in got[1]], [v for _, v in got[0]], rtol=2e-2)
