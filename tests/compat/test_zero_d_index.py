"""A 0-d index in gather/scatter (pytorch/tutorials' transforms chapter one-hot encodes a label
with ``torch.zeros(10).scatter_(0, torch.tensor(y), value=1)``): torch compares dims as if 0-d
tensors were 1-d, so a 0-d index addresses one element of a 1-d input; ember raised "Index
tensor must have the same number of dimensions". NOTE [0-d index] in ember/ops/gather.py.
"""
import numpy as np
import pytest

import ember

_FORMS = {
    "scatter_value": lambda lib: lib.zeros(10).scatter_(0, lib.tensor(3), value=1),
    "scatter_value_kw": lambda lib: lib.zeros(10).scatter_(dim=0, index=lib.tensor(3), value=1),
    "scatter_scalar": lambda lib: lib.zeros(10).scatter(0, lib.tensor(3), 5.0),
    "scatter_src0d": lambda lib: lib.zeros(10).scatter(0, lib.tensor(3), lib.tensor(7.0)),
    "scatter_src1d": lambda lib: lib.zeros(10).scatter(0, lib.tensor(3), lib.tensor([7.0, 8.0])),
    "scatter_add": lambda lib: lib.zeros(10).scatter_add(0, lib.tensor(3), lib.tensor(7.0)),
    "scatter_reduce": lambda lib: lib.zeros(10).scatter_reduce(0, lib.tensor(3),
                                                               lib.tensor(7.0), "sum"),
    "gather": lambda lib: lib.arange(10.0).gather(0, lib.tensor(4)),
    "gather_neg_dim": lambda lib: lib.arange(10.0).gather(-1, lib.tensor(9)),
    "gather_0d_input": lambda lib: lib.tensor(5.0).gather(0, lib.tensor([0])),
    "scatter_0d_input": lambda lib: lib.tensor(5.0).scatter(0, lib.tensor([0]), 2.0),
}


@pytest.mark.parity
@pytest.mark.parametrize("form", sorted(_FORMS))
def test_zero_d_index_matches_torch(form):
    torch = pytest.importorskip("torch")
    want = _FORMS[form](torch)
    got = _FORMS[form](ember)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parity
def test_zero_d_index_on_2d_input_is_refused_as_in_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="same number of dimensions"):
            lib.zeros(2, 4).scatter_(0, lib.tensor(3), value=1)


def test_zero_d_index_gradients():
    x = ember.randn(6, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: t.gather(0, ember.tensor(2)), (x,))
    src = ember.tensor(1.5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda t, s: t.scatter(0, ember.tensor(4), s) * 2, (x, src))
    assert ember.autograd.gradcheck(
        lambda t, s: t.scatter_add(0, ember.tensor(1), s), (x, src))
