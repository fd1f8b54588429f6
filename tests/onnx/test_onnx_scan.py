"""ONNX translations of scans (cumprod, cummax/cummin, logcumsumexp), kron, diag_embed and
diagflat, angle, bit shifts and masked_scatter (ember/onnx/_scan.py): dynamic scan lengths,
NaN and tie rules, keyword forms and the integer edge cases the sweep's samples do not reach."""
from __future__ import annotations

import numpy as np
import pytest

import ember

pytest.importorskip("onnx", reason="ember.onnx.export needs the optional onnx package")
pytest.importorskip("onnxruntime", reason="onnxruntime runs the exported models")

from onnx_roundtrip import check_roundtrip


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scans_along_each_dim_with_a_dynamic_length(dim):
    ember.manual_seed(0)
    x = ember.randn(3, 4, 2)

    def fn(x):
        mx, imx = ember.cummax(x, dim)
        mn = ember.cummin(x, dim=dim)
        return (x.cumprod(dim), ember.logcumsumexp(x, dim), mx, imx, mn.values, mn.indices)
    # the first axis is dynamic: when dim == 0 the scan's own length varies
    check_roundtrip(fn, (x,), dynamic_batch=True, run_args=(ember.randn(5, 4, 2),))


def test_cummax_ties_and_nan_follow_torch():
    x = ember.tensor([[1.0, 3.0, 3.0, 2.0, float("nan"), 5.0, 0.0],
                      [2.0, 2.0, 1.0, 1.0, 0.0, 0.0, 4.0]])

    def fn(x):
        mx, mn = ember.cummax(x, 1), ember.cummin(x, 1)
        return mx[0], mx[1], mn[0], mn[1]
    check_roundtrip(fn, (x,))


def test_cummax_index_moves_to_a_later_nan_as_torch():
    # torch 2.13: cummax([1, 3, 3, 2, nan, 5, nan]).indices == [0, 1, 2, 2, 4, 4, 6] (and
    # cummin's == [0, 0, 0, 0, 4, 4, 6]); ember's eager op keeps 4 at the end
    import io

    import onnxruntime as ort
    nan = float("nan")
    x = ember.tensor([1.0, 3.0, 3.0, 2.0, nan, 5.0, nan])
    buf = io.BytesIO()
    ember.onnx.export(lambda x: (ember.cummax(x, 0)[1], ember.cummin(x, 0)[1]), (x,), buf)
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    imax, imin = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})
    assert imax.tolist() == [0, 1, 2, 2, 4, 4, 6]
    assert imin.tolist() == [0, 0, 0, 0, 4, 4, 6]


def test_integer_scans_and_cumprod_dtype():
    x = ember.tensor([[3, -1, 2], [0, 5, -4]])
    def fn(x):
        mx, mn = ember.cummax(x, 1), ember.cummin(x, 0)
        return mx[0], mx[1], mn[0], mn[1], x.cumprod(1), ember.cumprod(x, 0, dtype=ember.float64)
    check_roundtrip(fn, (x,))
    small = ember.tensor([[3, -1, 2], [0, 5, -4]], dtype=ember.int8)
    check_roundtrip(lambda x: (ember.cummax(x, 1).values, ember.diag_embed(x),
                               x.masked_scatter(x > 0, x)), (small,))


def test_logcumsumexp_with_infinities():
    x = ember.tensor([float("-inf"), 0.0, float("inf"), 1.0, float("-inf")])
    check_roundtrip(lambda x: ember.logcumsumexp(x, 0), (x,))


@pytest.mark.parametrize("shapes", [((2, 3), (4, 1)), ((3,), (2, 2)), ((2, 1, 3), (2,)),
                                    ((2, 2), ())])
def test_kron_shapes(shapes):
    ember.manual_seed(1)
    a, c = ember.randn(*shapes[0]), ember.randn(*shapes[1])
    check_roundtrip(lambda a, c: ember.kron(a, c), (a, c))


def test_kron_dynamic_batch_and_integers():
    check_roundtrip(lambda a, c: ember.kron(a, c), (ember.randn(2, 3), ember.randn(2, 2)),
                    dynamic_batch=True, run_args=(ember.randn(4, 3), ember.randn(2, 2)))
    check_roundtrip(lambda a, c: ember.kron(a, c), (ember.arange(4).reshape(2, 2),
                                                   ember.tensor([[1, -1]])))


@pytest.mark.parametrize("kw", [{}, {"offset": 1}, {"offset": -2}, {"dim1": 0, "dim2": 2},
                                {"offset": 1, "dim1": -1, "dim2": 0}])
def test_diag_embed_forms(kw):
    x = ember.randn(2, 3)
    check_roundtrip(lambda x: ember.diag_embed(x, **kw), (x,))


def test_diag_embed_keeps_infinities_off_the_diagonal_zero():
    x = ember.tensor([float("inf"), 1.0])
    check_roundtrip(lambda x: (ember.diag_embed(x), ember.diagflat(x, 1)), (x,))


def test_diagflat_flattens_and_dynamic_batch_of_diag_embed():
    check_roundtrip(lambda x: (ember.diagflat(x), ember.diagflat(x, offset=-1)),
                    (ember.randn(2, 2),))
    check_roundtrip(lambda x: ember.diag_embed(x), (ember.randn(2, 3),), dynamic_batch=True,
                    run_args=(ember.randn(4, 3),))


def test_angle_of_reals():
    x = ember.tensor([-2.0, -0.0, 0.0, 3.0, float("nan"), float("-inf")])
    check_roundtrip(lambda x: (ember.angle(x), x.angle()), (x,))
    check_roundtrip(lambda x: ember.angle(x), (ember.tensor([-1, 0, 2]),))


@pytest.mark.parametrize("dtype", [ember.int8, ember.int16, ember.int32, ember.int64,
                                   ember.uint8])
def test_bit_shifts_in_and_out_of_range(dtype):
    bits = 8 * ember.tensor(0, dtype=dtype).element_size()
    lo = 0 if dtype == ember.uint8 else -100
    x = ember.tensor([lo, -5 if lo else 5, 7, 100, 1, -1 if lo else 255, 3], dtype=dtype)
    s = ember.tensor([1, 2, bits - 1, bits, bits + 3, 0, 3], dtype=dtype)
    check_roundtrip(lambda x, s: (ember.bitwise_left_shift(x, s), ember.bitwise_right_shift(x, s),
                                  x << s, x >> s), (x, s))


def test_signed_shift_by_a_negative_amount():
    x = ember.tensor([-9, 9, -1], dtype=ember.int32)
    s = ember.tensor([-1, -3, 2], dtype=ember.int32)
    check_roundtrip(lambda x, s: (x << s, x >> s), (x, s))


def test_masked_scatter_broadcast_mask_and_dynamic_batch():
    ember.manual_seed(2)
    x, src = ember.randn(3, 4), ember.randn(20)
    mask = ember.tensor([True, False, True, True])
    check_roundtrip(lambda x, m, s: (x.masked_scatter(m, s), ember.masked_scatter(x, m, s)),
                    (x, mask, src), dynamic_batch=True,
                    run_args=(ember.randn(5, 4), mask, src))
    m2 = ember.randn(3, 4) > 0
    check_roundtrip(lambda x, m, s: x.masked_scatter(m, s), (x, m2, src))
    got = ember.zeros(2, 2).masked_scatter(ember.tensor([[False, True], [True, False]]),
                                           ember.tensor([5.0, 6.0, 7.0]))
    np.testing.assert_array_equal(got.numpy(), [[0.0, 5.0], [6.0, 0.0]])
