"""ONNX translations of special functions (lgamma, digamma/polygamma(0), mvlgamma, erfinv, i0)
over their whole domains (poles, reflections, tails, infinities), and of vander, tensorinv,
tensorsolve, matrix_norm and as_strided (ember/onnx/_special.py)."""
from __future__ import annotations

import io

import numpy as np
import pytest

import ember

pytest.importorskip("onnx", reason="ember.onnx.export needs the optional onnx package")
pytest.importorskip("onnxruntime", reason="onnxruntime runs the exported models")

from onnx_roundtrip import check_roundtrip

INF, NAN = float("inf"), float("nan")


def _wide(dtype=ember.float32):
    vals = [-7.5, -3.2, -2.0, -1.0, -0.5, -1e-3, 0.0, 1e-4, 0.3, 0.5, 1.0, 1.5, 2.0, 3.7, 6.0,
            10.5, 33.0, 171.2, 1e4, INF, -INF, NAN]
    return ember.tensor(vals, dtype=dtype)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_lgamma_digamma_over_the_real_line(dtype):
    x = _wide(dtype)
    check_roundtrip(lambda x: (ember.lgamma(x), x.lgamma(), ember.digamma(x), x.digamma(),
                               ember.polygamma(0, x)), (x,))


def test_lgamma_of_integers_and_dynamic_batch():
    check_roundtrip(lambda x: ember.lgamma(x), (ember.tensor([[1, 2, 30], [0, -3, 7]]),),
                    dynamic_batch=True, run_args=(ember.tensor([[4, 5, 6]]),))


@pytest.mark.parametrize("p", [1, 2, 4])
def test_mvlgamma(p):
    x = ember.tensor([2.0, 3.5, 10.0, 40.0])
    check_roundtrip(lambda x: ember.mvlgamma(x, p=p), (x,))


def test_erfinv_central_tails_and_edges():
    x = ember.tensor([-1.0, -0.999999, -0.9, -0.3, 0.0, 1e-6, 0.2, 0.7, 0.97, 0.9999, 1.0,
                      1.5, -2.0, NAN])
    check_roundtrip(lambda x: (ember.erfinv(x), x.erfinv()), (x,))


def test_i0_series_and_asymptotic_ranges():
    x = ember.tensor([-40.0, -15.5, -3.0, 0.0, 0.1, 1.0, 7.0, 14.9, 15.0, 15.1, 30.0, 80.0])
    check_roundtrip(lambda x: ember.i0(x), (x,))
    check_roundtrip(lambda x: ember.i0(x), (ember.tensor([0.5, -2.5], dtype=ember.float64),))


def test_polygamma_of_higher_order_names_the_call():
    with pytest.raises(ember.onnx.UnsupportedOperatorError,
                       match=r"ember.polygamma \(this form of the call\); used by node"):
        ember.onnx.export(lambda x: ember.polygamma(1, x), (ember.rand(3) + 1,), io.BytesIO())


@pytest.mark.parametrize("n", [None, 2, 5])
def test_vander(n):
    x = ember.tensor([2.0, -1.5, 0.0])
    check_roundtrip(lambda x: ember.linalg.vander(x, N=n), (x,))
    check_roundtrip(lambda x: ember.linalg.vander(x, N=n), (ember.tensor([[3, -2], [1, 5]]),))


def test_tensorinv_and_tensorsolve():
    ember.manual_seed(0)
    a = ember.randn(4, 6, 8, 3) + 0.0
    a = (a.reshape(24, 24) + 8 * ember.eye(24)).reshape(4, 6, 8, 3)
    check_roundtrip(lambda a: ember.linalg.tensorinv(a, ind=2), (a,))
    bm = ember.randn(4, 6)
    check_roundtrip(lambda a, c: ember.linalg.tensorsolve(a, c), (a, bm))


@pytest.mark.parametrize("ord_", ["fro", 1, -1, INF, -INF])
@pytest.mark.parametrize("dim", [(-2, -1), (0, 2), (2, 0)])
def test_matrix_norm_orders_and_dims(ord_, dim):
    ember.manual_seed(1)
    x = ember.randn(3, 4, 5)
    check_roundtrip(lambda x: (ember.linalg.matrix_norm(x, ord_, dim),
                               ember.linalg.matrix_norm(x, ord=ord_, dim=dim, keepdim=True)),
                    (x,))


@pytest.mark.parametrize("args", [((2, 2), (1, 2)), ((3, 2), (2, 1), 1), ((2, 3, 2), (6, 1, 3)),
                                  ((4,), (0,), 5), ((), (), 7)])
def test_as_strided_windows(args):
    x = ember.arange(12.0).reshape(3, 4) * 1.5
    check_roundtrip(lambda x: ember.as_strided(x, *args), (x,))
    got = ember.as_strided(x, *args)
    ref = np.lib.stride_tricks.as_strided(
        x.numpy().reshape(-1)[args[2] if len(args) > 2 else 0:], args[0],
        [s * 4 for s in args[1]])
    np.testing.assert_array_equal(got.numpy(), ref)


def test_incomplete_gamma_series_fraction_and_edges():
    a = ember.tensor([0.0, 0.0, 5.0, 1e-3, 50.0, 150.0, 2.0, 2.0, 1.0, -1.0, 0.5, 3.0])
    x = ember.tensor([0.0, 2.0, 0.0, 0.5, 45.0, 170.0, INF, 30.0, 1.5, 1.0, -1.0, 2.9])
    check_roundtrip(lambda a, x: (ember.igamma(a, x), ember.igammac(a, x), a.igamma(x)),
                    (a, x))
