"""Shape arguments take ints (or anything with __index__) and refuse floats and bools with a
TypeError, as torch does: found by kuangliu/pytorch-cifar's ShuffleNet, whose
`nn.Conv2d(c, c / 4, ...)` (a float under Python 3) ember used to build with a truncated
size, failing later with an unrelated message."""
import numpy as np
import pytest

import ember

BAD = [
    "torch.empty((2.0, 3))", "torch.zeros(2.5)", "torch.ones([3, 1.0])", "torch.randn(2.0)",
    "torch.rand((2, 2.0))", "torch.full((2.0,), 1.)", "torch.empty(True)",
    "torch.zeros(2, 3).new_zeros((2.0,))", "torch.zeros(3).new_empty(2.0)",
    "torch.zeros(2).expand(2.0)", "torch.zeros(2, 1).expand((2.0, 1))",
    "torch.zeros(4).reshape((2.0, 2))", "torch.zeros(4).view((2.0, 2))",
    "torch.nn.Linear(10.0, 5)", "torch.nn.Conv2d(4, 8.0, 1)",
    "torch.nn.Conv2d(4, 8, 1, groups=2.0)", "torch.nn.BatchNorm2d(4.0)",
    "torch.nn.Embedding(10.0, 3)",
]
GOOD = [
    "torch.empty(np.int64(2))", "torch.zeros(torch.tensor(2))", "torch.ones(torch.Size([2, 3]))",
    "torch.arange(6).view(torch.tensor(2), 3)", "torch.arange(6).reshape(np.int32(3), -1)",
    "torch.zeros(2, 1).expand(np.int64(2), 4)", "torch.zeros(3).new_zeros([np.int16(2), 2])",
    "torch.randn(size=(2, 3))",
]


@pytest.mark.parametrize("expr", BAD)
def test_float_or_bool_size_is_type_error(expr):
    with pytest.raises(TypeError, match=r"must be tuple of ints, but found element of type "
                                        r"(float|bool) at pos \d"):
        eval(expr, {"torch": ember, "np": np})


@pytest.mark.parametrize("expr", GOOD)
def test_index_like_sizes_are_accepted(expr):
    r = eval(expr, {"torch": ember, "np": np})
    assert all(type(s) is int for s in r.shape)


@pytest.mark.parity
@pytest.mark.parametrize("expr", BAD + GOOD)
def test_same_outcome_as_torch(expr):
    torch = pytest.importorskip("torch")

    def outcome(lib):
        try:
            return tuple(eval(expr, {"torch": lib, "np": np}).shape if "nn." not in expr
                         else ())
        except TypeError:
            return TypeError

    assert outcome(ember) == outcome(torch)


def test_error_names_the_op_and_position():
    with pytest.raises(TypeError, match=r"^reshape\(\): argument 'shape' .* at pos 1$"):
        ember.zeros(4).reshape(2, 2.0)
    with pytest.raises(TypeError, match=r"^randn\(\): argument 'size' .*type float at pos 0$"):
        ember.randn(1.5, 2)
