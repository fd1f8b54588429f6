"""How tensors meet Python and NumPy, as torch 2.13 has it (a differential sweep of 112 such
forms while growing the corpus found these four classes): NumPy functions on a tensor return a
tensor; == and != with None, strings or lists give Python's identity answer (old RNN code
tests `if h == None`); a NumPy integer scalar promotes like a Python int; float()/int()/
complex() of a many-element tensor raise ValueError."""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _dtype_name(t):
    return str(t.dtype).split(".")[1]


_NUMPY_CALLS = {
    "exp": lambda lib: np.exp(lib.tensor([0.5, -1.0, 2.0])),
    "exp_0d": lambda lib: np.exp(lib.tensor(1.0)),
    "add_scalar": lambda lib: np.add(lib.ones(2), 1),
    "minimum_array": lambda lib: np.minimum(lib.ones(2), np.zeros(2)),
    "matmul_array": lambda lib: np.matmul(lib.ones(2, 2), np.ones(2)),
    "isnan_bool_as_uint8": lambda lib: np.isnan(lib.tensor([1.0, float("nan")])),
    "equal_bool_as_uint8": lambda lib: np.equal(lib.ones(2), 1),
    "float16_square": lambda lib: np.square(lib.ones(2, dtype=lib.float16)),
    "cumsum": lambda lib: np.cumsum(lib.tensor([1.0, 2.0, 3.0])),
    "clip": lambda lib: np.clip(lib.tensor([1.5, -2.0, 3.0]), 0, 1),
    "argmax": lambda lib: np.argmax(lib.tensor([1.5, -2.0, 3.0])),
    "reduce": lambda lib: np.add.reduce(lib.ones(3)),
    "log_then_sum": lambda lib: np.log(lib.ones(2) * 2).sum(),
}


@pytest.mark.parametrize("name", sorted(_NUMPY_CALLS))
def test_numpy_function_on_tensor_returns_tensor_like_torch(name):
    got, want = _NUMPY_CALLS[name](ember), _NUMPY_CALLS[name](torch)
    assert isinstance(want, torch.Tensor)
    assert isinstance(got, ember.Tensor)
    assert got.shape == tuple(want.shape)
    assert _dtype_name(got) == _dtype_name(want)
    np.testing.assert_allclose(got.numpy(), want.numpy())


def test_numpy_function_with_out_array_returns_the_array():
    out = np.zeros(2)
    assert np.add(ember.ones(2), 1, out=out) is out
    np.testing.assert_array_equal(out, [2.0, 2.0])


def test_numpy_function_refuses_tensor_that_requires_grad():
    with pytest.raises(RuntimeError, match="Can't call numpy"):
        np.sqrt(ember.ones(2, requires_grad=True))


@pytest.mark.parametrize("other", [None, "a", [1.5, -2.0], (1.5, -2.0), {"k": 1}, object()],
                         ids=["None", "str", "list", "tuple", "dict", "object"])
def test_eq_ne_with_foreign_operand_give_identity_answer_like_torch(other):
    for lib in (ember, torch):
        x = lib.tensor([1.5, -2.0])
        assert (x == other) is False
        assert (x != other) is True
        assert (other == x) is False


def test_old_style_none_check_on_hidden_state():
    h = ember.zeros(2, 3)
    h = ember.ones(2, 3) if h == None else h  # noqa: E711  (the form programs use)
    np.testing.assert_array_equal(h.numpy(), np.zeros((2, 3)))


def test_ne_with_numpy_array_is_identity_like_torch():
    # torch answers True: neither side computes != for a tensor and an array
    assert (torch.ones(2) != np.ones(2)) is True
    assert (ember.ones(2) != np.ones(2)) is True


@pytest.mark.parametrize("other", [None, "a"], ids=["None", "str"])
def test_ordering_with_foreign_operand_still_raises_type_error(other):
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            _ = lib.ones(2) < other


@pytest.mark.parametrize("expr", [
    "ti * np.int64(2)", "np.int64(2) * ti", "ti + np.int32(1)", "ti // np.int64(2)",
    "t8 + np.int64(1)", "t8 + np.int16(1)", "ti * np.uint8(2)", "tb + np.int64(1)",
    "ti * np.float32(2)", "th * np.float64(2)", "tb * np.bool_(True)", "ti / np.int64(2)",
    "torch.full((2,), np.int64(3)) + 0"])
def test_numpy_scalar_promotes_like_torch(expr):
    def ns(lib):
        return {"ti": lib.tensor([1, 2, 3]), "t8": lib.tensor([1], dtype=lib.int8),
                "tb": lib.tensor([True, False]), "th": lib.ones(2, dtype=lib.float16),
                "np": np, "torch": lib}
    got, want = eval(expr, ns(ember)), eval(expr, ns(torch))
    assert _dtype_name(got) == _dtype_name(want)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("convert", [float, int, complex])
@pytest.mark.parametrize("shape", [(3,), (0,), (2, 2)])
def test_python_scalar_of_many_elements_raises_value_error_like_torch(convert, shape):
    with pytest.raises(ValueError, match="only one element tensors"):
        convert(torch.ones(shape))
    with pytest.raises(ValueError, match=r"only one element tensors.*shape"):
        convert(ember.ones(shape))


@pytest.mark.parametrize("convert", [float, int, complex])
def test_python_scalar_of_one_element_any_shape(convert):
    for shape in [(), (1,), (1, 1)]:
        assert convert(ember.full(shape, 2.0)) == convert(torch.full(shape, 2.0))


def test_item_of_many_elements_still_raises_runtime_error_like_torch():
    with pytest.raises(RuntimeError):
        torch.ones(3).item()
    with pytest.raises(RuntimeError, match="3 elements"):
        ember.ones(3).item()


@pytest.mark.parametrize("shape", [(0,), (2,)])
def test_bool_message_has_torchs_wording(shape):
    with pytest.raises(RuntimeError) as want:
        bool(torch.ones(shape))
    with pytest.raises(RuntimeError) as got:
        bool(ember.ones(shape))
    assert str(got.value) == str(want.value)
