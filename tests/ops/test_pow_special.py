"""pow with the scalar exponents computed without libm's pow (NOTE [Special scalar exponents]),
and ember's floating-point results staying silent (NOTE [NumPy floating-point warnings])."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

EXPONENTS = [2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 1.5]
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e30, -1e30, 1.0, -1.0]


def _values(dt):
    rng = np.random.default_rng(1)
    return np.concatenate([rng.standard_normal(300) * 3, SPECIAL]).astype(dt)


@pytest.mark.parity
@pytest.mark.parametrize("exponent", EXPONENTS)
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_scalar_exponent_matches_torch(exponent, dt):
    torch = pytest.importorskip("torch")
    v = _values(dt)
    ours = ember.pow(ember.from_numpy(v), exponent).numpy()
    theirs = torch.pow(torch.from_numpy(v), exponent).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    fin = ~np.isnan(theirs)
    np.testing.assert_array_equal(np.signbit(ours[fin]), np.signbit(theirs[fin]))
    np.testing.assert_array_equal(np.isinf(ours[fin]), np.isinf(theirs[fin]))
    ok = fin & np.isfinite(theirs)
    np.testing.assert_allclose(ours[ok], theirs[ok], rtol=4 * np.finfo(dt).eps, atol=0)


@pytest.mark.parametrize("exponent", [2.0, 3.0, -1.0, -2.0])
def test_scalar_exponent_gradients(exponent):
    x = ember.from_numpy(np.random.default_rng(2).uniform(0.5, 2.0, (9, 10)))
    x.requires_grad_(True)
    assert gradcheck(lambda t: ember.pow(t, exponent), (x,))
    assert gradcheck(lambda t: t ** exponent, (x,))


def test_special_path_keeps_shape_dtype_and_noncontiguous_inputs():
    base = ember.randn(16, 12)
    x = base.t()                                   # non-contiguous
    np.testing.assert_allclose((x ** 3).numpy(), np.power(x.numpy(), 3.0), rtol=2e-6)
    assert (x ** 2).shape == (12, 16) and (x ** 2).dtype == ember.float32
    assert ember.equal(ember.arange(100) ** 2, ember.arange(100) * ember.arange(100))  # int
    e = ember.empty(0, 3) ** 3.0
    assert e.shape == (0, 3)


def test_float_results_do_not_warn_but_user_numpy_does():
    # a fresh process: pytest discards filters that imports install during collection
    code = textwrap.dedent("""
        import warnings
        warnings.simplefilter("always")      # show every warning, as -W always would
        import ember, numpy as np
        big = ember.tensor([1e30, -1.0, 0.0])
        r = (big * big, big ** 0.5, ember.log(big), big / ember.zeros(3), big.exp())
        assert bool(ember.isinf(r[0][0])) and bool(ember.isnan(r[1][1]))
        # reductions reach NumPy's own wrappers (np.sum, ndarray.prod): silent as well
        huge = ember.tensor([3e38, 3e38])
        s = (huge.sum(), huge.prod(), huge.mean(), huge.view(1, 2).sum(1),
             ember.tensor([float("inf"), -float("inf")]).sum())
        assert [float(v.reshape(-1)[0]) for v in s[:4]] == [float("inf")] * 4
        assert bool(ember.isnan(s[4]))
        print("ember done", flush=True)
        np.array([1e30], np.float32) * np.float32(1e30)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONWARNINGS": "always"})
    assert proc.returncode == 0, proc.stderr
    ember_part, _, user_part = proc.stderr.partition("<string>")
    assert "encountered" not in ember_part, proc.stderr
    assert "overflow encountered in multiply" in user_part, proc.stderr
