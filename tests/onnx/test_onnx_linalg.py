"""ONNX translations of the linear-algebra solvers and factorizations (ember/onnx/_linalg.py):
batched and dynamic-batch forms, keyword forms, and the LAPACK conventions (pivots, info, the
sign of slogdet) that the op-table sweep's single samples do not reach."""
from __future__ import annotations

import io

import numpy as np
import pytest

import ember

pytest.importorskip("onnx", reason="ember.onnx.export needs the optional onnx package")
pytest.importorskip("onnxruntime", reason="onnxruntime runs the exported models")

from onnx_roundtrip import check_roundtrip

L = ember.linalg


def _wellcond(*shape, seed=0):
    ember.manual_seed(seed)
    n = shape[-1]
    return ember.randn(*shape) + n * ember.eye(n)


def _spd(*shape, seed=0):
    a = _wellcond(*shape, seed=seed)
    return a @ a.mT + ember.eye(shape[-1])


def test_inv_and_solve_with_dynamic_batch():
    a, bm = _wellcond(2, 4, 4), ember.randn(4, 3)     # B broadcast over A's batch
    check_roundtrip(lambda a, b: (L.inv(a), L.solve(a, b), a.inverse()), (a, bm),
                    dynamic_batch=True, run_args=(_wellcond(5, 4, 4, seed=1), bm))


def test_solve_vector_right_hand_side_broadcast_and_left_false():
    a = _wellcond(3, 3)
    check_roundtrip(lambda a, v: L.solve(a, v), (a, ember.randn(3)))
    check_roundtrip(lambda a, v: L.solve(a, v), (a, ember.randn(2, 3, 3)))   # B batch only
    check_roundtrip(lambda a, v: L.solve(a, v, left=False), (a, ember.randn(2, 3)))


def test_inv_needs_pivoting():
    # a zero in the corner: elimination without row swaps would divide by zero
    a = ember.tensor([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]])
    check_roundtrip(lambda a: L.inv(a), (a,))


def test_slogdet_sign_and_singular_matrix():
    a = ember.tensor([[[0.0, 1.0], [1.0, 0.0]], [[2.0, 1.0], [1.0, 3.0]],
                      [[1.0, 2.0], [2.0, 4.0]]])
    check_roundtrip(lambda a: L.slogdet(a), (a,))
    sign, logabs = L.slogdet(a)
    assert sign.tolist() == [-1.0, 1.0, 0.0]
    check_roundtrip(lambda a: ember.logdet(a[1:]), (a,))


def test_inv_ex_and_solve_ex_report_a_singular_matrix_as_lapack():
    a = ember.tensor([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 1.0]]])
    check_roundtrip(lambda a: L.inv_ex(a).info, (a,))
    assert L.inv_ex(a).info.tolist() == [2, 0]


def test_lu_family_batched():
    a = ember.randn(2, 4, 4)
    check_roundtrip(lambda a: L.lu_factor(a), (a,), dynamic_batch=True,
                    run_args=(ember.randn(3, 4, 4),))
    check_roundtrip(lambda a: L.lu(a), (a,))
    check_roundtrip(lambda a: L.lu(a), (ember.randn(3, 5),))       # wide
    check_roundtrip(lambda a: L.lu(a), (ember.randn(5, 3),))       # tall
    lu, piv = L.lu_factor(a)
    check_roundtrip(lambda lu, piv: ember.lu_unpack(lu, piv), (lu, piv))
    bm = ember.randn(2, 4, 2)
    check_roundtrip(lambda lu, piv, b: L.lu_solve(lu, piv, b), (lu, piv, bm))
    check_roundtrip(lambda lu, piv, b: ember.lu_solve(b, lu, piv), (lu, piv, bm))


def test_cholesky_family_upper_and_batched():
    a = _spd(2, 4, 4)
    check_roundtrip(lambda a: (L.cholesky(a), L.cholesky(a, upper=True),
                               ember.cholesky(a, True)), (a,), dynamic_batch=True,
                    run_args=(_spd(3, 4, 4, seed=2),))
    check_roundtrip(lambda a: L.cholesky_ex(a), (a,))
    u = L.cholesky(a, upper=True)
    bm = ember.randn(2, 4, 3)
    check_roundtrip(lambda b, u: (ember.cholesky_solve(b, u, upper=True),
                                  ember.cholesky_inverse(u, upper=True)), (bm, u))


