"""A Linear's bias and the relu right after it in one pass over the GEMM's output (NOTE [Bias
and ReLU after the GEMM] in ember/_dynamo/epilogue.py): activations and gradients equal eager's
bit for bit, gradcheck in float64, and the rewrite stays out of the cases it does not cover."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import ember
from ember import nn
from ember._dynamo.epilogue import linear_relu
from ember.ops.nn.linear import Linear
from ember.ops.unary import relu

MARK = "# Linear + Relu"


class _Ctx:
    def save_for_backward(self, *values):
        self.saved = values


def _mlp(d_in=12, hidden=40):
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, 16), nn.ReLU(),
                         nn.Linear(16, 1))


def _step(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x).squeeze(-1), y)
        loss.backward()
        opt.step()
        return loss
    return step


@pytest.mark.parametrize("rows", [1024, 8], ids=["fused", "small_batch_as_eager"])
def test_train_step_equals_eager_bitwise(rows):
    model = _mlp()
    twin = copy.deepcopy(model)
    opt, opt_e = (ember.optim.Adam(m.parameters(), lr=1e-2) for m in (model, twin))
    compiled, eager = ember.compile(_step(model, opt)), _step(twin, opt_e)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = ember.from_numpy(rng.standard_normal((rows, 12)).astype(np.float32))
        y = ember.from_numpy(rng.standard_normal(rows).astype(np.float32))
        assert compiled(x, y).item() == eager(x, y).item()
        for p, q in zip(model.parameters(), twin.parameters(), strict=True):
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    assert compiled.sources[0].count(MARK) == 2  # the call falls back below the size
    assert compiled.stats["recompiles"] == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_relu_equals_the_two_forwards_with_nan_and_signed_zero(dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2048, 9)).astype(dtype)
    w = rng.standard_normal((24, 9)).astype(dtype)
    b = rng.standard_normal(24).astype(dtype)
    x[3, 0] = np.nan
    w[5] = 0.0
    b[5] = -0.0  # column 5 is 0 + -0.0 = 0.0 or -0.0 depending on the product's sign
    b[6] = np.inf
    c1, c2, e1, e2 = _Ctx(), _Ctx(), _Ctx(), _Ctx()
    got = linear_relu(c1, c2, x, w, b)
    want = relu.forward(e2, Linear.forward(e1, x, w, b))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert np.isnan(got[3]).all() and np.isnan(want[3]).all()
    assert c2.saved[0] is got and c1.saved[0] is x and c1.saved[1] is w
    ref = np.maximum(x[4:] @ w.T + b, 0)  # vs NumPy, away from the NaN row
    np.testing.assert_allclose(got[4:], ref, rtol=1e-5, atol=1e-5)


def test_linear_output_read_twice_is_not_rewritten():
    lin = nn.Linear(8, 40)

    def f(x):
        h = lin(x)
        return h.relu() + h

    c = ember.compile(f)
    x = ember.from_numpy(np.random.default_rng(2).standard_normal((1024, 8)).astype(np.float32))
    np.testing.assert_array_equal(c(x).detach().numpy(), f(x).detach().numpy())
    assert MARK not in c.sources[0]


def test_compiled_linear_relu_gradcheck_float64():
    rng = np.random.default_rng(3)
    x = ember.from_numpy(rng.standard_normal((2048, 3)))  # 2048 x 8 float64 output: fused

    def f(w, b):
        return nn.functional.relu(nn.functional.linear(x, w, b)).sum(0)

    w = ember.from_numpy(rng.standard_normal((8, 3))).requires_grad_()
    b = ember.from_numpy(rng.standard_normal(8)).requires_grad_()
    c = ember.compile(f)
    assert ember.autograd.gradcheck(c, (w, b))
    assert MARK in c.sources[0]
    gw, gb = ember.autograd.grad(c(w, b).sum(), (w, b))
    ew, eb = ember.autograd.grad(f(w, b).sum(), (w, b))
    np.testing.assert_array_equal(gw.numpy(), ew.numpy())
    np.testing.assert_array_equal(gb.numpy(), eb.numpy())
