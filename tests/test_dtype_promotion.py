"""dtype promotion: a table of operand pairs checked against hand-written expectations (torch's
documented rules) and, when torch is installed, against torch.result_type and torch's ops."""
from __future__ import annotations

import pytest

import ember

# An operand: ("t", dtype) a 1-D tensor, ("z", dtype) a 0-d tensor, or ("s", value) a Python
# number. Expected results follow torch's rules: categories bool < integer < floating; tensors
# with dims outrank 0-d tensors, which outrank Python numbers, unless the lower-priority
# operand is of a higher category.
CASES = [
    (("t", "float32"), ("t", "float64"), "float64"),
    (("t", "int32"), ("t", "int64"), "int64"),
    (("t", "uint8"), ("t", "int8"), "int16"),
    (("t", "uint8"), ("t", "int16"), "int16"),
    (("t", "int32"), ("t", "uint8"), "int32"),
    (("t", "float16"), ("t", "bfloat16"), "float32"),
    (("t", "bool"), ("t", "bool"), "bool"),
    (("t", "bool"), ("t", "int8"), "int8"),
    (("t", "bool"), ("t", "float16"), "float16"),
    (("t", "int64"), ("t", "float16"), "float16"),
    (("t", "uint8"), ("t", "bfloat16"), "bfloat16"),
    (("t", "int64"), ("s", 2.5), "float32"),
    (("t", "int32"), ("s", 3), "int32"),
    (("t", "int8"), ("s", 1000), "int8"),
    (("t", "float16"), ("s", 2.5), "float16"),
    (("t", "bool"), ("s", 3), "int64"),
    (("t", "bool"), ("s", 2.5), "float32"),
    (("t", "uint8"), ("s", True), "uint8"),
    (("t", "float64"), ("s", 1), "float64"),
    (("s", 2), ("t", "int16"), "int16"),
    (("z", "float64"), ("t", "float32"), "float32"),
    (("z", "int64"), ("t", "int8"), "int8"),
    (("z", "float32"), ("t", "int32"), "float32"),
    (("z", "float64"), ("t", "int32"), "float64"),
    (("z", "int64"), ("t", "bool"), "int64"),
    (("z", "float64"), ("z", "float32"), "float64"),
    (("z", "int32"), ("s", 2.5), "float32"),
    (("z", "uint8"), ("s", -1), "uint8"),
    (("t", "float16"), ("z", "float64"), "float16"),
    (("t", "int8"), ("z", "uint8"), "int8"),
    (("t", "uint8"), ("z", "int8"), "uint8"),
    (("z", "bool"), ("z", "bool"), "bool"),
    (("z", "bool"), ("s", 1.5), "float32"),
]


def _operand(lib, spec):
    kind, v = spec
    if kind == "s":
        return v
    dt = getattr(lib, v)
    return lib.ones(2, dtype=dt) if kind == "t" else lib.ones((), dtype=dt)


def _case_id(case):
    return "-".join(f"{k}:{v}" for k, v in case[:2])


@pytest.mark.parametrize("a,b,expected", CASES, ids=[_case_id(c) for c in CASES])
def test_result_type(a, b, expected):
    assert ember.result_type(_operand(ember, a), _operand(ember, b)) == getattr(ember, expected)


@pytest.mark.parametrize("a,b,expected", CASES, ids=[_case_id(c) for c in CASES])
def test_arithmetic_follows_result_type(a, b, expected):
    x, y = _operand(ember, a), _operand(ember, b)
    want = getattr(ember, expected)
    if isinstance(x, ember.Tensor):
        assert ember.add(x, y).dtype == want
    assert (x + y).dtype == want
    assert (x * y).dtype == want
    if isinstance(x, ember.Tensor) and isinstance(y, ember.Tensor):
        assert ember.maximum(x, y).dtype == want
        assert ember.where(ember.tensor(True), x, y).dtype == want
    for cmp in (x < y, x == y, x >= y):  # comparisons are bool whatever the operands
        assert cmp.dtype == ember.bool


@pytest.mark.parity
@pytest.mark.parametrize("a,b,expected", CASES, ids=[_case_id(c) for c in CASES])
def test_result_type_matches_torch(a, b, expected):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    theirs = torch.result_type(_operand(torch, a), _operand(torch, b))
    assert str(theirs).replace("torch.", "") == expected  # the hand-written table is right
    ta, tb = _operand(torch, a), _operand(torch, b)
    ea, eb = _operand(ember, a), _operand(ember, b)
    assert str((ea + eb).dtype) == str((ta + tb).dtype).replace("torch.", "ember.")


@pytest.mark.parametrize("a,b,expected", [
    ("bool", "bool", "bool"), ("uint8", "int8", "int16"), ("float16", "bfloat16", "float32"),
    ("int64", "float16", "float16"), ("int32", "int32", "int32"), ("uint8", "int64", "int64"),
])
def test_promote_types(a, b, expected):
    assert ember.promote_types(getattr(ember, a), getattr(ember, b)) == getattr(ember, expected)
    assert ember.promote_types(getattr(ember, b), getattr(ember, a)) == getattr(ember, expected)


