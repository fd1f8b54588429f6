"""ember.ops._kernels.vmath (vectorisable exp / sigmoid / tanh) and the fused softmax kernels,
against NumPy (accuracy in ulp, edge values) and the composite formulas."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember.ops._kernels import softmax as ksoftmax
from ember.ops._kernels import vmath

EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e-45, 88.72, 88.73, -87.3, -103.9,
         -104.0, -200.0, 709.78, 709.79, -745.1, -745.2, -800.0, 800.0, 9.0, -9.0, 19.0, 20.0]
# max distance from NumPy in units in the last place (NumPy itself is within ~1 ulp of exact)
MAX_ULP = {np.float32: 3, np.float64: 4}


def _ref(name, x):
    """The exact-as-possible reference: long double arithmetic rounded to x's dtype."""
    wide = x.astype(np.longdouble)
    with np.errstate(over="ignore", under="ignore"):
        if name == "exp":
            r = np.exp(wide)
        elif name == "tanh":
            r = np.tanh(wide)
        else:
            r = 1 / (1 + np.exp(-wide))
        return r.astype(x.dtype)


def _ulps(y, r):
    fin = np.isfinite(r)
    diff = np.abs(y[fin].astype(np.float64) - r[fin].astype(np.float64))
    return diff / np.spacing(np.abs(r[fin])).astype(np.float64)


def _check(name, x):
    with np.errstate(over="ignore", under="ignore"):
        y = getattr(vmath, name)(x)
    r = _ref(name, x)
    assert y.dtype == x.dtype and y.shape == x.shape
    assert np.array_equal(np.isnan(y), np.isnan(r))
    keep = ~np.isnan(r)
    assert np.array_equal(np.signbit(y[keep]), np.signbit(r[keep]))  # -0.0 stays -0.0
    inf = np.isinf(r)
    assert np.array_equal(y[inf], r[inf])  # overflow to inf exactly where NumPy overflows
    if np.isfinite(r).any():
        assert _ulps(y, r).max() <= MAX_ULP[x.dtype.type]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["exp", "sigmoid", "tanh"])
def test_vmath_matches_numpy_wide_range_and_edges(rng, name, dtype):
    lo, hi = (-110, 95) if dtype == np.float32 else (-760, 720)
    x = np.concatenate([rng.uniform(lo, hi, 20000), rng.uniform(-1, 1, 20000),
                        rng.uniform(-1e-3, 1e-3, 2000), EDGES]).astype(dtype)
    _check(name, x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vexp_denormal_results_underflow_gradually(dtype):
    # results below the smallest normal: NumPy rounds once into the denormals, and so must we
    tiny = np.finfo(dtype).tiny
    x = np.log(np.geomspace(tiny * 1e-6, tiny, 500, dtype=np.float64)).astype(dtype)
    with np.errstate(under="ignore"):
        y, r = vmath.exp(x), _ref("exp", x)
    assert (y < tiny).any() and (y > 0).any()
    np.testing.assert_array_max_ulp(y, r, maxulp=2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vmath_non_contiguous_and_other_dtypes(rng, dtype):
    x = rng.standard_normal((6, 8)).astype(dtype)[:, ::2]
    np.testing.assert_allclose(vmath.exp(x), np.exp(x), rtol=1e-6)
    h = x.astype(np.float16)  # not a kernel dtype: NumPy's ufunc
    assert vmath.tanh(h).dtype == np.float16
    np.testing.assert_allclose(vmath.tanh(h), np.tanh(h))


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(st.sampled_from([np.float32, np.float64]), st.integers(0, 40),
                  elements=st.floats(-1e4, 1e4, width=32)))
def test_vmath_hypothesis(x):
    for name in ("exp", "sigmoid", "tanh"):
        _check(name, x)


def _softmax_ref(x, log):
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    m = np.where(m == -np.inf, 0, m)
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.exp(x - m)
        s = e.sum(axis=1, keepdims=True)
        return (x - m) - np.log(s) if log else e / s


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (5, 1024), (64, 33)])
def test_softmax_rows_match_reference(rng, shape, dtype, log):
    x = (rng.standard_normal(shape) * 20).astype(dtype)
    out = ksoftmax.softmax_rows(x, np.empty_like(x), log)
    tol = {"rtol": 2e-6, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-13, "atol": 1e-13}
    np.testing.assert_allclose(out, _softmax_ref(x, log), **tol)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_rows_edge_rows(dtype, log):
    inf, nan = np.inf, np.nan
    x = np.array([[-inf, -inf, -inf], [nan, 0, 1], [inf, 0, 1], [-inf, 0, 1], [1e4, 0, -1e4]],
                 dtype)
    out = ksoftmax.softmax_rows(x, np.empty_like(x), log)
    np.testing.assert_allclose(out, _softmax_ref(x, log).astype(dtype), rtol=1e-6)
    assert np.isnan(out[:3]).all()  # all -inf, NaN or +inf in a row: NaN, as in torch


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_rows_backward_matches_formula(rng, dtype, log):
    x = rng.standard_normal((9, 130)).astype(dtype)
    y = ksoftmax.softmax_rows(x, np.empty_like(x), log)
    g = rng.standard_normal(x.shape).astype(dtype)
    gx = ksoftmax.softmax_rows_backward(g, y, np.empty_like(x), log)
    yd, gd = y.astype(np.float64), g.astype(np.float64)
    if log:
        ref = gd - np.exp(yd) * gd.sum(axis=1, keepdims=True)
    else:
        ref = yd * (gd - (gd * yd).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(gx, ref, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-6)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_fused_backward_equals_recorded_backward(rng, fn, dim):
    # the numba backward (no create_graph) and the ember-op one (create_graph) agree
    a = rng.standard_normal((4, 6, 5))
    w = ember.tensor(rng.standard_normal((4, 6, 5)))
    grads = []
    for create_graph in (False, True):
        x = ember.tensor(a, requires_grad=True)
        loss = (getattr(ember.nn.functional, fn)(x, dim=dim) * w).sum()
        (gx,) = ember.autograd.grad(loss, x, create_graph=create_graph)
        grads.append(gx.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-14)


def _tanh_loop(x, out):
    for t in range(out.size):
        out[t] = vmath.vtanh(x[t])


def _tanh_loop_wide(x, out):
    vmath.wide_vectors()
    for t in range(out.size):
        out[t] = vmath.vtanh(x[t])


def test_wide_vectors_marks_the_kernel_and_keeps_its_values(rng):
    # NOTE [512-bit vectors]: the attribute lands on the calling kernel only, and an elementwise
    # loop gives the same bits whatever the vector width (odd length: the tail runs too)
    import numba
    narrow = numba.njit(error_model="numpy")(_tanh_loop)
    wide = numba.njit(error_model="numpy")(_tanh_loop_wide)
    x = (rng.standard_normal(1003) * 4).astype(np.float32)
    out_n, out_w = np.empty_like(x), np.empty_like(x)
    narrow(x, out_n)
    wide(x, out_w)
    np.testing.assert_array_equal(out_w, out_n)
    np.testing.assert_allclose(out_w, np.tanh(x), rtol=1e-6, atol=1e-7)
    (ir_wide,) = wide.inspect_llvm().values()
    (ir_narrow,) = narrow.inspect_llvm().values()
    assert '"prefer-vector-width"="512"' in ir_wide
    assert "prefer-vector-width" not in ir_narrow
