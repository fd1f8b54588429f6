"""relu and its piecewise siblings at -inf, -0.0, 0.0, +inf and NaN, against torch.

torch's rules (torch 2.13): relu's gradient is zeroed where the output is <= 0 and passes
elsewhere (+inf and NaN included); hardtanh/relu6 pass it strictly inside their bounds (0 at
NaN); threshold zeroes it where x <= threshold (NaN passes, the value stays NaN); the shrinks
keep a NaN value and give it gradient 0; prelu's slope applies where not x > 0. Each rule exists
in eager (numba kernel and NumPy fallback), in the compiled replay and as the ember-op
derivative used by double backward; all are compared here.

Inputs have 64 elements: torch's scalar loop, which handles the tail of a tensor that does not
fill a SIMD vector, treats NaN differently from its vector loop for hardtanh, the shrinks, elu
and hardswish (NOTE [Gradients at NaN] in ember/ops/_kernels/pointwise.py); ember follows the
vector loop, which computes all but those last few elements.
"""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.ops._kernels import pointwise, split

pytestmark = pytest.mark.parity

SPECIAL = [-np.inf, -7.0, -3.0, -1.0, -0.5, -1e-30, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0, 1e30,
           np.inf, np.nan]
X = np.tile(SPECIAL, 4)  # 64 elements: whole SIMD vectors in torch (see the docstring)
DTYPES = ["float32", "float64"]


def _acts(lib):
    """name -> f(x) in library ``lib`` (ember or torch)."""
    F = lib.nn.functional
    return {
        "relu": lib.relu,
        "F.relu": F.relu,
        "relu_": lambda x: x.clone().relu_(),
        "relu6": F.relu6,
        "relu6_inplace": lambda x: F.relu6(x.clone(), inplace=True),
        "hardtanh": F.hardtanh,
        "hardtanh_bounds": lambda x: F.hardtanh(x, -0.5, 6.0),
        "hardtanh_inf_max": lambda x: F.hardtanh(x, 0.0, float("inf")),
        "hardtanh_": lambda x: F.hardtanh_(x.clone()),
        "leaky_relu": lambda x: F.leaky_relu(x, 0.1),
        "leaky_relu_": lambda x: F.leaky_relu(x.clone(), 0.1, inplace=True),
        "rrelu_eval": lambda x: F.rrelu(x, training=False),
        "elu": F.elu,
        "elu_": lambda x: F.elu(x.clone(), inplace=True),
        "selu": F.selu,
        "celu": lambda x: F.celu(x, 2.0),
        "threshold": lambda x: F.threshold(x, 0.5, 2.0),
        "threshold_": lambda x: F.threshold(x.clone(), -1.0, -3.0, inplace=True),
        "hardshrink": F.hardshrink,
        "softshrink": lambda x: F.softshrink(x, 1.0),
        "hardsigmoid": F.hardsigmoid,
        "hardswish": F.hardswish,
        "prelu": lambda x: F.prelu(x, lib.tensor([0.25], dtype=x.dtype)),
        "clamp": lambda x: x.clamp(0.0, 6.0),
        "clamp_min": lambda x: x.clamp(min=0.0),
        "clamp_max": lambda x: x.clamp(max=0.0),
        "clamp_min_": lambda x: x.clone().clamp_min_(-1.0),
    }


NAMES = list(_acts(ember))


def _values_and_grads(lib, name, dtype, x_np, create_graph):
    x = lib.tensor(x_np, dtype=getattr(lib, dtype), requires_grad=True)
    y = _acts(lib)[name](x)
    v = lib.tensor(np.linspace(-2.0, 3.0, x_np.size).reshape(x_np.shape),
                   dtype=getattr(lib, dtype), requires_grad=True)
    (gx,) = lib.autograd.grad(y, x, v, create_graph=create_graph)
    out = [y.detach().numpy(), gx.detach().numpy()]
    if create_graph:  # double backward: the derivative of gx with respect to the incoming v
        (gv,) = lib.autograd.grad(gx.sum(), v, allow_unused=True)
        out.append(None if gv is None else gv.numpy())
    return out


def _assert_same(got, want, what, signed_zero):
    # float32: torch's in-place elu takes its gradient from the output (result + alpha), which
    # loses ~1e-5 relative near x = -7; ember's exp(x) is the more accurate one. float64:
    # torch's hardsigmoid gradient is 1/6 rounded to float32 (3e-8 relative); ember's is 1/6
    rtol = 3e-5 if got.dtype == np.float32 else 1e-7
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True, err_msg=what)
    if signed_zero:  # values only: the sign of a zero gradient is not specified anywhere
        zero = want == 0
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]),
                                      err_msg=f"{what}: sign of zero")


