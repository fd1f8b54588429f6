"""torch's rules for the pointwise ops that tests/parity/test_pointwise_sweep.py found ember
breaking, one test per class: where a Python number may stand for a tensor, which dtypes the
kernels take, which ops take only an out= of their result's dtype, promotion with numbers and
integer powers."""
from __future__ import annotations

import numpy as np
import pytest

import ember


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin", "atan2", "hypot",
                                  "logical_and", "logaddexp", "ldexp", "nextafter", "isclose"])
def test_number_operand_refused_where_torch_takes_only_tensors(name):
    x = ember.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'other' .*must be Tensor, not "
                                        "float"):
        getattr(ember, name)(x, 2.0)
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'input' .*must be Tensor, not "
                                        "int"):
        getattr(ember, name)(2, x)


@pytest.mark.parametrize("name", ["fmod", "copysign", "lt", "eq"])
def test_number_first_refused_where_torch_takes_it_only_as_other(name):
    x = ember.tensor([1.0, -2.0])
    getattr(ember, name)(x, 2)  # a number other is fine
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'input'"):
        getattr(ember, name)(2, x)


def test_number_first_taken_by_the_ops_torch_gives_a_scalar_self():
    x = ember.tensor([1, 2, 3])
    assert ember.pow(2, x).tolist() == [2, 4, 8]
    assert ember.remainder(7, x).tolist() == [0, 1, 1]
    assert ember.bitwise_left_shift(1, x).tolist() == [2, 4, 8]
    assert (2 < ember.tensor([1.0, 3.0])).tolist() == [False, True]  # the operator reflects


@pytest.mark.parametrize("call, match", [
    (lambda: ember.hypot(ember.tensor([3]), ember.tensor([4])), "hypot: not implemented for "
                                                                "integer"),
    (lambda: ember.nextafter(ember.tensor([1]), ember.tensor([2])), "nextafter"),
    (lambda: ember.logaddexp(ember.tensor([1]), ember.tensor([2])), "logaddexp"),
    (lambda: ember.floor_divide(ember.tensor([True]), ember.tensor([True])), "bool"),
    (lambda: ember.remainder(ember.tensor([True]), ember.tensor([True])), "bool"),
    (lambda: ember.pow(ember.tensor([True]), ember.tensor([True])), "bool"),
    (lambda: ember.tensor([True]) << ember.tensor([True]), "bool"),
    (lambda: ember.xlogy(ember.tensor([1j]), ember.tensor([1j])), "complex"),
    (lambda: ember.div(ember.tensor([1j]), ember.tensor([1j]), rounding_mode="trunc"),
     "complex"),
    (lambda: ember.round(ember.tensor([1, 2]), decimals=1), "round.*decimals=1"),
    (lambda: ember.round(ember.tensor([1j])), "round"),
    (lambda: ember.frac(ember.tensor([1, 2])), "frac"),
    (lambda: ember.bitwise_not(ember.tensor([1j])), "bitwise_not.*complex"),
    (lambda: ember.clamp(ember.tensor([True]), ember.tensor([False]), ember.tensor([True])),
     "clamp.*bool"),
    (lambda: ember.addcmul(ember.tensor([True]), ember.tensor([True]), ember.tensor([True])),
     "addcmul.*bool"),
])
def test_dtypes_without_a_torch_kernel_raise_not_implemented(call, match):
    with pytest.raises(NotImplementedError, match=match):
        call()


def test_isposinf_of_complex_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="isposinf.*complex"):
        ember.isposinf(ember.tensor([1j]))


@pytest.mark.parametrize("name", ["abs", "neg", "sign", "floor", "round", "trunc", "frac",
                                  "nan_to_num", "signbit", "isposinf"])
def test_dtype_preserving_ops_take_only_an_out_of_the_result_dtype(name):
    x = ember.tensor([1.5, -2.5])
    want = getattr(ember, name)(x).dtype
    out = ember.empty(0, dtype=want)
    getattr(ember, name)(x, out=out)
    assert out.shape == (2,)
    with pytest.raises(RuntimeError, match=rf"{name}\(\): out= has dtype ember.float64, "
                                           "expected the result's dtype"):
        getattr(ember, name)(x, out=ember.empty(0, dtype=ember.float64))
    # a float op casts into a wider out= as before
    ember.exp(x, out=ember.empty(0, dtype=ember.float64))


def test_abs_of_complex_fills_a_complex_out():
    out = ember.empty(0, dtype=ember.complex64)
    ember.abs(ember.tensor([3 + 4j], dtype=ember.complex64), out=out)
    assert out.tolist() == [5 + 0j]


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite", "real", "conj"])
def test_ops_without_out_keyword(name):
    with pytest.raises(TypeError, match="out"):
        getattr(ember, name)(ember.tensor([1.0]), out=ember.empty(0, dtype=ember.bool))


