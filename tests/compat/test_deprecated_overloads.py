"""torch's deprecated scalar-first overloads (pytorch/tutorials' char_rnn_generation updates its
weights with ``p.data.add_(-learning_rate, p.grad.data)``; old hand-written optimizers call
``addcmul_(1 - beta2, g, g)`` and ``addcdiv_(-step, m, denom)``): the scalar comes before the
tensors. torch computes them (with a deprecation warning); ember raised TypeError.
"""
import warnings

import numpy as np
import pytest

import ember


def _torch():
    return pytest.importorskip("torch")


_CALLS = {
    "add": lambda lib, x, y, z: lib.add(x, 2, y),
    "add_method": lambda lib, x, y, z: x.add(-0.5, y),
    "add_": lambda lib, x, y, z: x.clone().add_(-0.5, y),
    "add_number_other": lambda lib, x, y, z: x.add(2, 3),
    "add_0d_alpha": lambda lib, x, y, z: x.add(lib.tensor(2.0), y),
    "sub": lambda lib, x, y, z: lib.sub(x, 3, y),
    "sub_method": lambda lib, x, y, z: x.sub(3, y),
    "sub_": lambda lib, x, y, z: x.clone().sub_(3, y),
    "addcmul": lambda lib, x, y, z: lib.addcmul(x, 0.25, y, z),
    "addcmul_method": lambda lib, x, y, z: x.addcmul(0.25, y, z),
    "addcmul_": lambda lib, x, y, z: x.clone().addcmul_(0.25, y, z),
    "addcdiv": lambda lib, x, y, z: lib.addcdiv(x, -2, y, z),
    "addcdiv_method": lambda lib, x, y, z: x.addcdiv(-2, y, z),
    "addcdiv_": lambda lib, x, y, z: x.clone().addcdiv_(-2, y, z),
}


def _operands(lib, rng):
    x, y, z = (lib.tensor(rng.standard_normal((2, 3))) for _ in range(3))
    return x, y, z.abs() + 1


@pytest.mark.parity
@pytest.mark.parametrize("form", sorted(_CALLS))
def test_scalar_first_forms_compute_as_in_torch(form):
    torch = _torch()
    want = _CALLS[form](torch, *_operands(torch, np.random.default_rng(0)))
    with pytest.warns(UserWarning, match="deprecated overload"):
        got = _CALLS[form](ember, *_operands(ember, np.random.default_rng(0)))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_the_warning_points_at_the_caller():
    x = ember.ones(2)
    with pytest.warns(UserWarning, match=r"add_\(\) with alpha .*keyword alpha=") as record:
        x.add_(-1, ember.ones(2))
    assert record[0].filename == __file__
    assert x.tolist() == [0.0, 0.0]


def test_the_usual_forms_do_not_warn():
    x, y = ember.ones(2), ember.full((2,), 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.add(y, alpha=2).tolist() == [5.0, 5.0]
        assert ember.addcmul(x, y, y, value=0.5).tolist() == [3.0, 3.0]
        assert x.sub(1).tolist() == [0.0, 0.0]


def test_gradients_flow_through_the_deprecated_form():
    a = ember.randn(3, dtype=ember.float64, requires_grad=True)
    b = ember.randn(3, dtype=ember.float64, requires_grad=True)
    c = ember.rand(3, dtype=ember.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="deprecated"):
        ember.autograd.gradcheck(lambda a, b, c: a.addcdiv(0.5, b, c + 1), (a, b, c))
    with pytest.warns(UserWarning, match="deprecated"):
        ember.autograd.gradcheck(lambda a, b: ember.sub(a, 3, b), (a, b))


@pytest.mark.parity
@pytest.mark.parametrize("call, match", [
    (lambda lib, x: x.add(2, x, alpha=3), "add"),          # the scalar twice
    (lambda lib, x: x.add(x, x, x), "add"),                # one argument too many
    (lambda lib, x: lib.addcmul(x, x, x, x, x), "addcmul"),
])
def test_malformed_calls_are_type_errors_as_in_torch(call, match):
    torch = _torch()
    for lib in (torch, ember):
        with pytest.raises(TypeError, match=match):
            call(lib, lib.ones(2))


def test_a_tensor_in_the_scalar_place_names_the_problem():
    x = ember.ones(2)
    with pytest.raises(TypeError, match="deprecated positional alpha, a number; got Tensor"):
        x.add(x, x)
