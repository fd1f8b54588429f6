"""Products (matmul, mm, bmm, mv, dot, outer, addmm family, einsum, tensordot): shape and dtype
errors, batching, low-precision dtypes, and regression tests for fixed bugs."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


@pytest.mark.parametrize("call,match", [
    (lambda: ember.ones(2, 3) @ ember.ones(4, 2), r"matmul.*\(2x3 and 4x2\)"),
    (lambda: ember.ones(3) @ ember.ones(4), r"matmul.*\(3 and 4\)|dot.*\[3\].*\[4\]"),
    (lambda: ember.ones(2, 2, 3) @ ember.ones(3, 3, 2), r"matmul: batch dimensions.*\[2, 2, 3\]"),
    (lambda: ember.ones(()) @ ember.ones(3), "matmul.*at least 1D.*0D"),
    (lambda: ember.mm(ember.ones(2, 3), ember.ones(4, 2)), r"mm: .*\(2x3 and 4x2\)"),
    (lambda: ember.mm(ember.ones(3), ember.ones(3, 2)), r"mm: expected 2-D.*\[3\]"),
    (lambda: ember.bmm(ember.ones(2, 1, 3), ember.ones(3, 3, 1)), "bmm.*batches.*2 and 3"),
    (lambda: ember.bmm(ember.ones(2, 1, 3), ember.ones(2, 4, 1)),
     r"bmm.*\[2, 3\] but got: \[2, 4\]"),
    (lambda: ember.bmm(ember.ones(2, 3), ember.ones(3, 2)), r"bmm.*3D.*\[2, 3\]"),
    (lambda: ember.mv(ember.ones(2, 3), ember.ones(4)), r"mv: size mismatch.*2x3.*vec \(4\)"),
    (lambda: ember.dot(ember.ones(3), ember.ones(4)), r"dot: inconsistent tensor size.*\[3\]"),
    (lambda: ember.dot(ember.ones(2, 2), ember.ones(2)), "dot: 1D tensors expected"),
    (lambda: ember.einsum("ij,jk->ik", ember.ones(2, 3), ember.ones(4, 2)),
     "einsum.*subscript 'j' has size 3 and 4"),
    (lambda: ember.einsum("ij->i", ember.ones(2)), "einsum.*number of subscripts"),
    (lambda: ember.tensordot(ember.ones(2, 3), ember.ones(4, 2), 1), "tensordot.*3.*4"),
])
def test_shape_errors_name_op_and_shapes(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


@pytest.mark.parametrize("call,match", [
    (lambda: ember.ones(2, 3) @ ember.ones(3, 2, dtype=ember.float64),
     "matmul.*same dtype.*float32 != ember.float64"),
    (lambda: ember.mm(ember.ones(2, 3, dtype=ember.int64), ember.ones(3, 2)),
     "same dtype.*int64.*float32"),
    (lambda: ember.dot(ember.ones(3), ember.ones(3, dtype=ember.float64)), "dot.*same dtype"),
    (lambda: ember.einsum("i,i", ember.ones(3), ember.ones(3, dtype=ember.float64)),
     "einsum.*same dtype"),
])
def test_mixed_dtypes_raise(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


def test_matmul_requires_tensors():
    with pytest.raises(TypeError, match="matmul.*'other' must be Tensor"):
        ember.matmul(ember.ones(2, 2), [[1.0, 0.0], [0.0, 1.0]])


@pytest.mark.parity
@pytest.mark.parametrize("call", [
    lambda L: L.ones(2, 3) @ L.ones(4, 2), lambda L: L.mm(L.ones(2, 3), L.ones(4, 2)),
    lambda L: L.bmm(L.ones(2, 1, 3), L.ones(3, 3, 1)),
    lambda L: L.ones(2, 3) @ L.ones(3, 2, dtype=L.float64), lambda L: L.ones(()) @ L.ones(3),
    lambda L: L.dot(L.ones(3), L.ones(4)), lambda L: L.mv(L.ones(2, 3), L.ones(4)),
    lambda L: L.matmul(L.ones(2, 2, 3), L.ones(3, 3, 2)),
])
def test_error_types_match_torch(call):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)):
        call(ember)


# ---------------------------------------------------------------------------------------------
# values


@pytest.mark.parametrize("sa,sb", [((2, 3), (3, 4)), ((3,), (3, 2)), ((2, 3), (3,)),
                                   ((3,), (3,)), ((5, 2, 3), (3, 4)), ((1, 2, 3), (4, 3, 2)),
                                   ((2, 1, 2, 3), (3, 3, 1)), ((0, 3), (3, 2))])
def test_matmul_matches_numpy(rng, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    np.testing.assert_allclose((ember.tensor(a) @ ember.tensor(b)).numpy(), a @ b, rtol=1e-12)


def test_matmul_integer_dtypes():
    a = ember.tensor([[1, 2], [3, 4]], dtype=ember.int32)
    out = a @ a
    assert out.dtype == ember.int32 and out.tolist() == [[7, 10], [15, 22]]


@pytest.mark.parametrize("make", [
    lambda x, y: x @ y, lambda x, y: ember.mm(x, y), lambda x, y: ember.einsum("ij,jk->ik", x, y),
    lambda x, y: ember.tensordot(x, y, 1), lambda x, y: ember.addmm(ember.zeros_like(x), x, y),
])
@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_low_precision_products_keep_their_dtype(make, dtype):
    # np.matmul turns bfloat16 into float32 and np.einsum rejects bfloat16 outright
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=dtype)
    out = make(x, x)
    assert out.dtype == dtype
    np.testing.assert_allclose(out.float().numpy(), [[7.0, 10.0], [15.0, 22.0]])


def test_addmm_family_scaling(rng):
    m, a, b = (rng.standard_normal(s) for s in ((2, 2), (2, 3), (3, 2)))
    out = ember.addmm(ember.tensor(m), ember.tensor(a), ember.tensor(b), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(out.numpy(), 0.5 * m + 2.0 * (a @ b), rtol=1e-12)
    nan = ember.full((2, 2), float("nan"), dtype=ember.float64)
    out = ember.addmm(nan, ember.tensor(a), ember.tensor(b), beta=0)  # beta=0 ignores input
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-12)


def test_baddbmm_in_place():
    x = ember.zeros(2, 1, 1)
    b1, b2 = ember.ones(2, 1, 3), ember.ones(2, 3, 1)
    v0 = x._version
    assert x.baddbmm_(b1, b2) is x and x._version > v0
    assert x.flatten().tolist() == [3.0, 3.0]


def test_einsum_forms(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    np.testing.assert_allclose(ember.einsum("ij,jk", ember.tensor(a), ember.tensor(b)).numpy(),
                               a @ b, rtol=1e-12)
    np.testing.assert_allclose(ember.einsum("ij->", ember.tensor(a)).numpy(), a.sum())
    np.testing.assert_allclose(ember.einsum("...j,jk->...k", [ember.tensor(a),
                                                            ember.tensor(b)]).numpy(), a @ b)


# ---------------------------------------------------------------------------------------------
# gradients


def test_matmul_gradients_broadcast_batches():
    a = ember.ones(2, 1, 2, 3, dtype=ember.float64).mul(0.5).requires_grad_()
    b = ember.arange(6.0, dtype=ember.float64).reshape(3, 2).requires_grad_()
    assert gradcheck(ember.matmul, (a, b))
    assert gradgradcheck(ember.matmul, (a, b))


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,))])
def test_matmul_vector_gradients(shapes, rng):
    xs = [ember.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    assert gradcheck(ember.matmul, xs)
    assert gradgradcheck(ember.matmul, xs)


def test_einsum_gradient(rng):
    a = ember.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = ember.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    assert gradcheck(lambda x, y: ember.einsum("ij,jk->ik", x, y), (a, b))
    assert gradcheck(lambda x: ember.einsum("ij->j", x), (a,))


@pytest.mark.parity
def test_matmul_grads_match_torch_on_transposed_inputs(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((2, 4))
    ea, eb = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (ea.t() @ eb.t()).pow(2).sum().backward()
    (ta.t() @ tb.t()).pow(2).sum().backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(eb.grad.numpy(), tb.grad.numpy(), rtol=1e-12)


# Matmul folds (..., M, K) @ (K, N) into one GEMM and computes K == 1 products as a broadcast
# multiply; both must agree with numpy and differentiate like any product, also when the
# batched operand is a permuted (non-contiguous) view as attention produces.
@pytest.mark.parametrize("sa,sb", [((4, 3, 2, 5), (5, 3)), ((3, 4, 1), (1, 5)),
                                   ((2, 3, 1), (2, 1, 4)), ((2, 1, 3, 1), (3, 1, 4)),
                                   ((0, 2, 3), (3, 2)), ((2, 3, 4), (4, 1))])
@pytest.mark.parametrize("permuted", [False, True])
def test_matmul_folded_and_outer_paths(rng, sa, sb, permuted):
    if permuted:  # shape sa, dims laid out in reverse order
        base = rng.standard_normal(sa[::-1])
        a = base.transpose()
        ea = ember.tensor(base).permute(*reversed(range(len(sa)))).requires_grad_()
        assert not ea.is_contiguous() or min(sa) <= 1
    else:
        a = rng.standard_normal(sa)
        ea = ember.tensor(a, requires_grad=True)
    b = rng.standard_normal(sb)
    eb = ember.tensor(b, requires_grad=True)
    np.testing.assert_allclose((ea @ eb).detach().numpy(), a @ b, rtol=1e-12, atol=1e-12)
    if ea.numel() and eb.numel():  # gradcheck perturbs contiguous inputs: permute inside
        rev = tuple(reversed(range(len(sa))))
        fn = (lambda x, y: x.permute(*rev) @ y) if permuted else ember.matmul
        x = ember.tensor(base if permuted else a, requires_grad=True)
        assert gradcheck(fn, (x, eb))
        assert gradgradcheck(fn, (x, eb))


def test_matmul_outer_path_keeps_integer_and_low_precision_dtypes():
    a = ember.tensor([[1], [2]], dtype=ember.int64)
    out = a @ ember.tensor([[3, 4]], dtype=ember.int64)
    assert out.dtype == ember.int64 and out.tolist() == [[3, 4], [6, 8]]
    h = ember.tensor([[1.0], [2.0]], dtype=ember.bfloat16)
    assert (h @ h.mT).dtype == ember.bfloat16


def test_matrix_vector_gradient_on_permuted_batch(rng):
    # the attention score e @ v with e a permuted view: weight gradient summed over the batch
    e = rng.standard_normal((3, 2, 4, 5))
    v = rng.standard_normal(5)
    et = ember.tensor(e.transpose(1, 0, 2, 3).copy()).permute(1, 0, 2, 3).requires_grad_()
    vt = ember.tensor(v, requires_grad=True)
    (et @ vt).pow(2).sum().backward()
    g = 2 * (e @ v)
    np.testing.assert_allclose(vt.grad.numpy(), np.einsum("btsh,bts->h", e, g), rtol=1e-12)
    np.testing.assert_allclose(et.grad.numpy(), g[..., None] * v, rtol=1e-12)


def test_tensordot_out_matches_numpy_and_resizes_the_out():
    a = np.arange(6.0).reshape(2, 3)
    out = ember.empty(0, dtype=ember.float64)
    got = ember.tensordot(ember.tensor(a), ember.tensor(a), ([1], [1]), out=out)
    assert got is out
    np.testing.assert_allclose(out.numpy(), np.tensordot(a, a, ([1], [1])))
    # one with elements is resized too, with torch's deprecation warning
    out = ember.empty(3, dtype=ember.float64)
    with pytest.warns(UserWarning, match=r"tensordot\(\): the out= tensor of shape \[3\].*resized"):
        ember.tensordot(ember.tensor(a), ember.tensor(a), ([1], [1]), out=out)
    np.testing.assert_allclose(out.numpy(), np.tensordot(a, a, ([1], [1])))


# NOTE [Unrecorded 2-D matmul] in ember/ops/products.py: a 2-D matmul that records nothing skips
# Op._run; the result must be what the op path computes, and every hook that sees op calls
# (profiler, vmap, forward AD, compile capture) must still see it
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64", "float16"])
@pytest.mark.parametrize("sa,sb,transpose_b", [((4, 4), (4, 4), False), ((3, 5), (5, 2), True),
                                               ((3, 1), (1, 4), False), ((0, 3), (3, 2), False)])
def test_unrecorded_2d_matmul_equals_the_op_path(rng, dtype, sa, sb, transpose_b):
    a = np.asarray(rng.standard_normal(sa) * 3).astype(dtype)
    b = np.asarray(rng.standard_normal(sb[::-1] if transpose_b else sb) * 3).astype(dtype)
    b = b.T if transpose_b else b
    ea, eb = ember.from_numpy(a), ember.from_numpy(b)
    got = ea @ eb
    with ember.autograd.forward_ad.dual_level():  # a hook is active: the Op._run path
        via_op = ea @ eb
    assert got.dtype == via_op.dtype == ea.dtype and got.shape == (sa[0], sb[1])
    np.testing.assert_array_equal(got.numpy(), via_op.numpy())
    assert got._version == 0 and got.grad_fn is None and not got.requires_grad
    assert not np.shares_memory(got.numpy(), a) and not np.shares_memory(got.numpy(), b)


def test_unrecorded_matmul_is_seen_by_the_profiler_vmap_and_forward_ad(rng):
    from ember.profiler import profile
    a, b = ember.randn(4, 3), ember.randn(3, 2)
    with profile(record_shapes=True) as prof:
        a @ b
    assert [e.shapes for e in prof.events if e.name == "matmul"] == [[[4, 3], [3, 2]]]
    batched = ember.randn(5, 4, 3)
    out = ember.func.vmap(lambda x: x @ b)(batched)
    np.testing.assert_allclose(out.numpy(), batched.numpy() @ b.numpy(), rtol=1e-5)
    import ember.autograd.forward_ad as fwAD
    tangent = ember.randn(4, 3)
    with fwAD.dual_level():
        primal, tan = fwAD.unpack_dual(fwAD.make_dual(a, tangent) @ b)
    np.testing.assert_allclose(tan.numpy(), tangent.numpy() @ b.numpy(), rtol=1e-5)
    np.testing.assert_allclose(primal.numpy(), a.numpy() @ b.numpy(), rtol=1e-5)


def test_vdot_conjugates_its_first_operand_and_keeps_integer_dtypes():
    z = ember.tensor([1 + 2j, 3 - 1j])
    w = ember.tensor([2 - 1j, 1 + 1j])
    assert complex(ember.vdot(z, w).item()) == complex(np.vdot(z.numpy(), w.numpy()))
    assert ember.vdot(ember.tensor([1, 2], dtype=ember.int8),
                      ember.tensor([3, 4], dtype=ember.int8)).dtype is ember.int8


@pytest.mark.parametrize("call", [
    lambda a: a @ a, lambda a: ember.mm(a, a), lambda a: ember.dot(a[0], a[0]),
    lambda a: ember.einsum("ij,jk->ik", a, a), lambda a: ember.addmm(a, a, a),
])
def test_bool_products_are_not_implemented(call):
    a = ember.ones(2, 2, dtype=ember.bool)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        call(a)


def test_einsum_diagonals_are_differentiable():
    x = ember.randn(3, 3, 2, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda t: ember.einsum("iij->ij", t), (x,))
    assert gradcheck(lambda t: ember.einsum("iij->", t), (x,))
    assert ember.einsum("ii", ember.ones(3, 3, dtype=ember.int8)).dtype is ember.int64  # a sum
    with pytest.raises(RuntimeError, match="output subscript k does not appear"):
        ember.einsum("ij->k", x[0])


def test_addmm_zero_coefficients_drop_their_term_with_zero_gradients():
    inp = ember.tensor([[float("nan"), 1.0]], dtype=ember.float64, requires_grad=True)
    m = ember.tensor([[float("inf")]], dtype=ember.float64, requires_grad=True)
    v = ember.ones(1, 2, dtype=ember.float64)
    out = ember.addmm(inp, m, v, beta=0)
    assert out.tolist() == [[float("inf")] * 2]
    out.sum().backward()
    assert inp.grad.tolist() == [[0.0, 0.0]]
    assert ember.addmm(ember.ones(1, 2), ember.full((1, 1), float("inf")), ember.ones(1, 2),
                       alpha=0).tolist() == [[1.0, 1.0]]
    with pytest.raises(RuntimeError, match="addmm: value 1j cannot be converted"):
        ember.addmm(ember.ones(1, 2), ember.ones(1, 1), ember.ones(1, 2), alpha=1j)
    ints = ember.ones(2, 2, dtype=ember.int64)
    assert ember.addmm(ints, ints, ints, beta=0.5).tolist() == [[2, 2], [2, 2]]  # truncated


def test_chain_matmul_and_tensordot_arguments():
    with pytest.raises(RuntimeError, match="Tensor dimension is 1, expected 2"):
        ember.chain_matmul(ember.ones(3), ember.ones(3, 2))
    assert ember.chain_matmul(ember.ones(2, 3)).shape == (2, 3)
    with pytest.raises(RuntimeError, match="tensordot expects dims >= 0"):
        ember.tensordot(ember.ones(2, 3), ember.ones(3, 2), -1)
    assert ember.tensordot(ember.ones(2, 3), ember.ones(3, 2), dims=ember.tensor(1)).shape == (2,
                                                                                                2)
