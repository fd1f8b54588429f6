"""add/sub's `alpha`: a 0-dim tensor is read as its number (optimizers written against torch
pass tensor betas and learning rates: torch_optimizer's Adafactor), other tensors are refused,
and the number must fit the result dtype as torch checks it."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

_FORMS = {
    "add": lambda a, b, alpha: ember.add(a, b, alpha=alpha),
    "sub": lambda a, b, alpha: ember.sub(a, b, alpha=alpha),
    "Tensor.add": lambda a, b, alpha: a.add(b, alpha=alpha),
    "Tensor.sub": lambda a, b, alpha: a.sub(b, alpha=alpha),
    "add_": lambda a, b, alpha: a.clone().add_(b, alpha=alpha),
    "sub_": lambda a, b, alpha: a.clone().sub_(b, alpha=alpha),
}
_SIGN = {"add": 1, "sub": -1}


@pytest.mark.parametrize("form", sorted(_FORMS))
@pytest.mark.parametrize("alpha", [0.25, -3.0, 2])
def test_zero_dim_tensor_alpha_is_its_number(form, alpha):
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    a, b = ember.tensor(a_np), ember.tensor(b_np)
    out = _FORMS[form](a, b, ember.tensor(alpha))
    sign = _SIGN[form.split(".")[-1].rstrip("_")]
    np.testing.assert_allclose(out.numpy(), a_np + sign * alpha * b_np, rtol=1e-12)
    assert out.dtype == ember.float64


def test_tensor_alpha_in_an_optimizer_update():
    # Adafactor's form: a running average updated with a tensor-valued weight
    avg, update = ember.zeros(2, 3), ember.ones(2, 3)
    beta = ember.tensor(0.9)
    avg.mul_(beta).add_(update, alpha=1 - beta)
    np.testing.assert_allclose(avg.numpy(), np.full((2, 3), 0.1, np.float32), rtol=1e-6)


def test_tensor_alpha_gradients():
    a = ember.randn(3, 2, dtype=ember.float64, requires_grad=True)
    b = ember.randn(2, dtype=ember.float64, requires_grad=True)
    alpha = ember.tensor(-1.5, dtype=ember.float64)
    assert gradcheck(lambda x, y: ember.add(x, y, alpha=alpha), (a, b))
    assert gradcheck(lambda x, y: ember.sub(x, y, alpha=alpha), (a, b))


@pytest.mark.parametrize("alpha", [ember.tensor([0.5]), ember.ones(2, 2)])
def test_other_tensor_alphas_are_refused(alpha):
    a = ember.ones(2, 2)
    with pytest.raises(TypeError, match=r"add\(\): argument 'alpha' must be Number, not Tensor"):
        ember.add(a, a, alpha=alpha)
    with pytest.raises(TypeError, match=r"sub\(\): argument 'alpha' must be Number, not Tensor"):
        a.sub_(a, alpha=alpha)


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("dtype, alpha, message", [
    (ember.int64, 2.5, "For integral input tensors, argument alpha must not be a floating"),
    (ember.int32, 1.0, "For integral input tensors, argument alpha must not be a floating"),
    (ember.int64, ember.tensor(0.5), "For integral input tensors"),
    (ember.float32, 1j, "For non-complex input tensors, argument alpha must not be a complex"),
    (ember.float32, True, "Boolean alpha only supported for Boolean results"),
    (ember.int64, False, "Boolean alpha only supported for Boolean results"),
])
def test_alpha_must_fit_the_result_dtype(op, dtype, alpha, message):
    x = ember.ones(3, dtype=dtype)
    with pytest.raises(RuntimeError, match=f"{op}: {message}"):
        getattr(ember, op)(x, x, alpha=alpha)
    with pytest.raises(RuntimeError, match=f"{op}: {message}.*result dtype {dtype}"):
        getattr(x, op + "_")(x, alpha=alpha)


def test_alphas_that_fit_are_accepted():
    i = ember.tensor([1, 2], dtype=ember.int64)
    assert ember.add(i, i, alpha=3).tolist() == [4, 8]
    assert ember.add(i, i, alpha=ember.tensor(3)).dtype == ember.int64
    c = ember.tensor([1 + 1j])
    np.testing.assert_allclose(ember.add(c, c, alpha=1j).numpy(), [(1 + 1j) * (1 + 1j)])
    # a float alpha is fine once a float operand makes the result float
    np.testing.assert_allclose(ember.add(i, 0.5, alpha=2.0).numpy(), [2.0, 3.0])


def test_bool_sum_with_an_integer_alpha_stays_bool():
    t = ember.tensor([True, False])
    f = ember.tensor([False, False])
    out = ember.add(t, t, alpha=2)
    assert out.dtype == ember.bool and out.tolist() == [True, False]
    assert ember.add(f, t, alpha=True).tolist() == [True, False]


def test_getsizeof_a_storage_counts_its_bytes():
    # torchinfo sizes a model's inputs by sys.getsizeof(t.untyped_storage())
    small = sys.getsizeof(ember.zeros(10).untyped_storage())
    big = sys.getsizeof(ember.zeros(1000).untyped_storage())
    assert big - small == 990 * 4
    assert sys.getsizeof(ember.zeros(3, dtype=ember.float64).storage()) >= 24
