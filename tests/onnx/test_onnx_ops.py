"""ONNX translations of single ops: cumsum, pixel_shuffle/pixel_unshuffle, boolean-mask
indexing, transposed convolution, and a sweep over the op database (every sampled op either
exports and matches onnxruntime, or raises the error naming the op and the node)."""
from __future__ import annotations

import io
import zlib

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember import _dtype as D
from ember.testing._samples import map_tensors, op_db, tensors_of

onnx = pytest.importorskip("onnx", reason="ember.onnx.export needs the optional onnx package")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime runs the exported models")


def _export(model, args, names=None, dynamic_axes=None):
    buf = io.BytesIO()
    ember.onnx.export(model, args, buf, input_names=names, dynamic_axes=dynamic_axes)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    return proto, ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])


def _run(sess, args):
    return sess.run(None, {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args,
                                                               strict=True)})


def _check(model, args, names=None, dynamic_axes=None, run_args=None):
    """Export with ``args``; onnxruntime on ``run_args`` (default: the same) equals ember."""
    proto, sess = _export(model, args, names, dynamic_axes)
    run_args = run_args or args
    with ember.no_grad():
        ref = model(*run_args)
    ref = ref if isinstance(ref, tuple) else (ref,)
    got = _run(sess, run_args)
    for g, r in zip(got, ref, strict=True):
        assert g.shape == tuple(r.shape)
        np.testing.assert_allclose(g, r.numpy(), rtol=1e-5, atol=1e-5)
    return proto


def _out_dims(proto, i=0):
    dims = proto.graph.output[i].type.tensor_type.shape.dim
    return [d.dim_param or d.dim_value for d in dims]


# ----------------------------------------------------------------------------- cumsum
class _Cumsum(nn.Module):
    def __init__(self, dim, dtype=None):
        super().__init__()
        self.dim, self.dtype = dim, dtype

    def forward(self, x):
        return ember.cumsum(x, self.dim, dtype=self.dtype) + x.cumsum(dim=self.dim)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_matches_onnxruntime(dim):
    x = ember.randn(3, 4, 5)
    proto = _check(_Cumsum(dim), (x,), ["x"], {"x": {0: "b"}},
                   run_args=(ember.randn(6, 4, 5),))
    assert "CumSum" in {n.op_type for n in proto.graph.node}


def test_cumsum_with_dtype_and_integer_input():
    x = ember.arange(12).reshape(3, 4)
    proto = _check(_Cumsum(1, ember.float64), (x,), ["x"])
    assert proto.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.DOUBLE


# ----------------------------------------------------------------------------- pixel shuffle
class _Shuffle(nn.Module):
    def forward(self, x):
        return F.pixel_unshuffle(F.pixel_shuffle(x, 2) * 2.0, 2) - F.pixel_shuffle(x, 2).sum()


def test_pixel_shuffle_and_unshuffle_functions_with_dynamic_batch():
    x = ember.randn(2, 8, 3, 5)
    proto = _check(_Shuffle(), (x,), ["x"], {"x": {0: "b"}}, run_args=(ember.randn(5, 8, 3, 5),))
    ops = {n.op_type for n in proto.graph.node}
    assert {"DepthToSpace", "SpaceToDepth"} <= ops


@pytest.mark.parametrize("shape", [(2, 12, 4, 6), (3, 2, 12, 4, 6), (12, 4, 6)])
def test_pixel_shuffle_modules_any_leading_dims(shape):
    x = ember.randn(*shape)
    _check(nn.Sequential(nn.PixelShuffle(2)), (x,), ["x"])
    _check(nn.Sequential(nn.PixelUnshuffle(2)), (x,), ["x"])


def test_pixel_unshuffle_module_dynamic_batch():
    x = ember.randn(1, 3, 4, 6)
    _check(nn.Sequential(nn.PixelUnshuffle(2)), (x,), ["x"], {"x": {0: "b"}},
           run_args=(ember.randn(4, 3, 4, 6),))


# ----------------------------------------------------------------------------- x[mask]
class _Mask(nn.Module):
    def forward(self, x, m):
        return x[m] * 2.0


class _MaskInner(nn.Module):
    def forward(self, x, m):
        return x[:, m] + 1.0


def test_boolean_mask_indexing_full_rank_has_data_dependent_length():
    x = ember.randn(3, 4, 5)
    proto = _check(_Mask(), (x, x > 0), ["x", "m"])
    assert "Compress" in {n.op_type for n in proto.graph.node}
    assert isinstance(_out_dims(proto)[0], str)        # a named, not a fixed, length
    y = ember.randn(3, 4, 5)                            # another mask: another length
    got = _run(ort.InferenceSession(proto.SerializeToString(),
                                    providers=["CPUExecutionProvider"]), (y, y > 0.5))[0]
    np.testing.assert_allclose(got, (y[y > 0.5] * 2.0).numpy(), rtol=1e-6)