def test_true_division_converts_a_number_to_the_float_dtype_not_the_tensors():
    x = ember.tensor([3, 6], dtype=ember.uint8)
    np.testing.assert_allclose((x / -3).numpy(), [-1.0, -2.0])
    np.testing.assert_allclose((-3 / x).numpy(), [-1.0, -0.5])
    assert ember.copysign(x, -1).tolist() == [-3.0, -6.0]


def test_integer_pow_by_a_negative_tensor_exponent_truncates():
    base = ember.tensor([2, -1, -1, 1, 0, 3])
    exponent = ember.tensor([-1, -1, -2, -3, -1, 2])
    assert ember.pow(base, exponent).tolist() == [0, -1, 1, 1, 0, 9]
    assert ember.pow(2, ember.tensor([-1, 3])).tolist() == [0, 8]
    with pytest.raises(RuntimeError, match="negative integer powers"):
        ember.pow(base, -1)
    with pytest.raises(RuntimeError, match="negative integer powers"):
        base.pow_(-2)


def test_bool_pow_by_a_bool_number_is_a_copy_or_ones():
    x = ember.tensor([True, False])
    assert ember.pow(x, True).tolist() == [True, False]
    assert ember.pow(x, False).tolist() == [True, True]


def test_add_alpha_keeps_bfloat16():
    x = ember.tensor([1.0, 2.0], dtype=ember.bfloat16)
    assert ember.add(x, x, alpha=0.5).dtype == ember.bfloat16
    assert ember.sub(x, x, alpha=0.5).dtype == ember.bfloat16


def test_ldexp_dtypes_and_complex_input():
    assert ember.ldexp(ember.tensor([1.0], dtype=ember.float16),
                       ember.tensor([3], dtype=ember.uint8)).dtype == ember.float16
    assert ember.ldexp(ember.tensor([1]), ember.tensor([3])).tolist() == [8.0]
    z = ember.ldexp(ember.tensor([1 + 1j], dtype=ember.complex64), ember.tensor([2]))
    assert z.dtype == ember.complex64 and z.tolist() == [4 + 4j]


def test_logaddexp_of_complex():
    a = np.array([1 + 2j, -3 + 0.5j])
    b = np.array([0.5 - 1j, 2 + 0j])
    got = ember.logaddexp(ember.tensor(a), ember.tensor(b)).numpy()
    np.testing.assert_allclose(got, np.log(np.exp(a) + np.exp(b)), rtol=1e-12)


def test_isclose_compares_integers_by_value():
    assert ember.isclose(ember.tensor([10, 5]), ember.tensor([12, 2]), rtol=0.2,
                         atol=0).tolist() == [True, False]
    assert ember.isclose(ember.tensor([True]), ember.tensor([False]), atol=1.0).tolist() == [True]


def test_addcmul_and_addcdiv_on_integers():
    t = ember.tensor([1, 2])
    assert ember.addcmul(t, t, t, value=0.5).tolist() == [1, 2]  # value truncated to 0
    with pytest.raises(RuntimeError, match="addcdiv: integer division"):
        ember.addcdiv(t, t, t)


def test_where_takes_a_uint8_condition_with_a_warning():
    with pytest.warns(UserWarning, match="uint8 condition"):
        out = ember.where(ember.tensor([1, 0], dtype=ember.uint8), ember.tensor([1.0, 2.0]),
                          ember.tensor([3.0, 4.0]))
    assert out.tolist() == [1.0, 4.0]


def test_clamp_bounds_must_be_both_numbers_or_both_tensors():
    with pytest.raises(TypeError, match="clamp\\(\\): the bounds must be both numbers or both "
                                        "tensors"):
        ember.clamp(ember.tensor([1.0]), ember.tensor([0.0]), 2.0)


def test_lerp_and_div_errors_are_torchs_types():
    with pytest.raises(RuntimeError, match="lerp.*do not broadcast"):
        ember.lerp(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0, 3.0]), 0.5)
    with pytest.raises(RuntimeError, match="rounding_mode"):
        ember.div(ember.tensor([1.0]), ember.tensor([2.0]), rounding_mode="round")


@pytest.mark.parametrize("name", ["exp", "abs", "floor", "sigmoid", "isnan", "signbit",
                                  "positive", "clamp", "nan_to_num"])
@pytest.mark.parametrize("arg", [2.5, [1.0, 2.0]])
def test_a_non_tensor_input_is_a_type_error(name, arg):
    # (it failed inside as an AttributeError: 'float' object has no attribute 'dtype')
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'input' .*must be Tensor, not "
                                        f"{type(arg).__name__}"):
        getattr(ember, name)(arg)


