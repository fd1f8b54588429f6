"""ONNX translations of quantile/nanquantile, nanmedian, mode, unique/unique_consecutive,
bincount and histc (ember/onnx/_stats.py): interpolation modes, NaN rules, data-dependent
result lengths (re-run on other data than the export's), keyword forms."""
from __future__ import annotations

import io

import numpy as np
import onnxruntime as ort
import pytest

import ember

pytest.importorskip("onnx", reason="ember.onnx.export needs the optional onnx package")

from onnx_roundtrip import check_roundtrip

NAN = float("nan")


def _session(fn, args):
    buf = io.BytesIO()
    ember.onnx.export(fn, args, buf)
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    return lambda *xs: sess.run(None, {i.name: x.numpy() for i, x in
                                       zip(sess.get_inputs(), xs, strict=True)})


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_quantile_interpolations_and_dims(interpolation, dim):
    ember.manual_seed(0)
    x = ember.randn(4, 5)
    check_roundtrip(lambda x: (ember.quantile(x, 0.3, dim, interpolation=interpolation),
                               x.quantile(0.5, dim=dim, keepdim=True,
                                          interpolation=interpolation),
                               ember.nanquantile(x, 0.9, dim, interpolation=interpolation)),
                    (x,))


def test_quantile_with_a_tensor_of_q_and_dynamic_batch():
    ember.manual_seed(1)
    x, q = ember.randn(3, 6), ember.tensor([0.0, 0.25, 0.5, 1.0])
    check_roundtrip(lambda x, q: (ember.quantile(x, q, dim=1), ember.quantile(x, q),
                                  ember.nanquantile(x, q, dim=1, keepdim=True)), (x, q),
                    dynamic_batch=True, run_args=(ember.randn(5, 6), q))


def test_quantile_nan_rules():
    x = ember.tensor([[1.0, NAN, 3.0, 4.0], [NAN, NAN, NAN, NAN], [2.0, 1.0, 0.0, 5.0]])
    check_roundtrip(lambda x: (ember.quantile(x, 0.4, dim=1), ember.nanquantile(x, 0.4, dim=1),
                               ember.nanmedian(x)), (x,))


def test_nanmedian_forms():
    x = ember.tensor([[1.0, NAN, 3.0, 4.0], [NAN, 2.0, NAN, 7.0], [2.0, 1.0, 0.0, 5.0]])
    check_roundtrip(lambda x: (ember.nanmedian(x), ember.nanmedian(x, 1)[0],
                               ember.nanmedian(x, 1)[1], x.nanmedian(dim=0, keepdim=True)[0],
                               x.nanmedian(dim=0, keepdim=True)[1]), (x,))


def test_mode_ties_pick_the_smallest_value_at_its_last_index():
    x = ember.tensor([[2.0, 1.0, 1.0, 2.0, 3.0], [5.0, 4.0, 4.0, 5.0, 5.0]])
    check_roundtrip(lambda x: (ember.mode(x)[0], ember.mode(x)[1], x.mode(0, True)[0],
                               x.mode(0, True)[1]), (x,))
    check_roundtrip(lambda x: (ember.mode(x, 1)[0], ember.mode(x, 1)[1]),
                    (ember.tensor([[3, 3, 1, 1, 2]], dtype=ember.int32),))


def test_unique_sorted_with_inverse_and_counts_on_new_data():
    x = ember.tensor([[3.0, 1.0, 3.0], [2.0, 1.0, 1.0]])
    fn = lambda x: ember.unique(x, return_inverse=True, return_counts=True)  # noqa: E731
    check_roundtrip(fn, (x,))
    run = _session(fn, (x,))
    y = ember.tensor([[5.0, 5.0, 5.0], [-1.0, 0.0, 5.0]])      # a different number of values
    for got, ref in zip(run(y), fn(y), strict=True):
        np.testing.assert_array_equal(got, ref.numpy())
    check_roundtrip(lambda x: x.unique(), (ember.tensor([4, -2, 4, 0]),))


def test_unique_consecutive_runs_on_new_data():
    x = ember.tensor([1.0, 1.0, 2.0, 2.0, 3.0, 1.0, 1.0, 2.0])
    fn = lambda x: ember.unique_consecutive(x, return_inverse=True,  # noqa: E731
                                            return_counts=True)
    check_roundtrip(fn, (x,))
    run = _session(fn, (x,))
    y = ember.tensor([7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 0.0])
    for got, ref in zip(run(y), fn(y), strict=True):
        np.testing.assert_array_equal(got, ref.numpy())
    check_roundtrip(lambda x: ember.unique_consecutive(x), (ember.tensor([[1, 1], [2, 1]]),))


def test_bincount_weights_minlength_and_new_data():
    x = ember.tensor([1, 4, 1, 0, 4, 4])
    w = ember.tensor([0.5, 1.0, 2.0, -1.0, 0.25, 3.0])
    check_roundtrip(lambda x, w: (ember.bincount(x), ember.bincount(x, w),
                                  x.bincount(minlength=9), ember.bincount(x, weights=w,
                                                                           minlength=2)), (x, w))
    fn = lambda x: ember.bincount(x, minlength=3)  # noqa: E731
    run = _session(fn, (x,))
    for y in (ember.tensor([7, 7, 0, 2, 2, 9]), ember.tensor([0, 1, 0, 1, 0, 1])):
        np.testing.assert_array_equal(run(y)[0], fn(y).numpy())


@pytest.mark.parametrize("kw", [{}, {"bins": 4}, {"bins": 7, "min": -1.0, "max": 1.0},
                                {"bins": 3, "min": 0.0, "max": 0.5}])
def test_histc_ranges(kw):
    ember.manual_seed(2)
    x = ember.randn(3, 20)
    check_roundtrip(lambda x: ember.histc(x, **kw), (x,))


def test_histc_edges_constant_input_and_dynamic_batch():
    x = ember.tensor([0.0, 0.25, 0.5, 0.75, 1.0, 1.0, -0.5, 2.0])
    check_roundtrip(lambda x: (ember.histc(x, bins=4, min=0, max=1), x.histc(4)), (x,))
    check_roundtrip(lambda x: ember.histc(x, bins=3), (ember.full((5,), 2.0),))
    check_roundtrip(lambda x: ember.histc(x, bins=5), (ember.randn(4, 3),), dynamic_batch=True,
                    run_args=(ember.randn(7, 3),))