def test_boolean_mask_over_leading_and_inner_dims():
    x = ember.randn(3, 4, 5)
    _check(_Mask(), (x, ember.tensor([True, False, True])), ["x", "m"])
    _check(_Mask(), (x, (x > 0)[:, :, 0]), ["x", "m"])
    _check(_MaskInner(), (x, ember.tensor([True, False, True, True])), ["x", "m"])


def test_boolean_mask_all_false_gives_empty_result():
    x = ember.randn(3, 4)
    _, sess = _export(_Mask(), (x, x > 0), ["x", "m"])
    got = _run(sess, (x, x > 100.0))[0]
    assert got.shape == (0,)


# ----------------------------------------------------------------------------- ConvTranspose
@pytest.mark.parametrize("kw", [dict(stride=2, padding=1, output_padding=1),
                                dict(stride=1, groups=2, dilation=2, bias=False),
                                dict(stride=3, padding=2)])
def test_conv_transpose2d_module_with_dynamic_batch(kw):
    ember.manual_seed(0)
    m = nn.Sequential(nn.ConvTranspose2d(4, 6, 3, **kw))
    proto = _check(m, (ember.randn(2, 4, 5, 7),), ["x"], {"x": {0: "b"}},
                   run_args=(ember.randn(3, 4, 5, 7),))
    assert "ConvTranspose" in {n.op_type for n in proto.graph.node}


def test_conv_transpose1d_and_3d_modules():
    ember.manual_seed(0)
    _check(nn.Sequential(nn.ConvTranspose1d(4, 2, 3, stride=2, groups=2)),
           (ember.randn(2, 4, 9),), ["x"])
    _check(nn.Sequential(nn.ConvTranspose3d(2, 3, 2, stride=2, padding=1)),
           (ember.randn(1, 2, 3, 4, 3),), ["x"])


