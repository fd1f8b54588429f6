"""Elementwise ops: behaviour the generic op suite (test_op_db.py) cannot express - numerics at
extremes, integer semantics, bool rules, error messages - and regression tests for fixed bugs."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_close


def _leaf(values, dtype=ember.float64):
    return ember.tensor(values, dtype=dtype, requires_grad=True)


# ---------------------------------------------------------------------------------------------
# numerics


def test_tanh_and_sigmoid_saturate_without_nan():
    x = _leaf([-400.0, 0.0, 400.0])
    x.tanh().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1.0, 0.0])
    y = _leaf([-800.0, 0.0, 800.0])
    s = y.sigmoid()
    np.testing.assert_allclose(s.detach().numpy(), [0.0, 0.5, 1.0])
    s.sum().backward()
    assert np.isfinite(y.grad.numpy()).all()


def test_exp_overflow_is_inf_not_an_error():
    assert ember.exp(ember.tensor([1000.0])).item() == float("inf")
    assert ember.log(ember.tensor([0.0])).item() == float("-inf")
    assert np.isnan(ember.sqrt(ember.tensor([-1.0])).item())


def test_maximum_propagates_nan_and_fmax_ignores_it():
    a = ember.tensor([1.0, float("nan"), 3.0])
    b = ember.tensor([2.0, 0.0, float("nan")])
    assert np.isnan(ember.maximum(a, b).numpy()[1:]).all()
    np.testing.assert_array_equal(ember.fmax(a, b).numpy(), [2.0, 0.0, 3.0])


def test_maximum_gradient_splits_ties():
    a, b = _leaf([1.0, 2.0]), _leaf([1.0, 3.0])
    ember.maximum(a, b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.5, 0.0])
    np.testing.assert_allclose(b.grad.numpy(), [0.5, 1.0])


def test_round_is_half_to_even():
    np.testing.assert_array_equal(ember.round(ember.tensor([0.5, 1.5, 2.5, -0.5])).numpy(),
                                  [0.0, 2.0, 2.0, -0.0])


# ---------------------------------------------------------------------------------------------
# integers and bools


def test_integer_division_modes():
    a, b = ember.tensor([7, -7, 7, -7]), ember.tensor([2, 2, -2, -2])
    np.testing.assert_array_equal((a / b).numpy(), [3.5, -3.5, -3.5, 3.5])
    np.testing.assert_array_equal((a // b).numpy(), [3, -4, -4, 3])
    np.testing.assert_array_equal(ember.div(a, b, rounding_mode="trunc").numpy(), [3, -3, -3, 3])
    np.testing.assert_array_equal((a % b).numpy(), [1, 1, -1, -1])
    np.testing.assert_array_equal(ember.fmod(a, b).numpy(), [1, -1, 1, -1])


def test_integer_division_by_zero_raises():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ember.tensor([1]) // ember.tensor([0])


def test_float_division_by_zero_is_inf():
    np.testing.assert_array_equal((ember.tensor([1.0, -1.0]) / 0).numpy(), [np.inf, -np.inf])


def test_bad_rounding_mode_raises():
    with pytest.raises(RuntimeError, match="rounding_mode"):  # (torch: RuntimeError)
        ember.div(ember.tensor([1.0]), 2.0, rounding_mode="nearest")


def test_integer_negative_power_raises():
    with pytest.raises(RuntimeError, match="negative integer powers"):
        ember.tensor([2]) ** -1


def test_neg_of_bool_raises_runtime_error():
    with pytest.raises(RuntimeError, match="neg: not supported for bool"):
        ember.neg(ember.tensor([True, False]))


def test_sign_of_bool_is_identity():
    t = ember.tensor([True, False])
    out = ember.sign(t)
    assert out.dtype == ember.bool and out.tolist() == [True, False]


def test_bool_arithmetic_like_torch():
    t, f = ember.tensor([True, True]), ember.tensor([True, False])
    assert (t + f).tolist() == [True, True] and (t + f).dtype == ember.bool
    assert (t * f).tolist() == [True, False]
    assert (~f).tolist() == [False, True]
    with pytest.raises(RuntimeError, match="Subtraction.*bool"):
        t - f


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_on_floats_raises_not_implemented(name):
    x = ember.ones(2)
    with pytest.raises(NotImplementedError, match=f"{name}.*floating"):
        getattr(ember, name)(x, x)
    with pytest.raises(NotImplementedError, match="bitwise_not.*floating"):
        ember.bitwise_not(x)


def test_shifts_and_bitwise_ints():
    a = ember.tensor([1, 2, 3], dtype=ember.int8)
    assert (a << 2).tolist() == [4, 8, 12] and (a << 2).dtype == ember.int8
    assert (ember.tensor([8]) >> 1).tolist() == [4]
    assert (ember.tensor([6]) & ember.tensor([3])).tolist() == [2]


# ---------------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "floor_divide",
                                  "remainder", "maximum", "atan2", "eq", "lt"])
def test_shape_mismatch_names_op_and_shapes(name):
    a, b = ember.ones(2, 3), ember.ones(4)
    if name == "floor_divide":
        a, b = a.long(), b.long()
    with pytest.raises(RuntimeError, match=rf"{name}: The size of tensor a \(3\) must match the "
                                           rf"size of tensor b \(4\).*\[2, 3\] and \[4\]"):
        getattr(ember, name)(a, b)


def test_operator_shape_mismatch_names_the_op():
    with pytest.raises(RuntimeError, match=r"mul.*\[2, 3\] and \[2\]"):
        ember.ones(2, 3) * ember.ones(2)


def test_non_tensor_operand_raises_type_error():
    with pytest.raises(TypeError, match="add.*str"):
        ember.add(ember.ones(2), "a")


def test_clamp_without_bounds_raises():
    with pytest.raises(RuntimeError, match="clamp.*min.*max"):
        ember.clamp(ember.ones(2))


# ---------------------------------------------------------------------------------------------
# regression tests for fixed bugs


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "sqrt", "reciprocal", "exp2"])
def test_double_backward_through_saved_output_of_0d(op):
    # a ufunc on a 0-d array returns a NumPy scalar; the op saved that scalar, which did not
    # match the returned array by identity, so the second derivative was silently dropped
    x = _leaf(0.7)
    assert gradgradcheck(lambda t: getattr(t, op)(), (x,))
    g, = ember.autograd.grad(getattr(x, op)(), x, create_graph=True)
    assert g.requires_grad


def test_pow_gradient_when_both_operands_broadcast():
    a = ember.tensor([[1.5], [0.7]], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([[0.5, 2.0, -1.0]], dtype=ember.float64, requires_grad=True)
    assert gradcheck(ember.pow, (a, b))
    (a ** b).sum().backward()
    assert tuple(a.grad.shape) == (2, 1) and tuple(b.grad.shape) == (1, 3)


def test_clamp_gradient_when_min_exceeds_max():
    # every output equals max where min > max, so min gets no gradient there
    x = _leaf([0.0, 5.0])
    lo = _leaf([2.0, 2.0])
    hi = _leaf([1.0, 3.0])
    ember.clamp(x, lo, hi).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(lo.grad.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(hi.grad.numpy(), [1.0, 1.0])


def test_clamp_bounds_take_part_in_promotion():
    assert ember.clamp(ember.tensor([1, 5]), 1.5).tolist() == [1.5, 5.0]
    assert ember.clamp(ember.tensor([True, False]), -1, 2).tolist() == [1, 0]
    assert ember.clamp(ember.ones(2, dtype=ember.float16), 0.5).dtype == ember.float16


@pytest.mark.parametrize("op", ["div", "copysign"])
def test_bfloat16_with_python_number_stays_bfloat16(op):
    x = ember.tensor([1.5, -2.0], dtype=ember.bfloat16)
    assert getattr(ember, op)(x, 2.0).dtype == ember.bfloat16
    assert ember.atan2(x, ember.tensor(2.0)).dtype == ember.bfloat16  # (atan2 takes no number)


def test_nan_to_num_bfloat16():
    x = ember.tensor([float("nan"), float("inf"), -float("inf"), 1.0], dtype=ember.bfloat16)
    y = ember.nan_to_num(x).float().numpy()
    assert y[0] == 0 and np.isfinite(y).all() and y[1] > 1e38 and y[2] < -1e38 and y[3] == 1


@pytest.mark.parity
def test_tanh_grad_matches_torch_noncontiguous(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    a = rng.standard_normal((3, 4))
    ours = ember.tensor(a, requires_grad=True)
    ref = torch.tensor(a, requires_grad=True)
    ours.t().tanh().sum().backward()
    ref.t().tanh().sum().backward()
    assert_close(ours.grad, ref.grad)


@pytest.mark.parametrize("name", ["neg", "relu", "floor", "ceil", "trunc"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_quiet_unary_ops_raise_no_fp_warning_on_extremes(name, dtype):
    # these skip np.errstate (unary_op(quiet=True)): no input may make NumPy warn
    info = np.finfo(dtype)
    data = np.array([np.nan, np.inf, -np.inf, info.max, info.min, info.tiny, -0.0, 0.0],
                    dtype=dtype)
    x = ember.tensor(data, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = getattr(ember, name)(x)
        y.sum().backward()
    ref = {"neg": np.negative, "relu": lambda a: np.where(a > 0, a, np.where(np.isnan(a), a, 0)),
           "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc}[name](data)
    np.testing.assert_array_equal(y.detach().numpy(), ref.astype(dtype))


@pytest.mark.parametrize("call", [lambda x: x - True, lambda x: True - x, lambda x: x.sub(True),
                                  lambda x: ember.sub(x, True), lambda x: x.sub_(True),
                                  lambda x: x - ember.tensor([True, False]),
                                  lambda x: ember.tensor([True, False]) - 1])
def test_subtraction_with_a_bool_operand_raises_as_torch(call):
    with pytest.raises(RuntimeError, match="sub: Subtraction.*bool tensor is not supported"):
        call(ember.ones(2))


@pytest.mark.parametrize("name", ["remainder", "fmod", "floor_divide"])
def test_integer_rounding_ops_by_zero_raise_and_complex_operands_are_refused(name):
    fn = getattr(ember, name)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(ember.tensor([1, 2]), 0)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(ember.tensor([1, 2]), ember.tensor([1, 0]))
    np.testing.assert_array_equal(fn(ember.tensor([5, -5]), 3).numpy(),
                                  getattr(np, name)(np.array([5, -5]), 3))
    with pytest.raises(NotImplementedError, match=f"{name}: not implemented for complex"):
        fn(ember.ones(2), 1j)


def test_none_operand_is_a_type_error_and_bitwise_refuses_complex():
    x = ember.ones(2)
    with pytest.raises(TypeError, match="unsupported operand"):
        x + None
    with pytest.raises(TypeError, match="add\\(\\): argument 'other'"):
        ember.add(x, None)
    with pytest.raises(NotImplementedError, match="bitwise_and: not implemented for complex"):
        x & 1j