def test_cholesky_ex_info_on_a_matrix_that_is_not_positive_definite():
    a = ember.tensor([[[4.0, 2.0], [2.0, -1.0]], [[2.0, 0.0], [0.0, 3.0]]])
    check_roundtrip(lambda a: L.cholesky_ex(a).info, (a,))
    assert L.cholesky_ex(a).info.tolist() == [2, 0]


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_forms(upper, left):
    a = _wellcond(2, 3, 3)
    bm = ember.randn(2, 3, 3)
    check_roundtrip(lambda a, b: (L.solve_triangular(a, b, upper=upper, left=left),
                                  L.solve_triangular(a, b, upper=upper, left=left,
                                                     unitriangular=True)), (a, bm))


def test_triangular_solve_transpose_returns_the_coefficient():
    a, bm = _wellcond(3, 3).triu(), ember.randn(3, 2)
    check_roundtrip(lambda b, a: ember.triangular_solve(b, a, transpose=True), (bm, a))


def test_lu_solve_adjoint_names_the_call():
    lu, piv = L.lu_factor(_wellcond(3, 3))
    with pytest.raises(ember.onnx.UnsupportedOperatorError,
                       match=r"ember.linalg.lu_solve \(this form of the call\); used by node"):
        ember.onnx.export(lambda lu, piv, b: L.lu_solve(lu, piv, b, adjoint=True),
                          (lu, piv, ember.randn(3, 2)), io.BytesIO())


# ----------------------------------------------------------------------------- QR
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 4)])
def test_qr_modes_match_lapack_signs(shape):
    ember.manual_seed(3)
    a = ember.randn(*shape)
    check_roundtrip(lambda a: (L.qr(a)[0], L.qr(a)[1], L.qr(a, mode="complete")[0],
                               L.qr(a, mode="complete")[1], ember.qr(a, some=False)[0]), (a,))


def test_geqrf_and_householder_product_with_dynamic_batch():
    ember.manual_seed(4)
    a = ember.randn(2, 5, 3)
    check_roundtrip(lambda a: (ember.geqrf(a)[0], ember.geqrf(a)[1]), (a,), dynamic_batch=True,
                    run_args=(ember.randn(4, 5, 3),))
    h, tau = ember.geqrf(a)
    check_roundtrip(lambda h, t: (L.householder_product(h, t), ember.orgqr(h, t)), (h, tau))


def test_geqrf_of_a_column_already_reduced_has_zero_tau():
    a = ember.tensor([[2.0, 1.0], [0.0, 3.0], [0.0, -1.0]])
    check_roundtrip(lambda a: (ember.geqrf(a)[0], ember.geqrf(a)[1], L.qr(a)[0]), (a,))
    assert ember.geqrf(a)[1][0].item() == 0.0


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_sides_and_transposes(left, transpose):
    ember.manual_seed(5)
    h, tau = ember.geqrf(ember.randn(4, 3))
    c = ember.randn(4, 2) if left else ember.randn(2, 4)
    check_roundtrip(lambda h, t, c: ember.ormqr(h, t, c, left=left, transpose=transpose),
                    (h, tau, c))


# ----------------------------------------------------------------------------- spectral
def test_eigvalsh_both_triangles_repeated_eigenvalues_and_dynamic_batch():
    a = _spd(2, 4, 4)
    check_roundtrip(lambda a: (L.eigvalsh(a), L.eigvalsh(a, UPLO="U")), (a,),
                    dynamic_batch=True, run_args=(_spd(3, 4, 4, seed=7),))
    # only one triangle is read: garbage in the other must not matter
    lower = ember.tensor([[2.0, 99.0, -5.0], [1.0, 2.0, 7.0], [0.0, 1.0, 2.0]])
    check_roundtrip(lambda a: (L.eigvalsh(a), L.eigvalsh(a, "U")), (lower,))
    check_roundtrip(lambda a: L.eigvalsh(a), (ember.eye(3) * 2.0,))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_singular_values_norms_and_condition(shape):
    ember.manual_seed(8)
    a = ember.randn(*shape)
    check_roundtrip(lambda a: (L.svdvals(a), ember.nuclear_norm(a), L.matrix_norm(a, 2),
                               L.matrix_norm(a, -2), L.matrix_norm(a, "nuc", keepdim=True),
                               L.cond(a), L.cond(a, -2)), (a,))


