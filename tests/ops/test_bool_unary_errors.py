"""Unary ops that torch has no bool kernel for raise its error type and message on bool tensors,
in every form (function, method, in-place), where NumPy would quietly compute a bool result.
Found by performer-pytorch's copy task (`(src != sample).abs()`, tools/compat corpus)."""
from __future__ import annotations

import re

import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle for these error messages")

# (op, call on a tensor, kwargs)
_CASES = [
    ("abs", {}), ("absolute", {}), ("floor", {}), ("ceil", {}), ("trunc", {}), ("fix", {}),
    ("frac", {}), ("round", {}), ("round", {"decimals": 1}), ("relu", {}),
]


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


@pytest.mark.parity
@pytest.mark.parametrize("op, kw", _CASES)
@pytest.mark.parametrize("form", ["function", "method", "inplace"])
def test_bool_input_raises_as_torch(op, kw, form):
    def call(lib):
        x = lib.tensor([True, False, True])
        if form == "function":
            return getattr(lib, op)(x, **kw)
        if form == "method":
            return getattr(x, op)(**kw)
        return getattr(x, op + "_")(**kw)

    t_type, t_msg = _error(lambda: call(torch))
    with pytest.raises(t_type, match=re.escape(t_msg)) as info:
        call(ember)
    assert info.type is t_type   # not a subclass: NotImplementedError where torch raises it


@pytest.mark.parity
@pytest.mark.parametrize("path", ["positive", "nn.functional.relu"])
def test_positive_and_functional_relu_of_bool_raise_as_torch(path):
    def fn(lib):
        for part in path.split("."):
            lib = getattr(lib, part)
        return lib

    t_type, t_msg = _error(lambda: fn(torch)(torch.tensor([True])))
    with pytest.raises(t_type, match=re.escape(t_msg)) as info:
        fn(ember)(ember.tensor([True]))
    assert info.type is t_type


def test_numeric_inputs_unchanged():
    # the check only refuses bool: integer and floating inputs keep their dtype and values
    x = ember.tensor([-1.5, 2.5, -0.0])
    assert ember.abs(x).tolist() == [1.5, 2.5, 0.0]
    assert ember.floor(x).tolist() == [-2.0, 2.0, -0.0]
    assert ember.round(x).tolist() == [-2.0, 2.0, -0.0]
    assert ember.frac(x).tolist() == [-0.5, 0.5, 0.0]
    i = ember.tensor([-3, 4])
    assert ember.abs(i).dtype == ember.int64 and ember.abs(i).tolist() == [3, 4]
    assert ember.relu(i).tolist() == [0, 4] and ember.ceil(i).dtype == ember.int64


@pytest.mark.parity
def test_square_of_bool_is_int64_as_torch():
    # torch squares as pow(x, 2), whose bool base promotes to int64
    a = [[True, False], [False, True]]
    want = torch.square(torch.tensor(a))
    for got in (ember.square(ember.tensor(a)), ember.tensor(a).square(),
                ember.square(ember.tensor(True))):
        assert got.dtype == ember.int64
    assert ember.square(ember.tensor(a)).tolist() == want.tolist()
    out = ember.empty(2, 2, dtype=ember.int64)
    ember.square(ember.tensor(a), out=out)
    assert out.tolist() == want.tolist()
    # the int64 result cannot be written into a bool tensor, in place or through out=
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        ember.tensor(a).square_()
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        ember.square(ember.tensor(a), out=ember.empty(2, 2, dtype=ember.bool))