# ops with their own result rules
OP_CASES = [
    ("true division of ints", lambda L: L.tensor([3, 4]) / L.tensor([2, 2]), "float32"),
    ("int tensor / int scalar", lambda L: L.tensor([3, 4]) / 2, "float32"),
    ("int32 / float64 0-d", lambda L: L.tensor([3], dtype=L.int32) / L.tensor(2.0,
                                                                             dtype=L.float64),
     "float64"),
    ("floor_divide ints", lambda L: L.floor_divide(L.tensor([7, -7]), L.tensor([2, 2])), "int64"),
    ("div trunc ints", lambda L: L.div(L.tensor([7, -7]), 2, rounding_mode="trunc"), "int64"),
    ("int ** float", lambda L: L.tensor([2, 3]) ** 0.5, "float32"),
    ("int ** int", lambda L: L.tensor([2, 3]) ** 2, "int64"),
    ("exp of int", lambda L: L.exp(L.tensor([1, 2])), "float32"),
    ("sqrt of bool", lambda L: L.sqrt(L.tensor([True, False])), "float32"),
    ("atan2 ints", lambda L: L.atan2(L.tensor([1, 2]), L.tensor([3, 4])), "float32"),
    ("clamp int by float", lambda L: L.clamp(L.tensor([1, 5]), 1.5), "float32"),
    ("clamp float16 by float", lambda L: L.clamp(L.tensor([1.0], dtype=L.float16), 0.5),
     "float16"),
    ("clamp bool by ints", lambda L: L.clamp(L.tensor([True, False]), -1, 2), "int64"),
    ("where int / float", lambda L: L.where(L.tensor([True, False]), L.tensor([1, 2]),
                                            L.tensor([0.5, 1.5])), "float32"),
    ("where float / scalar", lambda L: L.where(L.tensor([True]), L.tensor([1.0],
                                                                         dtype=L.float64), 0),
     "float64"),
    ("cat int32 + int64", lambda L: L.cat([L.tensor([1], dtype=L.int32), L.tensor([2])]),
     "int64"),
    ("cat float16 + bfloat16", lambda L: L.cat([L.ones(1, dtype=L.float16),
                                               L.ones(1, dtype=L.bfloat16)]), "float32"),
    ("sum of bool", lambda L: L.tensor([True, True]).sum(), "int64"),
    ("sum of int8", lambda L: L.tensor([1, 2], dtype=L.int8).sum(), "int64"),
    ("sum dtype=", lambda L: L.tensor([1, 2]).sum(dtype=L.float64), "float64"),
    ("cumsum of uint8", lambda L: L.tensor([1, 2], dtype=L.uint8).cumsum(0), "int64"),
    ("mean of float16", lambda L: L.ones(3, dtype=L.float16).mean(), "float16"),
    ("bitwise uint8 & int8", lambda L: L.tensor([1], dtype=L.uint8) & L.tensor([3],
                                                                              dtype=L.int8),
     "int16"),
    ("comparison float/int", lambda L: L.tensor([1.5]) > L.tensor([1]), "bool"),
    ("in-place add keeps self", lambda L: L.ones(2, dtype=L.float16).add_(L.ones(2,
                                                                             dtype=L.float64)),
     "float16"),
]


@pytest.mark.parametrize("name,make,expected", OP_CASES, ids=[c[0] for c in OP_CASES])
def test_op_result_dtypes(name, make, expected):
    assert make(ember).dtype == getattr(ember, expected)


@pytest.mark.parity
@pytest.mark.parametrize("name,make,expected", OP_CASES, ids=[c[0] for c in OP_CASES])
def test_op_result_dtypes_match_torch(name, make, expected):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    assert str(make(torch).dtype) == f"torch.{expected}"


@pytest.mark.parametrize("make,match", [
    (lambda: ember.ones(2, dtype=ember.int64).add_(1.5), "result type.*float32.*int64"),
    (lambda: ember.ones(2, dtype=ember.bool).mul_(ember.ones(2, dtype=ember.int8)),
     "result type.*int8.*bool"),
    (lambda: ember.ones(2, dtype=ember.int32).div_(2), "result type.*float32.*int32"),
])
def test_inplace_cannot_narrow_the_category(make, match):
    with pytest.raises(RuntimeError, match=match):
        make()


def test_int_tensor_requiring_grad_raises():
    with pytest.raises(RuntimeError, match="floating point.*int64"):
        ember.tensor([1, 2]).requires_grad_()


def test_sub_of_bools_raises_like_torch():
    with pytest.raises(RuntimeError, match="Subtraction.*bool"):
        ember.tensor([True]) - ember.tensor([False])


def test_default_dtype_drives_python_floats():
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor([1.5]).dtype == ember.float64
        assert (ember.tensor([1, 2]) * 0.5).dtype == ember.float64
        assert (ember.tensor([3]) / 2).dtype == ember.float64
    finally:
        ember.set_default_dtype(ember.float32)
    assert (ember.tensor([1, 2]) * 0.5).dtype == ember.float32