def test_singular_values_batched_with_dynamic_batch():
    ember.manual_seed(11)
    check_roundtrip(lambda a: L.svdvals(a), (ember.randn(2, 4, 4),), dynamic_batch=True,
                    run_args=(ember.randn(3, 4, 4),))


def test_cond_frobenius_and_nuclear_norm_over_other_dims():
    ember.manual_seed(9)
    check_roundtrip(lambda a: L.cond(a, "fro"), (_wellcond(2, 3, 3),))
    x = ember.randn(3, 2, 4)
    check_roundtrip(lambda x: (ember.nuclear_norm(x, dim=(0, 2)),
                               ember.nuclear_norm(x, (2, 0), keepdim=True)), (x,))


def test_matrix_rank_and_pinv_of_rank_deficient_matrices():
    ember.manual_seed(10)
    u, v = ember.randn(2, 5, 2), ember.randn(2, 2, 4)
    a = u @ v                                  # rank 2, 5 x 4
    check_roundtrip(lambda a: (L.matrix_rank(a), L.matrix_rank(a, atol=1.0, rtol=0.0),
                               L.pinv(a), ember.pinverse(a[0], rcond=1e-6)), (a,))
    assert L.matrix_rank(a).tolist() == [2, 2]
    check_roundtrip(lambda a: L.pinv(a), (ember.randn(3, 5),))          # wide, full rank


def test_eigh_eigenvectors_stay_an_error_naming_the_call():
    with pytest.raises(ember.onnx.UnsupportedOperatorError,
                       match=r"no ONNX translation for ember\.linalg\.eigh; used by node"):
        ember.onnx.export(lambda a: L.eigh(a)[1], (_spd(3, 3),), io.BytesIO())


def test_matrix_exp_over_norms_with_dynamic_batch():
    ember.manual_seed(12)
    a = ember.stack([ember.zeros(3, 3), ember.randn(3, 3) * 1e-3, ember.randn(3, 3),
                     ember.randn(3, 3) * 4.0, ember.tensor([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0],
                                                            [0.0, 0.0, 0.0]])])
    check_roundtrip(lambda a: (L.matrix_exp(a), ember.matrix_exp(a), a.matrix_exp()), (a,),
                    dynamic_batch=True, run_args=(a[1:4],))
    # rotation generator: exp gives cos/sin exactly
    t = ember.tensor([[0.0, -2.5], [2.5, 0.0]], dtype=ember.float64)
    check_roundtrip(lambda t: L.matrix_exp(t), (t,))


@pytest.mark.parametrize("opset", [17, 21])
def test_new_translations_at_the_oldest_and_newest_opset(opset):
    # opset 17 takes the reduction axes as an attribute (but ReduceSum's as an input)
    import onnx
    import onnxruntime as ort
    ember.manual_seed(13)
    a = ember.randn(4, 3)

    def fn(a):
        return (ember.nuclear_norm(a), L.matrix_rank(a), L.slogdet(a[:3])[1],
                ember.cummax(a, 0)[0], ember.mode(a)[0], ember.nanmedian(a, 1)[0],
                L.inv_ex(a[:3])[1], ember.histc(a, 4))
    buf = io.BytesIO()
    ember.onnx.export(fn, (a,), buf, opset_version=opset)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    assert proto.opset_import[0].version == opset
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {sess.get_inputs()[0].name: a.numpy()})
    for g, r in zip(got, fn(a), strict=True):
        np.testing.assert_allclose(g, r.numpy(), rtol=1e-5, atol=1e-5)