class _ConvT(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(ember.randn(4, 3, 2, 3))
        self.b = nn.Parameter(ember.randn(3))

    def forward(self, x):
        return F.conv_transpose2d(x, self.w, self.b, stride=(2, 1), padding=(0, 1))


def test_conv_transpose2d_function():
    ember.manual_seed(0)
    _check(_ConvT(), (ember.randn(2, 4, 5, 5),), ["x"])


def test_conv_transpose_with_output_size_names_the_layer():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.ConvTranspose2d(2, 2, 3, stride=2)

        def forward(self, x):
            return self.up(x, output_size=[10, 10])

    with pytest.raises(ember.onnx.UnsupportedOperatorError,
                       match=r"ConvTranspose2d \(this form of the call\); used by node 'up'"):
        _export(M(), (ember.randn(1, 2, 4, 4),))


# ----------------------------------------------------------------------------- op-table sweep
# The registered ops (the op table) whose first sample exports and matches onnxruntime; every
# other sampled op must raise UnsupportedOperatorError naming it. Adding a translation makes its
# op's test fail until the op is added here, so this list stays the record of what exports.
EXPORTED = frozenset({
    "abs", "acos", "acosh", "add", "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr",
    "adjoint", "all", "amax", "amin", "angle", "any", "argmax", "argmin", "argsort", "argwhere",
    "as_strided", "asin", "asinh", "atan", "atan2", "atanh", "baddbmm", "bincount", "bitwise_and",
    "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "bmm",
    "broadcast_to", "cat", "ceil", "cholesky", "cholesky_inverse", "cholesky_solve", "chunk",
    "clamp", "clamp_max", "clamp_min", "clone", "copysign", "cos", "cosh", "count_nonzero",
    "cross", "cummax", "cummin", "cumprod", "cumsum", "deg2rad", "det", "diag", "diag_embed",
    "diagflat", "diagonal", "digamma", "dist", "div", "dot", "einsum", "eq", "erf", "erfc",
    "erfinv", "exp", "exp2", "expand", "expm1", "flatten", "flip", "fliplr", "flipud",
    "float_power", "floor", "floor_divide", "fmax", "fmin", "fmod", "frac", "frobenius_norm",
    "gather", "ge", "gelu", "geqrf", "gt", "histc", "hypot", "i0", "igamma", "igammac",
    "index_add", "index_copy", "index_fill", "index_put", "index_select", "inverse", "isfinite",
    "isinf", "isnan", "isneginf", "isposinf", "isreal", "kron", "kthvalue", "le", "lerp", "lgamma",
    "linalg.cholesky", "linalg.cholesky_ex", "linalg.cond", "linalg.cross", "linalg.det",
    "linalg.diagonal", "linalg.eigvalsh", "linalg.householder_product", "linalg.inv",
    "linalg.inv_ex", "linalg.logdet", "linalg.lu", "linalg.lu_factor", "linalg.lu_factor_ex",
    "linalg.lu_solve", "linalg.matmul", "linalg.matrix_exp", "linalg.matrix_norm",
    "linalg.matrix_power", "linalg.matrix_rank", "linalg.multi_dot", "linalg.norm", "linalg.pinv",
    "linalg.qr", "linalg.slogdet", "linalg.solve", "linalg.solve_ex", "linalg.solve_triangular",
    "linalg.svdvals", "linalg.tensorinv", "linalg.tensorsolve", "linalg.vander", "linalg.vecdot",
    "linalg.vector_norm", "log", "log10", "log1p", "log2", "logcumsumexp", "logdet", "logical_and",
    "logical_not", "logical_or", "logical_xor", "logit", "logsumexp", "lt", "lu", "lu_solve",
    "lu_unpack", "masked_fill", "masked_scatter", "masked_select", "matmul", "matrix_exp",
    "matrix_power", "max", "maximum", "mean", "median", "min", "minimum", "mm", "mode", "movedim",
    "msort", "mul", "mv", "mvlgamma", "nan_to_num", "nanmean", "nanmedian", "nanquantile",
    "nansum", "narrow", "ne", "neg", "nonzero", "norm", "nuclear_norm", "orgqr", "ormqr", "outer",
    "permute", "pinverse", "polygamma", "pow", "prod", "qr", "quantile", "rad2deg", "ravel",
    "reciprocal", "relu", "remainder", "repeat_interleave", "reshape", "roll", "rot90", "round",
    "rsqrt", "scatter", "scatter_add", "scatter_reduce", "select", "sgn", "sigmoid", "sign",
    "signbit", "sin", "sinc", "sinh", "slogdet", "sort", "split", "sqrt", "square", "squeeze",
    "stack", "std", "std_mean", "sub", "sum", "swapaxes", "t", "take", "take_along_dim", "tan",
    "tanh", "tensor_split", "tensordot", "tile", "topk", "trace", "transpose", "triangular_solve",
    "tril", "triu", "trunc", "unbind", "unflatten", "unique", "unique_consecutive", "unsqueeze",
    "var", "var_mean", "view", "where", "xlogy"
})

_DB = {e.name: e for e in op_db() if e.samples is not None}


def _public(name):
    """ember.<name> / ember.linalg.<name>, looked up at call time (tracing patches it)."""
    ns, _, attr = name.rpartition(".")
    return getattr(getattr(ember, ns) if ns else ember, attr)


def _as_function(name, sample, n):
    """A function of the sample's n tensors with explicit parameters (fx traces those)."""
    def call(*ts):
        it = iter(ts)
        s = map_tensors(sample, lambda t: next(it))
        return _public(name)(s.input, *s.args, **s.kwargs)
    params = ", ".join(f"a{i}" for i in range(n))
    ns = {"call": call}
    exec(f"def {name.replace('.', '_')}({params}):\n    return call({params})\n", ns)
    return ns[name.replace(".", "_")]


def test_exported_list_names_table_ops():
    assert EXPORTED <= set(_DB)


@pytest.mark.parametrize("name", sorted(_DB))
def test_op_table_op_exports_or_names_itself(name):
    entry = _DB[name]
    dtype = D.float32 if D.float32 in entry.spec.dtypes else entry.spec.dtypes[0]
    rng = np.random.default_rng(zlib.crc32(f"onnx-{name}".encode()))
    sample = list(entry.samples(rng, dtype))[0]
    ts = tensors_of(sample)
    fn = _as_function(name, sample, len(ts))
    if name not in EXPORTED:
        with pytest.raises(ember.onnx.UnsupportedOperatorError,
                           match=r"no ONNX translation for .*; used by node '\w+' in the "
                                 r"top-level forward"):
            ember.onnx.export(fn, tuple(ts), io.BytesIO())
        return
    _, sess = _export(fn, tuple(ts))
    ref = fn(*ts)
    ref = [r for r in (ref if isinstance(ref, (tuple, list)) else (ref,))
           if isinstance(r, ember.Tensor)]
    for g, r in zip(_run(sess, ts), ref, strict=True):
        np.testing.assert_allclose(g, r.detach().numpy(), rtol=1e-5, atol=1e-5)
