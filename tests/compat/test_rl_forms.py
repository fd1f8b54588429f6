"""Classes of gaps seungeunrho/minimalRL found: tensors nested in the data given to tensor() are
read as numbers (ppo-continuous builds a batch from lists of one-element action tensors), and
Tensor's operators take a NumPy array operand the way torch's do, through NumPy (vtrace
multiplies a tensor by `(td_target - v).numpy()`)."""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _dtype_name(t):
    return str(t.dtype).split(".")[1]


def _data(lib):
    """The same nested data built from each library's tensors."""
    t = lib.tensor
    return {
        "one_element": [t([0.5])],
        "nested": [[t([0.5])], [t([[1.5]])]],
        "zero_dim": [t(4.0), t(5.0)],
        "mixed_scalars": [t([1], dtype=lib.int32), 2.5],
        "int32_alone": [t([1], dtype=lib.int32)],
        "int32_and_int": [[t([1], dtype=lib.int32), 2], [3, 4]],
        "bool_and_int": [t([True]), 1],
        "float64_and_int": [t([[2.0]], dtype=lib.float64), 1],
        "float16_and_float": [t([1.0], dtype=lib.float16), 1.0],
        "requires_grad": [t([1.5], requires_grad=True)],
        "numpy_inside": [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
        "tensor_and_numpy_scalar": [t([1], dtype=lib.int32), np.float32(1)],
    }


@pytest.mark.parametrize("form", sorted(_data(ember)))
@pytest.mark.parametrize("dtype", [None, "float32"])
def test_tensor_reads_nested_tensors_as_numbers_like_torch(form, dtype):
    got = ember.tensor(_data(ember)[form],
                       **({"dtype": getattr(ember, dtype)} if dtype else {}))
    want = torch.tensor(_data(torch)[form],
                        **({"dtype": getattr(torch, dtype)} if dtype else {}))
    assert got.shape == tuple(want.shape)
    assert _dtype_name(got) == _dtype_name(want)
    assert not got.requires_grad
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("make", [
    lambda lib, d: lib.as_tensor(d), lambda lib, d: lib.Tensor(d),
    lambda lib, d: lib.FloatTensor(d), lambda lib, d: lib.LongTensor([d]),
    lambda lib, d: lib.zeros(2).new_tensor(d), lambda lib, d: lib.asarray(d)],
    ids=["as_tensor", "Tensor", "FloatTensor", "LongTensor", "new_tensor", "asarray"])
def test_every_constructor_reads_nested_tensors_as_numbers(make):
    got = make(ember, [ember.tensor([2]), ember.tensor([[3]])])
    want = make(torch, [torch.tensor([2]), torch.tensor([[3]])])
    assert got.shape == tuple(want.shape)
    assert _dtype_name(got) == _dtype_name(want)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_ppo_batch_of_action_lists_has_torch_shape():
    # ppo-continuous: a_lst.append([a]) for a of shape (1,), batched as [[[a], ...], ...]
    rows = [[[ember.tensor([0.1 * i + j])] for j in range(3)] for i in range(4)]
    batch = ember.tensor(rows, dtype=ember.float)
    want = torch.tensor([[[torch.tensor([0.1 * i + j])] for j in range(3)] for i in range(4)],
                        dtype=torch.float)
    assert batch.shape == tuple(want.shape) == (4, 3, 1)
    np.testing.assert_allclose(batch.numpy(), want.numpy())


@pytest.mark.parametrize("shape", [(2,), (0,), (2, 1)])
def test_tensor_of_many_element_tensors_raises_value_error_like_torch(shape):
    with pytest.raises(ValueError, match="only one element tensors"):
        torch.tensor([torch.zeros(shape)])
    with pytest.raises(ValueError, match=r"only one element tensors.*shape \("):
        ember.tensor([ember.zeros(shape)])
    with pytest.raises(ValueError, match="only one element tensors"):
        ember.tensor([[1.0], [ember.zeros(shape)]])


def test_a_tensor_given_alone_is_still_copied_whole():
    src = ember.arange(6.0).reshape(2, 3)
    got = ember.tensor(src)
    assert got.shape == (2, 3)
    np.testing.assert_array_equal(got.numpy(), src.numpy())


_OPS = ["x + a", "x - a", "x * a", "x / a", "x // a", "x % a", "x ** a", "x == a", "a == x",
        "a / x", "xi & ai", "xi | ai", "xi ^ ai", "xi << ai", "xi >> ai", "xi + ai",
        "x * ai", "xi * a", "x2 * a", "x * a.astype(np.float32)", "x * np.array(2.0)",
        "xi * np.array(2.5)", "x0 + a"]


def _operands(lib):
    x = lib.tensor([1.5, -2.0, 3.0])
    return {"x": x, "x2": lib.stack([x, x * 2]), "x0": lib.tensor(2.0),
            "xi": lib.tensor([5, 6, 7]), "a": np.array([0.5, 2.0, -4.0]),
            "ai": np.array([1, 2, 3]), "np": np}


@pytest.mark.parametrize("expr", _OPS)
def test_operator_with_numpy_array_operand_computes_like_torch(expr):
    got = eval(expr, _operands(ember))
    want = eval(expr, _operands(torch))
    assert isinstance(got, ember.Tensor)
    assert got.shape == tuple(want.shape)
    assert _dtype_name(got) == _dtype_name(want)
    assert got.grad_fn is None
    np.testing.assert_allclose(got.numpy(), want.numpy())


@pytest.mark.parametrize("op", ["+=", "*=", "-=", "/="])
def test_inplace_operator_with_numpy_array_rebinds_like_torch(op):
    results = []
    for lib in (ember, torch):
        x = lib.ones(3)
        y = x
        ns = {"y": y, "a": np.array([1.0, 2.0, 4.0])}
        exec(f"y {op} a", ns)
        assert ns["y"] is not x  # a new tensor, as in torch: x itself is unchanged
        np.testing.assert_array_equal(x.numpy(), np.ones(3, dtype=np.float32))
        results.append(ns["y"])
    got, want = results
    assert _dtype_name(got) == _dtype_name(want) == "float64"
    np.testing.assert_allclose(got.numpy(), want.numpy())


@pytest.mark.parametrize("expr", ["x * a", "x + a", "a / x"])
def test_operator_with_numpy_array_refuses_a_tensor_that_requires_grad(expr):
    for lib in (ember, torch):
        ns = {"x": lib.ones(3, requires_grad=True), "a": np.arange(3.0)}
        with pytest.raises(RuntimeError, match="Can't call numpy"):
            eval(expr, ns)


@pytest.mark.parametrize("expr", ["torch.add(x, a)", "x.mul(a)", "a - x", "a ** x",
                                  "torch.maximum(x, a)", "x > a"])
def test_functions_and_reflected_operators_still_refuse_arrays_like_torch(expr):
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            eval(expr, {"torch": lib, "x": lib.ones(3), "a": np.arange(3.0)})


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_multinomial_of_integer_weights_raises_like_torch(dtype):
    # policies sample with torch.multinomial(probs, 1); torch refuses non-floating weights
    with pytest.raises(RuntimeError, match="floating"):
        torch.multinomial(torch.tensor([1, 2, 3]).to(getattr(torch, dtype)), 1)
    with pytest.raises(RuntimeError, match=r"floating.*got ember\." + dtype):
        ember.multinomial(ember.tensor([1, 2, 3]).to(getattr(ember, dtype)), 1)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_multinomial_of_floating_weights_samples_the_only_nonzero(dtype):
    w = ember.tensor([0.0, 0.0, 2.0]).to(getattr(ember, dtype))
    assert ember.multinomial(w, 3, replacement=True).tolist() == [2, 2, 2]


def test_from_numpy_non_native_byte_order_raises_value_error_like_torch():
    a = np.zeros(2, dtype=">f4")
    with pytest.raises(ValueError, match="byte order"):
        torch.from_numpy(a)
    with pytest.raises(ValueError, match="byte order"):
        ember.from_numpy(a)


# cleanrl's ReplayBuffer (cleanrl_utils/buffers.py) asks `if device == "auto":` of a device
@pytest.mark.parametrize("other", ["auto", "cpu", "cpu:0", 1, None, ("cpu",)])
def test_device_compares_with_strings_and_others_like_torch(other):
    for d in ("cpu", "cpu:0", "meta"):
        ours, theirs = ember.device(d), torch.device(d)
        assert (ours == other) is (theirs == other)
        assert (ours != other) is (theirs != other)
        assert (other == ours) is (other == theirs)
    assert ember.device("cpu") == ember.device("cpu") and ember.device("cpu") != ember.device(
        "meta")
    assert ember.device("cpu") != ember.device("cpu:0")
    assert torch.device("cpu") != torch.device("cpu:0")
