"""ONNX translations in the call forms models use (dims, keepdim, keywords, methods, negative
dims, dynamic batch), each compared with onnxruntime; the op-table sweep covers one sample each."""
from __future__ import annotations

import io

import pytest

import ember
import ember.nn.functional as F

onnx = pytest.importorskip("onnx", reason="ember.onnx.export needs the optional onnx package")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime runs the exported models")

from onnx_roundtrip import check_roundtrip as _check  # noqa: E402  (after the importorskips)


def _x(*shape):
    return ember.randn(*shape)


# (id, function, argument shapes); every function's first argument has a batch dimension
FORMS = [
    ("sum_dims_keepdim", lambda x: x.sum((1, -1), keepdim=True), [(2, 3, 4)]),
    ("mean_neg_dim", lambda x: ember.mean(x, -2), [(2, 3, 4)]),
    ("amax_keepdim", lambda x: x.amax(dim=1, keepdim=True), [(2, 3, 4)]),
    ("max_dim_values", lambda x: x.max(dim=1)[0] + x.min(1, keepdim=True)[0].sum(), [(2, 3, 4)]),
    ("argmax_keepdim", lambda x: x.argmax(dim=-1, keepdim=True), [(2, 3, 4)]),
    ("argmin_flat", lambda x: ember.argmin(x), [(2, 3, 4)]),
    ("var_correction", lambda x: x.var(dim=1, correction=0, keepdim=True), [(2, 5, 3)]),
    ("std_unbiased_dims", lambda x: ember.std(x, (1, 2), False), [(2, 5, 3)]),
    ("var_mean_dim", lambda x: ember.var_mean(x, 1), [(2, 5, 3)]),
    ("logsumexp_keepdim", lambda x: ember.logsumexp(x, (1, 2), keepdim=True), [(2, 3, 4)]),
    ("norm_p1_dim", lambda x: x.norm(p=1, dim=-1), [(2, 3, 4)]),
    ("vector_norm_inf", lambda x: ember.linalg.vector_norm(x, float("inf"), dim=(1, 2)),
     [(2, 3, 4)]),
    ("all_any_dim", lambda x: (x > 0).all(dim=1) | (x > 1).any(-1), [(2, 3, 3)]),
    ("where_scalar", lambda x: ember.where(x > 0, x, 0.0), [(2, 3)]),
    ("masked_fill_method", lambda x: x.masked_fill(x < 0, float("-inf")).softmax(-1),
     [(2, 3)]),
    ("clamp_min_only", lambda x: x.clamp(min=0.1) + ember.clamp(x, max=-0.2), [(2, 3)]),
    ("clamp_tensor_bounds", lambda x, lo: ember.maximum(ember.minimum(x, lo + 1), lo),
     [(2, 3), (2, 3)]),
    ("gather_neg_dim", lambda x: x.gather(-1, (x.abs() * 1000).long() % 4), [(2, 3, 4)]),
    ("scatter_value", lambda x: ember.zeros(2, 3, 4).scatter(2, ember.tensor([[[1], [0], [3]],
                                                                              [[2], [2], [0]]]),
                                                             1.5) + x, [(2, 3, 4)]),
    ("scatter_add_method", lambda x: x.scatter_add(1, ember.tensor([[0, 1, 0], [2, 2, 1]]),
                                                   ember.ones(2, 3)), [(2, 3)]),
    ("index_select_neg", lambda x: x.index_select(-1, ember.tensor([3, 0, 0])), [(2, 3, 4)]),
    ("expand_minus_one", lambda x: x[:, :1].expand(-1, 5, -1), [(2, 3, 4)]),
    ("repeat_method", lambda x: x.repeat(1, 2, 3), [(2, 3, 4)]),
    ("tile_short", lambda x: x.tile((2,)), [(2, 3, 4)]),
    ("repeat_interleave_dim", lambda x: x.repeat_interleave(2, dim=1), [(2, 3)]),
    ("cat_stack_neg", lambda x: ember.stack([x, x * 2], dim=-1).flatten(-2) +
     ember.cat([x, x], -1), [(2, 3)]),
    ("split_sizes", lambda x: x.split([1, 3], dim=-1), [(2, 3, 4)]),
    ("chunk_method", lambda x: x.chunk(2, 1), [(2, 4, 3)]),
    ("flip_dims", lambda x: x.flip(-1, 1), [(2, 3, 4)]),
    ("roll_dims", lambda x: x.roll((1, -2), (1, 2)), [(2, 3, 4)]),
    ("roll_flat", lambda x: ember.roll(x, 5), [(2, 3, 4)]),
    ("topk_smallest", lambda x: x.topk(2, dim=1, largest=False), [(2, 4, 3)]),
    ("sort_descending", lambda x: ember.sort(x, dim=1, descending=True), [(2, 4, 3)]),
    ("argsort_method", lambda x: x.argsort(-1), [(2, 4, 3)]),
    ("cumsum_neg", lambda x: x.cumsum(-1), [(2, 3)]),
    ("triu_tril_offset", lambda x: x.triu(1) + ember.tril(x, -1), [(2, 4, 4)]),
    ("einsum_attention", lambda q, k: ember.einsum("bhid,bhjd->bhij", q, k).softmax(-1),
     [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("bmm_baddbmm", lambda x, y: ember.baddbmm(x[:, :, :2], x, y, beta=0.5, alpha=2.0),
     [(2, 2, 3), (2, 3, 2)]),
    ("zeros_like_full", lambda x: ember.zeros_like(x) + ember.full_like(x, 2.5) +
     ember.ones_like(x), [(2, 3)]),
    ("new_zeros_arange", lambda x: x.new_zeros(x.shape) + ember.arange(3.0), [(2, 3)]),
    ("movedim_multi", lambda x: x.movedim((0, 1), (2, 0)), [(2, 3, 4)]),
    ("narrow_select", lambda x: x.narrow(1, 1, 2).select(-1, 0), [(2, 3, 4)]),
    ("diagonal_offset", lambda x: x.diagonal(1, -2, -1), [(2, 3, 4)]),
]


@pytest.mark.parametrize("fn,shapes", [f[1:] for f in FORMS], ids=[f[0] for f in FORMS])
def test_form_matches_onnxruntime(fn, shapes):
    ember.manual_seed(0)
    _check(fn, tuple(_x(*s) for s in shapes))


@pytest.mark.parametrize("fn,shapes", [f[1:] for f in FORMS if f[0] in {
    "sum_dims_keepdim", "var_correction", "argmax_keepdim", "logsumexp_keepdim",
    "all_any_dim", "gather_neg_dim", "expand_minus_one", "repeat_interleave_dim", "flip_dims",
    "roll_dims", "topk_smallest", "zeros_like_full", "new_zeros_arange"}],
    ids=lambda v: "" if not isinstance(v, list) else f"{len(v)}args")
def test_form_with_dynamic_batch(fn, shapes):
    ember.manual_seed(0)
    args = tuple(_x(*s) for s in shapes)
    other = tuple(_x(5, *s[1:]) for s in shapes)
    _check(fn, args, dynamic_batch=True, run_args=other)


def test_unsupported_op_names_itself_with_torchs_error_type():
    def fn(x):
        return ember.linalg.eigvals(x).real + 1       # complex results: no ONNX form
    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError,
                       match=r"no ONNX translation for ember\.linalg\.eigvals; used by node "
                             r"'eigvals'"):
        ember.onnx.export(fn, (ember.randn(3, 3),), io.BytesIO())
    assert issubclass(ember.onnx.errors.UnsupportedOperatorError, RuntimeError)


def test_unsupported_form_names_the_call():
    def fn(x):
        return x.repeat_interleave(ember.tensor([1, 2, 3]), dim=0)
    with pytest.raises(ember.onnx.UnsupportedOperatorError,
                       match=r"Tensor\.repeat_interleave \(this form of the call\)"):
        ember.onnx.export(fn, (ember.randn(3, 2),), io.BytesIO())


def test_f_alias_of_same_op():
    _check(lambda x: F.relu6(x * 4) + F.hardtanh(x, -0.5, 0.5), (_x(2, 3),))


def test_transpose_and_swapaxes_keyword_forms():
    x = ember.randn(2, 3, 4)
    _check(lambda x: (ember.swapaxes(x, axis0=0, axis1=2), x.swapaxes(1, -1),
                      ember.transpose(x, dim0=-1, dim1=0), x.transpose(dim0=1, dim1=2)), (x,),
           dynamic_batch=True, run_args=(ember.randn(5, 3, 4),))