def test_two_numbers_make_a_0d_tensor_for_the_arithmetic_ops():
    assert ember.add(2, 3).tolist() == 5 and ember.add(2, 3).dtype == ember.int64
    assert ember.mul(2.5, 2).dtype == ember.float32
    np.testing.assert_allclose(ember.div(2, 3).numpy(), 2 / 3, rtol=1e-6)
    assert ember.floor_divide(7, 2).tolist() == 3
    with pytest.raises(TypeError, match="at least one Tensor"):
        ember.remainder(7, 2)


def test_gcd_lcm_take_integer_tensors_only():
    a, b = ember.tensor([12, 18], dtype=ember.int32), ember.tensor([8, 4], dtype=ember.int64)
    assert ember.gcd(a, b).tolist() == [4, 2] and ember.gcd(a, b).dtype == ember.int64
    assert ember.lcm(a, b).tolist() == [24, 36]
    with pytest.raises(NotImplementedError, match="gcd: not implemented for dtype ember.float32"):
        ember.gcd(a, ember.tensor([1.0, 2.0]))
    with pytest.raises(NotImplementedError, match="lcm.*bool"):
        ember.lcm(ember.tensor([True]), ember.tensor([False]))
    with pytest.raises(TypeError, match="gcd\\(\\): argument 'other'"):
        ember.gcd(a, 4)


def test_heaviside_broadcasts_values_and_refuses_numbers():
    x = ember.tensor([[-1.0], [0.0]])
    out = ember.heaviside(x, ember.tensor([0.5, 0.25]))
    assert out.tolist() == [[0.0, 0.0], [0.5, 0.25]]
    with pytest.raises(TypeError, match="heaviside\\(\\): argument 'other'"):
        ember.heaviside(x, 0.5)
    with pytest.raises(RuntimeError, match="heaviside\\(\\): out= has dtype ember.float64"):
        ember.heaviside(x, ember.tensor([0.5]), out=ember.empty(0, dtype=ember.float64))


def test_float_power_of_complex_keeps_the_imaginary_part():
    z = ember.float_power(ember.tensor([1 + 1j], dtype=ember.complex64), 2)
    assert z.dtype == ember.complex128
    np.testing.assert_allclose(z.numpy(), [2j], atol=1e-12)
    assert ember.float_power(ember.tensor([2]), 1j).dtype == ember.complex128
    w = ember.tensor([1 + 1j], dtype=ember.complex128)
    w.float_power_(2)
    np.testing.assert_allclose(w.numpy(), [2j], atol=1e-12)


@pytest.mark.parametrize("call, op", [
    (lambda x: ember.pow(x, 300), "pow"), (lambda x: x ** 128, "pow"),
    (lambda x: x.clone().pow_(300), "pow"), (lambda x: ember.add(x, x, alpha=300), "add"),
    (lambda x: x.sub(x, alpha=-129), "sub"), (lambda x: x.clamp(max=300), "clamp"),
    (lambda x: x.clone().fill_(127.5), "fill_"),
    (lambda x: x.masked_fill(x > 0, 300), "masked_fill"),
    (lambda x: ember.where(x > 1, x, 300), "where"),
    (lambda x: x.index_fill(0, ember.tensor([0]), float("nan")), "index_fill"),
    (lambda x: x.scatter(0, ember.tensor([0]), -200), "scatter"),
    (lambda x: ember.addcmul(x, x, x, value=300), "addcmul"),
    (lambda x: ember.nn.functional.threshold(x, 1, 300), "threshold"),
])
def test_number_option_out_of_int8_range_is_refused(call, op):
    # NOTE [Numbers that do not fit the dtype]: an option taken in the tensor's dtype
    x = ember.tensor([1, 2], dtype=ember.int8)
    with pytest.raises(RuntimeError, match=rf"{op}: value .* cannot be converted to type "
                                           r"ember.int8 without overflow"):
        call(x)


def test_number_operand_out_of_range_wraps_and_unsigned_takes_negatives():
    x = ember.tensor([1, 2], dtype=ember.int8)
    assert (x + 300).tolist() == [45, 46] and (x * 300).dtype is ember.int8
    u = ember.tensor([5], dtype=ember.uint8)
    assert u.sub(u, alpha=-1).tolist() == [10]         # -1 fits uint8 (wraps to 255)
    assert u.clamp(min=-1).tolist() == [255]           # as torch: -1 is 255 in uint8
    with pytest.raises(RuntimeError, match="fill_: value -256 cannot be converted"):
        u.fill_(-256)
    h = ember.tensor([1.0], dtype=ember.float16)
    with pytest.raises(RuntimeError, match="pow: value 100000 cannot be converted"):
        h ** 100000
    assert ember.pow(ember.tensor([2.0]), 1e39).tolist() == [float("inf")]  # float32: no check