@pytest.mark.parametrize("create_graph", [False, True], ids=["backward", "create_graph"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_activation_matches_torch_at_special_values(name, dtype, create_graph):
    torch = pytest.importorskip("torch")
    got = _values_and_grads(ember, name, dtype, X, create_graph)
    try:
        want = _values_and_grads(torch, name, dtype, X, create_graph)
    except RuntimeError as e:  # torch has no double backward for hardsigmoid
        assert "not implemented" in str(e) and name == "hardsigmoid"
        want = _values_and_grads(torch, name, dtype, X, False)
        got = got[:2]
    if name == "prelu" and create_graph:
        # torch's derivative of prelu's backward uses the slope only where x < 0 (its first
        # derivative, where not x > 0): at x = +-0.0 its grad of grad is 1 where ember's is the
        # slope, consistent with the first derivative
        zero = X == 0
        got[2][zero], want[2][zero] = 1.0, 1.0
    parts = ("value", "grad", "grad of grad")[:len(want)]
    for part, g, w in zip(parts, got, want, strict=True):
        _assert_same(g, w, f"{name} {dtype} {part}", signed_zero=part == "value")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["relu", "relu6", "hardtanh_bounds", "threshold",
                                  "hardshrink", "softshrink"])
def test_masked_gradient_is_a_select_not_a_product(name, dtype):
    # torch selects: an inf or NaN incoming gradient where the mask is off gives 0, not NaN
    torch = pytest.importorskip("torch")
    x = X
    g = np.where(np.arange(x.size) % 2 == 0, np.inf, np.nan)
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        _acts(lib)[name](xt).backward(lib.tensor(g, dtype=getattr(lib, dtype)))
        res.append(xt.grad.numpy())
    np.testing.assert_array_equal(res[0], res[1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_prelu_weight_gradient_matches_torch_at_special_values(dtype):
    torch = pytest.importorskip("torch")
    x = X.reshape(4, 4, 4)
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        w = lib.tensor([0.25, -0.5, 2.0, 0.0], dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.nn.functional.prelu(xt, w)
        y.backward(lib.ones_like(y))
        res.append((y.detach().numpy(), xt.grad.numpy(), w.grad.numpy()))
    for got, want in zip(*res, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_masked_grad_kernel_paths_agree(dtype):
    """The small kernel, the split kernel (large), the strided copy and the NumPy fallback give
    one answer at every special value, for relu (hi=None) and hardtanh bounds."""
    reps = split._MIN_WORK // len(SPECIAL) + 2
    x = np.tile(np.array(SPECIAL), reps).astype(dtype)
    g = np.tile(np.linspace(1.0, 2.0, len(SPECIAL)).astype(dtype), reps)
    for lo, hi in ((0.0, None), (0.0, 6.0), (-1.0, np.inf)):
        inside = ~(x <= lo) if hi is None else (x > lo) & (x < hi)
        want = np.where(inside, g, 0)
        small = pointwise.masked_grad(g[:len(SPECIAL)], x[:len(SPECIAL)], lo, hi)
        np.testing.assert_array_equal(small, want[:len(SPECIAL)])
        np.testing.assert_array_equal(pointwise.masked_grad(g, x, lo, hi), want)
        wide = np.stack([g, g]).T  # a strided gradient of x's shape: copied, then the kernel
        np.testing.assert_array_equal(pointwise.masked_grad(wide[:, 1], x, lo, hi), want)
        with np.errstate(over="ignore"):
            x16 = x[:len(SPECIAL)].astype(np.float16)  # 1e30 becomes inf
        inside = ~(x16 <= lo) if hi is None else (x16 > lo) & (x16 < hi)
        as_f16 = pointwise.masked_grad(g[:len(SPECIAL)].astype(np.float16), x16, lo, hi)
        np.testing.assert_array_equal(as_f16, np.where(inside, g[:len(SPECIAL)], 0)
                                      .astype(np.float16))  # the NumPy fallback


def _compiled_case(lib, dtype):
    x = lib.tensor(X.reshape(4, 16), dtype=getattr(lib, dtype), requires_grad=True)
    a = lib.tensor(np.linspace(-1, 1, 8).reshape(4, 2), dtype=getattr(lib, dtype),
                   requires_grad=True)
    w = lib.tensor(np.linspace(0.5, 2.0, 18), dtype=getattr(lib, dtype))

    def f(x, a):
        # relu's output feeds a cat: its gradient arrives as a column slice (the replay's
        # strided relu kernel), hardtanh's as a dense one
        h = lib.cat([a, lib.relu(x)], dim=1)
        return (h * w).sum() + lib.nn.functional.hardtanh(x, -1.0, 1.0).sum()

    return f, x, a


@pytest.mark.parametrize("dtype", DTYPES)
def test_compiled_relu_and_hardtanh_gradients_match_torch(dtype, monkeypatch):
    torch = pytest.importorskip("torch")
    from ember._dynamo import raw_backward
    strided = []
    kernel = raw_backward._k_relu_grad_rows
    monkeypatch.setattr(raw_backward, "_k_relu_grad_rows",
                        lambda *a: strided.append(1) or kernel(*a))
    f_t, x_t, a_t = _compiled_case(torch, dtype)
    f_t(x_t, a_t).backward()
    f_e, x_e, a_e = _compiled_case(ember, dtype)
    compiled = ember.compile(f_e)
    for _ in range(3):  # the capture run, then replays
        x_e.grad = a_e.grad = None
        compiled(x_e, a_e).backward()
        np.testing.assert_array_equal(x_e.grad.numpy(), x_t.grad.numpy())
        np.testing.assert_array_equal(a_e.grad.numpy(), a_t.grad.numpy())
    assert strided  # the replay read relu's gradient as a column slice
