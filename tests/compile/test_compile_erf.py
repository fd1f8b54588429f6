"""The fused float32 erf (NOTE [Vectorisable erf] in ember/_dynamo/fusion.py): erf and exact
GELU inside generated kernels equal eager to float32 rounding (a GELU whose backward is
needed keeps eager's kernels, bit for bit); float64
and approximate='tanh' stay on NumPy; fused division by zero gives inf/nan as NumPy does."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.testing import assert_close


@pytest.fixture(autouse=True)
def _fresh():
    ember._dynamo.reset()
    yield


def _replay(fn, *args):
    c = ember.compile(fn)
    c(*args)
    return c, c(*args)


def test_fused_erf_matches_eager_to_one_ulp_over_a_wide_range():
    x = np.concatenate([np.linspace(-6, 6, 200001), np.logspace(-30, 1, 1000),
                        -np.logspace(-30, 1, 1000)]).astype(np.float32)
    t = ember.from_numpy(x)
    c, got = _replay(lambda t: t.erf() * 1.0, t)
    want = t.erf().numpy()
    assert "Erf" not in c.sources[0]          # computed inside a generated kernel
    ulp = np.spacing(np.abs(want).astype(np.float32))
    assert (np.abs(got.numpy() - want) <= ulp).all()
    assert (got.numpy() == want).mean() > 0.99


def test_fused_erf_and_gelu_special_values():
    x = ember.tensor([float("nan"), 0.0, -0.0, 4.0, 100.0, -100.0, 1e-30, float("inf"),
                      -float("inf")])
    _, (e, g) = _replay(lambda x: (x.erf(), F.gelu(x)), x)
    with np.errstate(invalid="ignore"):
        assert_close(e, x.erf(), equal_nan=True)
        assert_close(g, F.gelu(x), equal_nan=True)
    assert np.signbit(e.numpy()[2])  # erf(-0.0) keeps the sign


def test_fused_gelu_forward_equals_eager():
    rng = np.random.default_rng(0)
    x = ember.from_numpy(rng.standard_normal((4, 33, 17)).astype(np.float32) * 3)

    def f(x):
        return F.gelu(x * 1.5) * x

    c, got = _replay(f, x)
    assert "Gelu" not in c.sources[0]        # the op became part of a kernel
    assert_close(got, f(x))


def test_gelu_with_a_backward_runs_eagers_kernels_bit_for_bit():
    # a gelu whose backward the graph needs keeps eager's one-pass kernels, forward and
    # backward (raw_backward._gelu): faster than the erf/exp ops fused, and eager's numbers
    rng = np.random.default_rng(0)
    x = ember.from_numpy(rng.standard_normal((4, 33, 17)).astype(np.float32) * 3)
    x.requires_grad_()

    def f(x):
        return F.gelu(x * 1.5) * x

    c, got = _replay(f, x)
    assert "# Gelu" in c.sources[0] and "Gelu backward" in c.sources[1]
    want = f(x)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    seed = ember.from_numpy(rng.standard_normal(want.shape).astype(np.float32))
    np.testing.assert_array_equal(ember.autograd.grad(got, x, seed)[0].numpy(),
                                  ember.autograd.grad(want, x, seed)[0].numpy())


@pytest.mark.parametrize("case", ["float64", "tanh"])
def test_erf_stays_on_numpy_where_the_kernel_is_not_exact(case):
    x = ember.randn(5, 7, dtype=ember.float64 if case == "float64" else ember.float32)

    def f(x):
        return F.gelu(x, approximate="tanh" if case == "tanh" else "none") + x.erf()

    c, got = _replay(f, x)
    assert "Gelu" in c.sources[0]
    assert ("Erf" in c.sources[0]) == (case == "float64")
    assert_close(got, f(x))


def test_fused_division_by_zero_gives_inf_like_numpy():
    x = ember.tensor([1.0, -1.0, 0.0, 2.0])
    y = ember.tensor([0.0, 0.0, 0.0, 4.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        _, got = _replay(lambda x, y: (x * 2) / y + 1, x, y)
        assert_close(got, (x * 2) / y + 1, equal_nan=True)
