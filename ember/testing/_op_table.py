"""The op table: one ``OpSpec`` line per public op holding every fact the generic op suite
(tests/ops/test_op_db.py) needs: sample generator, NumPy reference, claimed dtypes, input
domain, tolerances, and whether first / second derivatives apply. This is the only place those
facts live: ``register(...)`` in ember/ops only makes the op public, and a completeness test
fails for a registered op without a line here.

gradgradcheck runs for every differentiable op; ``once_differentiable="why"`` opts one out, and
the suite then expects gradgradcheck to fail (so a fix shows up as an unexpected pass).
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.special as sp

from .. import _dtype as D
from . import _linalg as la
from . import _linalg_factor as lf
from . import _sorting as so
from . import _special as spc
from ._generators import (
    GE1,
    NONZERO,
    OPEN_UNIT,
    POSITIVE,
    REAL,
    SHIFT,
    UNIT,
    addc_samples,
    all_any_samples,
    amax_samples,
    arg_samples,
    binary_errors,
    binary_samples,
    bmm_errors,
    cat_errors,
    clamp_errors,
    clamp_samples,
    count_nonzero_samples,
    cumulative_samples,
    div_samples,
    float_power_samples,
    gelu_samples,
    lerp_samples,
    logit_samples,
    logsumexp_samples,
    matmul_errors,
    matmul_samples,
    max_min_samples,
    mm_errors,
    nan_inf_samples,
    nan_samples,
    nan_to_num_samples,
    pow_samples,
    prod_samples,
    reduction_samples,
    round_samples,
    signbit_samples,
    unary_samples,
    var_samples,
)
from ._indexing import (
    cat_samples,
    cross_samples,
    einsum_samples,
    gather_samples,
    index_add_samples,
    index_copy_samples,
    index_fill_samples,
    index_put_samples,
    index_select_samples,
    kron_samples,
    masked_fill_samples,
    masked_scatter_samples,
    masked_select_samples,
    nonzero_samples,
    product_samples,
    scatter_add_samples,
    scatter_reduce_samples,
    scatter_samples,
    shape_samples,
    stack_samples,
    take_along_dim_samples,
    take_samples,
    tensordot_samples,
    where_samples,
)
from ._refs import (
    addmm_like,
    as_strided_ref,
    chunk_ref,
    clamp_ref,
    compare_ref,
    cum_ref,
    diag_embed_ref,
    div_ref,
    gather_ref,
    gelu_ref,
    index_add_ref,
    index_copy_ref,
    index_fill_ref,
    index_put_ref,
    index_select_ref,
    logit_ref,
    logsumexp_ref,
    masked_fill_ref,
    masked_scatter_ref,
    masked_select_ref,
    matmul_ref,
    max_ref,
    nan_to_num_ref,
    np_axis,
    reduce_ref,
    scatter_reduce_ref,
    scatter_ref,
    split_ref,
    take_along_dim_ref,
    tensor_split_ref,
    var_mean_ref,
    var_ref,
    xlogy_ref,
)

ALL, FLOATING, INTEGRAL = D.ALL, D.FLOATING, D.INTEGRAL
NO_BOOL = tuple(d for d in D.ALL if d is not D.bool_)
SINGLE_DOUBLE = (D.float32, D.float64)


@dataclass
class OpSpec:
    """Everything the generic op suite knows about one op."""

    samples: Callable                         # (rng, dtype) -> list[SampleInput]
    ref: Callable                             # NumPy reference with the op's calling convention
    dtypes: tuple = FLOATING                  # the dtypes the op claims to support
    domain: tuple | None = None               # input range the samples draw from
    tol: dict = field(default_factory=dict)   # dtype name -> (rtol, atol) for forward checks
    grad: bool = True                         # differentiable: gradcheck applies
    once_differentiable: str = ""             # why gradgradcheck does not apply (empty: it does)
    noncontig: bool = True                    # op accepts arbitrary strided inputs
    torch_name: str | None = None             # dotted path under torch when named differently
    parity: bool = True                       # compare with torch
    edge: bool = True                         # samples must include a 0-d and an empty input
    upcast: bool = True                       # run the reference on float64 copies of floats
    errors: Callable | None = None            # (rng, dtype) -> list[ErrorInput]
    grad_samples: Callable | None = None      # samples for gradient checks, when the forward
                                              # samples sit on non-differentiable points
    hermitian: bool = False                   # reads one triangle of a symmetric input: the
                                              # gradient checks symmetrize it first
    out: bool = True                          # takes out=
    grad_wrapper: Callable | None = None      # fn -> fn the gradient checks call instead (an
                                              # op reading one triangle of a factor: tril it)


_U = unary_samples
_B = binary_samples


def _unary(ref, domain=REAL, **kw):
    return OpSpec(functools.partial(_U, domain=domain), ref, domain=domain, **kw)


def _binary(name, ref, domain=REAL, other=NONZERO, scalar=True, **kw):
    # scalar=False: the op takes no Python number operand (NOTE [Number operands] in registry.py)
    return OpSpec(functools.partial(_B, domain=domain, other_domain=other, scalar=scalar), ref,
                  domain=domain, errors=binary_errors(name), **kw)


def _predicate(ref, **kw):
    return _unary(ref, grad=False, **kw)


def _sign(x):
    return x.copy() if x.dtype == np.bool_ else np.sign(x)  # np.sign has no bool loop


_LOOSE16 = {"float16": (5e-3, 1e-3), "bfloat16": (3e-2, 1e-2)}

OP_TABLE: dict[str, OpSpec] = {
    # arithmetic
    "add": _binary("add", lambda a, b, alpha=1: np.add(a, b if alpha == 1 else alpha * b),
                   dtypes=ALL),
    "sub": _binary("sub", np.subtract, dtypes=NO_BOOL),
    "mul": _binary("mul", np.multiply, dtypes=ALL),
    "div": OpSpec(div_samples, div_ref, errors=binary_errors("div")),
    "floor_divide": _binary("floor_divide", np.floor_divide, dtypes=INTEGRAL, grad=False),
    "remainder": _binary("remainder", np.remainder),
    "fmod": _binary("fmod", np.fmod),
    "pow": OpSpec(pow_samples, np.power, domain=POSITIVE, errors=binary_errors("pow")),
    "float_power": OpSpec(float_power_samples, lambda a, b: np.power(
        np.asarray(a, np.float64), b), domain=POSITIVE),
    "atan2": _binary("atan2", np.arctan2, other=REAL, scalar=False),
    "hypot": _binary("hypot", np.hypot, other=REAL, scalar=False),
    "maximum": _binary("maximum", np.maximum, other=REAL, dtypes=ALL, scalar=False),
    "minimum": _binary("minimum", np.minimum, other=REAL, dtypes=ALL, scalar=False),
    "fmax": _binary("fmax", np.fmax, other=REAL, scalar=False),
    "fmin": _binary("fmin", np.fmin, other=REAL, scalar=False),
    "copysign": _binary("copysign", np.copysign, other=NONZERO),
    "xlogy": _binary("xlogy", xlogy_ref, other=POSITIVE),
    # comparisons, logical, bitwise
    # comparisons round a Python-number operand to the tensor's dtype first (as torch does),
    # so their reference runs in that dtype too
    **{n: _binary(n, compare_ref(f), other=REAL, upcast=False, dtypes=ALL, grad=False)
       for n, f in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                    ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal))},
    **{n: _binary(n, f, other=REAL, dtypes=ALL, grad=False, scalar=False) for n, f in (
        ("logical_and", np.logical_and), ("logical_or", np.logical_or),
        ("logical_xor", np.logical_xor))},
    **{n: _binary(n, f, other=REAL, dtypes=INTEGRAL, grad=False) for n, f in (
        ("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
        ("bitwise_xor", np.bitwise_xor))},
    "bitwise_left_shift": _binary("bitwise_left_shift", np.left_shift, other=SHIFT,
                                  dtypes=INTEGRAL, grad=False),
    "bitwise_right_shift": _binary("bitwise_right_shift", np.right_shift, other=SHIFT,
                                   dtypes=INTEGRAL, grad=False),
    # unary math
    "neg": _unary(np.negative, dtypes=NO_BOOL),
    "abs": _unary(np.abs, dtypes=NO_BOOL),
    "sign": _unary(_sign, dtypes=ALL),
    "sgn": _unary(np.sign),
    # angle of a real number: pi below zero, 0 otherwise, NaN kept; torch parity (real and
    # complex) is in tests/ops/test_complex.py (parity=False keeps the fuzzer's draws as they were)
    "angle": _unary(lambda x: np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0.0)),
                    parity=False),
    "exp": _unary(np.exp), "exp2": _unary(np.exp2), "expm1": _unary(np.expm1),
    "square": _unary(np.square),
    "sin": _unary(np.sin), "cos": _unary(np.cos), "tan": _unary(np.tan, UNIT),
    "atan": _unary(np.arctan), "sinh": _unary(np.sinh), "cosh": _unary(np.cosh),
    "tanh": _unary(np.tanh), "asinh": _unary(np.arcsinh),
    "asin": _unary(np.arcsin, UNIT), "acos": _unary(np.arccos, UNIT),
    "atanh": _unary(np.arctanh, UNIT), "acosh": _unary(np.arccosh, GE1),
    "sigmoid": _unary(sp.expit),
    "erf": _unary(sp.erf), "erfc": _unary(sp.erfc), "erfinv": _unary(sp.erfinv, UNIT),
    "floor": _unary(np.floor), "ceil": _unary(np.ceil), "trunc": _unary(np.trunc),
    "frac": _unary(lambda x: x - np.trunc(x)),
    "relu": _unary(lambda x: np.maximum(x, 0)),
    "sinc": _unary(np.sinc),
    "deg2rad": _unary(np.deg2rad), "rad2deg": _unary(np.rad2deg),
    "log": _unary(np.log, POSITIVE), "log2": _unary(np.log2, POSITIVE),
    "log10": _unary(np.log10, POSITIVE), "log1p": _unary(np.log1p, POSITIVE),
    "sqrt": _unary(np.sqrt, POSITIVE), "rsqrt": _unary(lambda x: 1 / np.sqrt(x), POSITIVE),
    "lgamma": _unary(sp.gammaln, POSITIVE),
    "digamma": _unary(sp.digamma, POSITIVE),
    # special functions (ember/ops/special.py)
    "i0": _unary(sp.i0),
    "polygamma": OpSpec(spc.polygamma_samples, spc.polygamma_ref),
    "mvlgamma": OpSpec(spc.mvlgamma_samples, spc.mvlgamma_ref),
    "igamma": OpSpec(spc.igamma_samples, spc.igamma_ref(upper=False),
                     grad_samples=spc.igamma_grad_samples),
    "igammac": OpSpec(spc.igamma_samples, spc.igamma_ref(upper=True),
                      grad_samples=spc.igamma_grad_samples),
    "reciprocal": _unary(np.reciprocal, NONZERO),
    "round": OpSpec(round_samples, lambda x, decimals=0: np.round(x, decimals)),
    "gelu": OpSpec(gelu_samples, gelu_ref, torch_name="nn.functional.gelu"),
    "logit": OpSpec(logit_samples, logit_ref, domain=OPEN_UNIT),
    "nan_to_num": OpSpec(nan_to_num_samples, nan_to_num_ref, grad=False, upcast=False),
    # (isnan/isinf/isfinite take no out=, as torch's)
    **{n: OpSpec(nan_inf_samples, getattr(np, n), dtypes=ALL if n in (
        "isnan", "isinf", "isfinite") else FLOATING, grad=False,
        out=n not in ("isnan", "isinf", "isfinite"))
       for n in ("isnan", "isinf", "isfinite", "isposinf", "isneginf")},
    # NaN's sign bit depends on how it was made, so signbit gets -0.0 and infinities instead
    "signbit": OpSpec(signbit_samples, np.signbit, grad=False),
    "isreal": OpSpec(nan_inf_samples, np.isreal, grad=False),
    "logical_not": _predicate(np.logical_not, dtypes=ALL),
    "bitwise_not": _predicate(np.invert, dtypes=INTEGRAL),
    "clamp": OpSpec(clamp_samples, clamp_ref, dtypes=ALL, errors=clamp_errors),
    "clamp_min": OpSpec(functools.partial(_U, min=-0.5), lambda x, min: np.maximum(x, min)),
    "clamp_max": OpSpec(functools.partial(_U, max=0.5), lambda x, max: np.minimum(x, max)),
    "lerp": OpSpec(lerp_samples, lambda a, b, w: a + w * (b - a)),
    "addcmul": OpSpec(addc_samples, lambda x, a, b, value=1: x + value * a * b),
    "addcdiv": OpSpec(addc_samples, lambda x, a, b, value=1: x + value * a / b),
    "where": OpSpec(where_samples, np.where, dtypes=ALL),
    # reductions
    "sum": OpSpec(reduction_samples, reduce_ref(np.sum), dtypes=ALL),
    "mean": OpSpec(reduction_samples, reduce_ref(np.mean)),
    "nansum": OpSpec(nan_samples("nansum"), reduce_ref(np.nansum)),
    "nanmean": OpSpec(nan_samples("nanmean"), reduce_ref(np.nanmean)),
    "prod": OpSpec(prod_samples, reduce_ref(np.prod), dtypes=ALL),
    "amax": OpSpec(amax_samples, reduce_ref(np.max), dtypes=ALL),
    "amin": OpSpec(amax_samples, reduce_ref(np.min), dtypes=ALL),
    "max": OpSpec(max_min_samples, max_ref(np.max, np.argmax, np.maximum), dtypes=ALL),
    "min": OpSpec(max_min_samples, max_ref(np.min, np.argmin, np.minimum), dtypes=ALL),
    "argmax": OpSpec(arg_samples, reduce_ref(np.argmax), dtypes=NO_BOOL, edge=False,
                     grad=False),
    "argmin": OpSpec(arg_samples, reduce_ref(np.argmin), dtypes=NO_BOOL, edge=False,
                     grad=False),
    "var": OpSpec(var_samples, var_ref(np.var), tol=_LOOSE16),
    "std": OpSpec(var_samples, var_ref(np.std), tol=_LOOSE16),
    "var_mean": OpSpec(var_samples, var_mean_ref(np.var), tol=_LOOSE16),
    "std_mean": OpSpec(var_samples, var_mean_ref(np.std), tol=_LOOSE16),
    "logsumexp": OpSpec(logsumexp_samples, logsumexp_ref, tol=_LOOSE16),
    "all": OpSpec(all_any_samples, reduce_ref(np.all), dtypes=ALL, grad=False),
    "any": OpSpec(all_any_samples, reduce_ref(np.any), dtypes=ALL, grad=False),
    "count_nonzero": OpSpec(count_nonzero_samples, lambda x, dim=None: np.count_nonzero(
        x, axis=np_axis(dim)), dtypes=ALL, grad=False),
    "cumsum": OpSpec(cumulative_samples, cum_ref(np.cumsum), dtypes=ALL, tol=_LOOSE16),
    "cumprod": OpSpec(cumulative_samples, cum_ref(np.cumprod), tol=_LOOSE16),
    # views and shape ops
    "view": OpSpec(shape_samples("view"), lambda x, shape: x.reshape(shape), dtypes=ALL,
                   noncontig=False, parity=False),
    "reshape": OpSpec(shape_samples("reshape"), lambda x, shape: x.reshape(shape), dtypes=ALL),
    "permute": OpSpec(shape_samples("permute"), lambda x, dims: np.transpose(x, dims),
                      dtypes=ALL),
    "transpose": OpSpec(shape_samples("transpose"), lambda x, a, b: np.swapaxes(x, a, b)
                        if x.ndim else x, dtypes=ALL),
    "swapaxes": OpSpec(shape_samples("transpose"), lambda x, a, b: np.swapaxes(x, a, b)
                       if x.ndim else x, dtypes=ALL),
    "t": OpSpec(shape_samples("t"), lambda x: x.T, dtypes=ALL),
    "adjoint": OpSpec(shape_samples("adjoint"), lambda x: np.swapaxes(x, -1, -2), edge=False),
    "expand": OpSpec(shape_samples("expand"), lambda x, *s: np.broadcast_to(
        x, tuple(x.shape[i - len(s) + x.ndim] if v == -1 else v for i, v in enumerate(s))),
        dtypes=ALL, parity=False),
    "broadcast_to": OpSpec(shape_samples("broadcast_to"), np.broadcast_to, dtypes=ALL),
    "squeeze": OpSpec(shape_samples("squeeze"), lambda x, dim=None: np.squeeze(x, axis=tuple(
        d for d in ((dim,) if isinstance(dim, int) else dim or range(x.ndim))
        if x.shape[d] == 1)), dtypes=ALL),
    "unsqueeze": OpSpec(shape_samples("unsqueeze"), lambda x, d: np.expand_dims(x, d),
                        dtypes=ALL),
    "flatten": OpSpec(shape_samples("flatten"), lambda x, s=0, e=-1: x.reshape(
        x.shape[:s] + (-1,) + x.shape[e % x.ndim + 1:]) if x.ndim else x.reshape(1),
        dtypes=ALL),
    "unflatten": OpSpec(shape_samples("unflatten"), lambda x, d, sizes: x.reshape(
        x.shape[:d % x.ndim] + tuple(sizes) + x.shape[d % x.ndim + 1:]), dtypes=ALL,
        edge=False),
    "ravel": OpSpec(shape_samples("ravel"), np.ravel, dtypes=ALL),
    "clone": OpSpec(shape_samples("clone"), np.copy, dtypes=ALL),
    "as_strided": OpSpec(shape_samples("as_strided"), as_strided_ref, dtypes=ALL,
                         noncontig=False),
    "narrow": OpSpec(shape_samples("narrow"), lambda x, d, s, n: np.take(
        x, range(s % x.shape[d] if x.shape[d] else 0, (s % x.shape[d] if x.shape[d] else 0)
                 + n), axis=d), dtypes=ALL, edge=False),
    "narrow_copy": OpSpec(shape_samples("narrow_copy"), lambda x, d, s, n: np.take(
        x, range(s % x.shape[d], s % x.shape[d] + n), axis=d), dtypes=ALL, edge=False),
    "select": OpSpec(shape_samples("select"), lambda x, d, i: np.take(x, i, axis=d),
                     dtypes=ALL, edge=False),
    "unbind": OpSpec(shape_samples("unbind"), lambda x, d=0: tuple(
        np.take(x, i, axis=d) for i in range(x.shape[d])), dtypes=ALL, edge=False),
    "split": OpSpec(shape_samples("split"), split_ref, dtypes=ALL, edge=False),
    "chunk": OpSpec(shape_samples("chunk"), chunk_ref, dtypes=ALL, edge=False),
    "tensor_split": OpSpec(shape_samples("tensor_split"), tensor_split_ref, dtypes=ALL,
                           edge=False),
    "movedim": OpSpec(shape_samples("movedim"), np.moveaxis, dtypes=ALL, edge=False),
    "flip": OpSpec(shape_samples("flip"), lambda x, dims: np.flip(x, dims) if x.ndim else x,
                   dtypes=ALL),
    "fliplr": OpSpec(shape_samples("fliplr"), np.fliplr, dtypes=ALL, edge=False),
    "flipud": OpSpec(shape_samples("flipud"), np.flipud, dtypes=ALL, edge=False),
    "roll": OpSpec(shape_samples("roll"), lambda x, s, d=None: np.roll(x, s, d), dtypes=ALL,
                   edge=False),
    "rot90": OpSpec(shape_samples("rot90"), lambda x, k=1, dims=(0, 1): np.rot90(x, k, dims),
                    dtypes=ALL, edge=False),
    "tile": OpSpec(shape_samples("tile"), lambda x, reps: np.tile(x, reps), dtypes=ALL),
    "repeat_interleave": OpSpec(shape_samples("repeat_interleave"),
                                lambda x, r, dim=None: np.repeat(x, r, dim), dtypes=ALL),
    "tril": OpSpec(shape_samples("tril"), lambda x, k=0: np.tril(x, k), dtypes=ALL,
                   edge=False),
    "triu": OpSpec(shape_samples("triu"), lambda x, k=0: np.triu(x, k), dtypes=ALL,
                   edge=False),
    "diagonal": OpSpec(shape_samples("diagonal"), lambda x, o=0, d1=0, d2=1: np.diagonal(
        x, o, d1, d2), dtypes=ALL, edge=False),
    "diag_embed": OpSpec(shape_samples("diag_embed"), diag_embed_ref, dtypes=ALL, edge=False),
    "diag": OpSpec(shape_samples("diag"), lambda x, k=0: np.diag(x, k), dtypes=ALL,
                   edge=False),
    "diagflat": OpSpec(shape_samples("diagflat"), lambda x, k=0: np.diagflat(x, k),
                       dtypes=ALL, edge=False),
    "trace": OpSpec(shape_samples("trace"), np.trace, dtypes=NO_BOOL, edge=False),
    "cross": OpSpec(cross_samples, lambda a, b, dim=None: np.cross(
        *np.broadcast_arrays(a, b), axis=-1), dtypes=FLOATING + INTEGRAL, edge=False),
    "kron": OpSpec(kron_samples, np.kron, dtypes=ALL, edge=False),
    "cat": OpSpec(cat_samples, lambda xs, dim=0: np.concatenate(
        [x for x in xs if x.shape != (0,)] or xs[:1], axis=dim), dtypes=ALL, edge=False,
        errors=cat_errors),
    "stack": OpSpec(stack_samples, lambda xs, dim=0: np.stack(xs, axis=dim), dtypes=ALL),
    # indexing
    "gather": OpSpec(gather_samples, gather_ref, dtypes=ALL),
    "scatter": OpSpec(scatter_samples, scatter_ref, dtypes=ALL, edge=False),
    "scatter_add": OpSpec(scatter_add_samples, lambda x, d, i, s: scatter_ref(
        x, d, i, s, "add"), dtypes=ALL),
    "scatter_reduce": OpSpec(scatter_reduce_samples, scatter_reduce_ref, dtypes=ALL),
    "index_select": OpSpec(index_select_samples, index_select_ref, dtypes=ALL),
    "index_add": OpSpec(index_add_samples, index_add_ref, dtypes=ALL, edge=False),
    "index_copy": OpSpec(index_copy_samples, index_copy_ref, dtypes=ALL, edge=False),
    "index_fill": OpSpec(index_fill_samples, index_fill_ref, dtypes=ALL, edge=False),
    "take": OpSpec(take_samples, lambda x, i: np.take(x.reshape(-1), i), dtypes=ALL),
    "take_along_dim": OpSpec(take_along_dim_samples, take_along_dim_ref, dtypes=ALL,
                             edge=False),
    "masked_fill": OpSpec(masked_fill_samples, masked_fill_ref, dtypes=ALL),
    "masked_select": OpSpec(masked_select_samples, masked_select_ref, dtypes=ALL),
    "masked_scatter": OpSpec(masked_scatter_samples, masked_scatter_ref, dtypes=ALL),
    "index_put": OpSpec(index_put_samples, index_put_ref, dtypes=ALL, edge=False),
    "nonzero": OpSpec(nonzero_samples, np.argwhere, dtypes=ALL, grad=False),
    "argwhere": OpSpec(nonzero_samples, np.argwhere, dtypes=ALL, grad=False),
    # products
    "matmul": OpSpec(matmul_samples, matmul_ref, dtypes=NO_BOOL, errors=matmul_errors(
        "matmul"), tol=_LOOSE16, edge=False),  # 0-d operands are an error sample
    "mm": OpSpec(product_samples("mm"), np.matmul, dtypes=NO_BOOL, errors=mm_errors,
                 edge=False, tol=_LOOSE16),
    "bmm": OpSpec(product_samples("bmm"), np.matmul, dtypes=NO_BOOL, errors=bmm_errors,
                  edge=False, tol=_LOOSE16),
    "mv": OpSpec(product_samples("mv"), np.matmul, dtypes=NO_BOOL, edge=False, tol=_LOOSE16),
    "dot": OpSpec(product_samples("dot"), np.dot, dtypes=NO_BOOL, edge=False, tol=_LOOSE16),
    "outer": OpSpec(product_samples("outer"), np.outer, dtypes=NO_BOOL, edge=False),
    "addmm": OpSpec(product_samples("addmm"), addmm_like(np.matmul), dtypes=NO_BOOL,
                    tol=_LOOSE16),
    "baddbmm": OpSpec(product_samples("baddbmm"), addmm_like(np.matmul), dtypes=NO_BOOL,
                      edge=False, tol=_LOOSE16),
    "addbmm": OpSpec(product_samples("addbmm"), addmm_like(
        lambda a, b: np.matmul(a, b).sum(0)), dtypes=NO_BOOL, edge=False, tol=_LOOSE16),
    "addmv": OpSpec(product_samples("addmv"), addmm_like(np.matmul), dtypes=NO_BOOL,
                    tol=_LOOSE16),
    "addr": OpSpec(product_samples("addr"), addmm_like(np.outer), dtypes=NO_BOOL, edge=False,
                   tol=_LOOSE16),
    "einsum": OpSpec(einsum_samples, np.einsum, edge=False, tol=_LOOSE16),
    "tensordot": OpSpec(tensordot_samples, lambda a, b, dims=2: np.tensordot(a, b, dims),
                        edge=False, tol=_LOOSE16),
    # sorting and order statistics
    "sort": OpSpec(so.sort_samples, so.sort_ref, dtypes=ALL),
    "argsort": OpSpec(so.sort_samples, so.argsort_ref, dtypes=ALL, grad=False),
    "msort": OpSpec(so.msort_samples, so.msort_ref, dtypes=ALL),
    "topk": OpSpec(so.topk_samples, so.topk_ref, dtypes=NO_BOOL),
    "kthvalue": OpSpec(so.kthvalue_samples, so.kthvalue_ref, dtypes=NO_BOOL, edge=False),
    # out= only with dim (torch's overload without dim takes none): the (values, indices) form
    # is tested in tests/ops/test_sorting.py
    "median": OpSpec(so.median_samples, so.median_ref(), dtypes=NO_BOOL, edge=False, out=False),
    "nanmedian": OpSpec(so.nanmedian_samples, so.median_ref(ignore_nan=True), dtypes=NO_BOOL,
                        edge=False, out=False),
    "mode": OpSpec(so.mode_samples, so.mode_ref, dtypes=ALL, edge=False,
                   grad_samples=so.mode_grad_samples),
    "quantile": OpSpec(so.quantile_samples, so.quantile_ref(np.quantile),
                      dtypes=SINGLE_DOUBLE, edge=False,
                      grad_samples=so.quantile_grad_samples(so.quantile_samples)),
    "nanquantile": OpSpec(so.nanquantile_samples, so.quantile_ref(np.nanquantile),
                          dtypes=SINGLE_DOUBLE, edge=False,
                          grad_samples=so.quantile_grad_samples(so.nanquantile_samples)),
    "unique": OpSpec(so.unique_samples, so.unique_ref, dtypes=ALL, grad=False),
    "unique_consecutive": OpSpec(so.unique_consecutive_samples, so.unique_consecutive_ref,
                                 dtypes=ALL, grad=False),
    "cummax": OpSpec(so.cum_extreme_samples, so.cum_extreme_ref(np.maximum), dtypes=ALL),
    "cummin": OpSpec(so.cum_extreme_samples, so.cum_extreme_ref(np.minimum), dtypes=ALL),
    "logcumsumexp": OpSpec(so.logcumsumexp_samples, so.logcumsumexp_ref, tol=_LOOSE16),
    "histc": OpSpec(so.histc_samples, so.histc_ref, grad=False),
    "bincount": OpSpec(so.bincount_samples, so.bincount_ref, dtypes=INTEGRAL, grad=False,
                       upcast=False, edge=False),
}

def _la(samples, ref, **kw):
    """A linalg op: LAPACK works in float32 and float64 only, and matrices have no 0-d or
    empty samples here (tests/test_linalg.py covers those)."""
    return OpSpec(samples, ref, dtypes=SINGLE_DOUBLE, edge=False, **kw)


# tolerances for results that go through a factorization in float32
_LA32 = {"float32": (1e-4, 1e-5)}
# singular and eigen-vectors are unique up to sign: NumPy's and torch's LAPACK calls may pick
# different ones, so their values are compared with NumPy's (same calls) but not with torch's
_SIGNS = dict(parity=False)

OP_TABLE.update({
    "linalg.inv": _la(la.square_samples, np.linalg.inv, tol=_LA32),
    "linalg.inv_ex": _la(la.square_samples, la.inv_ex_ref, tol=_LA32),
    "inverse": _la(la.square_samples, np.linalg.inv, tol=_LA32, out=True),
    "linalg.det": _la(la.square_samples, np.linalg.det, tol=_LA32, out=False),
    "det": _la(la.square_samples, np.linalg.det, tol=_LA32, out=False),
    "linalg.slogdet": _la(la.square_samples, np.linalg.slogdet, tol=_LA32, out=False),
    "slogdet": _la(la.square_samples, np.linalg.slogdet, tol=_LA32, out=False),
    "linalg.logdet": _la(la.spd_samples, la.logdet_ref, tol=_LA32, out=False),
    "logdet": _la(la.spd_samples, la.logdet_ref, tol=_LA32, out=False),
    "linalg.solve": _la(la.solve_samples, la.solve_ref, tol=_LA32),
    "linalg.solve_ex": _la(la.solve_samples, la.solve_ex_ref, tol=_LA32),
    "linalg.solve_triangular": _la(la.solve_triangular_samples, la.solve_triangular_ref,
                                   tol=_LA32),
    "linalg.cholesky": _la(la.spd_samples, la.cholesky_ref, tol=_LA32, hermitian=True),
    "linalg.cholesky_ex": _la(la.spd_samples, la.cholesky_ex_ref, tol=_LA32, hermitian=True),
    "cholesky": _la(la.spd_samples, la.cholesky_ref, tol=_LA32, hermitian=True),
    "linalg.qr": _la(la.rect_samples, la.qr_ref, tol=_LA32),
    "qr": _la(la.rect_samples, la.legacy_qr_ref, tol=_LA32),
    "linalg.svd": _la(functools.partial(la.rect_samples, full_matrices=False), la.svd_ref,
                      tol=_LA32, **_SIGNS),
    "svd": _la(la.rect_samples, la.legacy_svd_ref, tol=_LA32, **_SIGNS),
    "linalg.svdvals": _la(la.rect_samples, lambda A, driver=None: np.linalg.svd(
        A, compute_uv=False), tol=_LA32),
    "linalg.eigh": _la(la.spd_samples, la.eigh_ref, tol=_LA32, hermitian=True, **_SIGNS),
    "linalg.eigvalsh": _la(la.spd_samples, lambda A, UPLO="L": np.linalg.eigvalsh(A),
                           tol=_LA32, hermitian=True),
    "linalg.pinv": _la(la.rect_samples, la.pinv_ref, tol=_LA32),
    "pinverse": _la(la.rect_samples, la.pinverse_ref, tol=_LA32, out=False),
    # the rank's threshold scales with the dtype's eps: the reference runs in the input dtype
    "linalg.matrix_rank": _la(la.matrix_rank_samples, la.matrix_rank_ref, grad=False,
                              upcast=False),
    "linalg.matrix_power": _la(la.matrix_power_samples, np.linalg.matrix_power, tol=_LA32),
    "matrix_power": _la(la.matrix_power_samples, np.linalg.matrix_power, tol=_LA32),
    "linalg.matrix_exp": _la(la.matrix_exp_samples, la.matrix_exp_ref, tol=_LA32, out=False),
    "matrix_exp": _la(la.matrix_exp_samples, la.matrix_exp_ref, tol=_LA32, out=False),
    "linalg.cross": _la(la.cross_vector_samples, la.cross_ref),
    "linalg.vecdot": _la(la.vector_samples, la.vecdot_ref),
    "linalg.multi_dot": _la(la.multi_dot_samples, la.multi_dot_ref, tol=_LA32),
    "linalg.diagonal": _la(la.diagonal_samples, la.diagonal_ref, out=False),
    "linalg.matmul": _la(la.matmul_samples, np.matmul, tol=_LA32),
    "linalg.vector_norm": _la(la.vector_norm_samples, la.vector_norm_ref, tol=_LA32),
    "linalg.matrix_norm": _la(la.matrix_norm_samples, la.matrix_norm_ref, tol=_LA32),
    "linalg.norm": _la(la.norm_samples, la.norm_ref, tol=_LA32),
    "norm": _la(la.torch_norm_samples, la.torch_norm_ref, tol=_LA32),
    "dist": _la(la.dist_samples, la.dist_ref, tol=_LA32, out=False),
    # LU: pivots are LAPACK's, so NumPy/SciPy's getrf is the reference
    "linalg.lu_factor": _la(lf.lu_factor_samples, lf.lu_factor_ref, tol=_LA32,
                            errors=lf.lu_factor_errors, grad_samples=lf.lu_grad_samples),
    "linalg.lu_factor_ex": _la(lf.lu_factor_samples, lf.lu_factor_ex_ref, tol=_LA32,
                               grad_samples=lf.lu_alias_grad_samples),
    "linalg.lu": _la(lf.lu_factor_samples, lf.lu_ref, tol=_LA32, grad_samples=lf.lu_grad_samples),
    "lu": _la(lf.legacy_lu_samples, lf.legacy_lu_ref, tol=_LA32,
              grad_samples=lf.lu_alias_grad_samples),
    "lu_unpack": _la(lf.lu_unpack_samples, lf.lu_unpack_ref),
    "linalg.lu_solve": _la(lf.lu_solve_samples, lf.lu_solve_ref, tol=_LA32,
                           grad_samples=lf.lu_solve_grad_samples),
    "lu_solve": _la(lf.legacy_lu_solve_samples, lf.legacy_lu_solve_ref, tol=_LA32,
                    grad_samples=lf.legacy_lu_solve_grad_samples),
    # LDL: not differentiable in torch either
    "linalg.ldl_factor": _la(lf.ldl_samples, lf.ldl_factor_ref, tol=_LA32, grad=False),
    "linalg.ldl_factor_ex": _la(lf.ldl_samples, lf.ldl_factor_ex_ref, tol=_LA32, grad=False),
    "linalg.ldl_solve": _la(lf.ldl_solve_samples, lf.ldl_solve_ref, tol=_LA32, grad=False),
    # Householder
    "geqrf": _la(lf.geqrf_samples, lf.geqrf_ref, tol=_LA32, grad=False),
    "linalg.householder_product": _la(lf.householder_samples, lf.householder_ref, tol=_LA32,
                                      errors=lf.householder_errors),
    "orgqr": _la(lf.householder_samples, lf.householder_ref, tol=_LA32, out=False),
    "ormqr": _la(lf.ormqr_samples, lf.ormqr_ref, tol=_LA32),
    # solves from factors
    "cholesky_solve": _la(lf.cholesky_solve_samples, lf.cholesky_solve_ref, tol=_LA32,
                          grad_wrapper=lf.triangular_factor_solve),
    "cholesky_inverse": _la(lf.cholesky_inverse_samples, lf.cholesky_inverse_ref, tol=_LA32,
                            grad_wrapper=lf.triangular_factor_inverse),
    "triangular_solve": _la(lf.triangular_solve_samples, lf.triangular_solve_ref, tol=_LA32,
                            grad_samples=lf.triangular_solve_grad_samples),
    # built from other linalg ops
    "linalg.cond": _la(lf.cond_samples, lf.cond_ref, tol=_LA32, errors=lf.cond_errors),
    "linalg.tensorinv": _la(lf.tensorinv_samples, lf.tensorinv_ref, tol=_LA32,
                            errors=lf.tensor_errors),
    "linalg.tensorsolve": _la(lf.tensorsolve_samples, lf.tensorsolve_ref, tol=_LA32),
    "linalg.vander": OpSpec(lf.vander_samples, lf.vander_ref, edge=False, out=False,
                            dtypes=(D.float32, D.float64, D.int32, D.int64),
                            errors=lf.vander_errors),
    # eig: complex results; eigenvectors are compared as LAPACK's geev normalizes them (NumPy
    # and torch call the same routine), gradients through a phase-free view (see phase_free_eig)
    # (torch's LAPACK may return an eigenvector times -1: eig's values are compared with NumPy's)
    "linalg.eig": _la(lf.eig_samples, lf.eig_ref, tol=_LA32, grad_wrapper=lf.phase_free_eig,
                      **_SIGNS),
    "linalg.eigvals": _la(lf.eig_samples, lf.eigvals_ref, tol=_LA32, grad_wrapper=lf.real_imag),
    "nuclear_norm": _la(lf.nuclear_norm_samples, lf.nuclear_norm_ref, tol=_LA32),
    "frobenius_norm": _la(lf.frobenius_norm_samples, lf.frobenius_norm_ref, tol=_LA32),
})

# Registered ops without a line yet, each with the reason and where they are tested instead.
# The completeness test accepts these names; an entry here is debt, not a way out.
_COMPLEX_OPS = "complex-valued: the generic suite samples real dtypes; tests/ops/test_complex.py"
NOT_IN_TABLE: dict[str, str] = {
    # the complex-number ops take or return complex tensors; their values, gradients
    # (gradcheck / gradgradcheck) and torch parity are in tests/ops/test_complex.py
    **{n: _COMPLEX_OPS for n in ("complex", "conj", "conj_physical", "imag", "polar", "real",
                                 "resolve_conj", "resolve_neg", "view_as_complex",
                                 "view_as_real")},
    "linalg.lstsq": "its residuals / rank / singular-value outputs depend on the LAPACK driver "
                    "(torch's default gelsy returns empty residuals); tests/test_linalg.py",
}
