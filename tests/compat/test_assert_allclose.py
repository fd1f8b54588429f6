"""torch.testing.assert_allclose (deprecated since torch 1.12, still shipped and called by
pytorch/tutorials' FX conv/batch-norm fuser): its looser default tolerances, number inputs,
dtype-blind comparison and NaN handling, checked against torch's accept/reject decisions."""
import math

import numpy as np
import pytest

import ember


def _accepts(mod, actual, expected, **kw):
    try:
        mod.testing.assert_allclose(actual, expected, **kw)
    except AssertionError:
        return False
    return True


# (actual, expected, kwargs) as NumPy/number data: each near a tolerance boundary
_CASES = [
    (np.float32([1.0, 2.0]), np.float32([1.0, 2.0 + 1e-4]), {}),        # inside 1e-4 rtol
    (np.float32([1.0, 2.0]), np.float32([1.0, 2.0 + 1e-3]), {}),        # outside
    (np.float64([1.0]), np.float64([1.0 + 5e-6]), {}),                  # inside 1e-5 rtol
    (np.float64([1.0]), np.float64([1.0 + 5e-5]), {}),                  # outside
    (np.float16([1.0]), np.float16([1.0009765625]), {}),                # inside 1e-3 atol+rtol
    (np.int64([3, 4]), np.int64([3, 5]), {}),                           # integers: exact
    (np.float32([math.nan, 1.0]), np.float32([math.nan, 1.0]), {}),     # NaN equal by default
    (np.float32([math.nan]), np.float32([math.nan]), {"equal_nan": False}),
    (np.float32([1.0]), np.float32([1.5]), {"rtol": 0.5, "atol": 0.0}),
    (np.float32([1.0]), np.float64([1.0 + 5e-5]), {}),                  # dtypes differ: fine
]


@pytest.mark.parity
@pytest.mark.parametrize("actual,expected,kw", _CASES)
def test_assert_allclose_decisions_match_torch(actual, expected, kw):
    torch = pytest.importorskip("torch")
    with pytest.warns(FutureWarning):
        want = _accepts(torch, torch.from_numpy(actual), torch.from_numpy(expected), **kw)
    with pytest.warns(FutureWarning, match="assert_allclose.*deprecated"):
        got = _accepts(ember, ember.from_numpy(actual), ember.from_numpy(expected), **kw)
    assert got == want


def test_assert_allclose_numbers_and_lists_become_tensors():
    with pytest.warns(FutureWarning):
        ember.testing.assert_allclose(ember.tensor([1.0, 2.0]), [1.0, 2.00001])
        ember.testing.assert_allclose(3.0, 3.0)
    with pytest.warns(FutureWarning), pytest.raises(AssertionError):
        ember.testing.assert_allclose(ember.tensor([1, 2]), [1, 3])


def test_assert_allclose_shape_mismatch_and_one_tolerance_raise():
    with pytest.warns(FutureWarning), pytest.raises(AssertionError, match="shape"):
        ember.testing.assert_allclose(ember.ones(2), ember.ones(3))
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="rtol.*atol"):
        ember.testing.assert_allclose(ember.ones(2), ember.ones(2), rtol=1e-3)
