"""The op database table: ``OP_TABLE`` maps an op name to an ``OpSpec`` holding a sample
generator ``samples(rng, dtype)`` (ember/testing/_generators.py), a NumPy reference with the op's
own calling convention (ember/testing/_refs.py) and the input domain (positive-only for
log/sqrt, (-1, 1) for asin/atanh, ...). ``op_db()`` merges the table with the registry
(``ember.ops.registry.OPS``) and with public functions the registry does not record (cat, stack,
where, einsum), so one generic test file (tests/ops/test_op_db.py) can run forward-vs-reference,
gradcheck, method/in-place/out= agreement, non-contiguous inputs and torch parity for every op.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ._generators import (
    GE1,
    NONZERO,
    OPEN_UNIT,
    POSITIVE,
    REAL,
    SHIFT,
    UNIT,
    ErrorInput,
    SampleInput,
    addc_samples,
    all_any_samples,
    amax_samples,
    arg_samples,
    binary_errors,
    binary_samples,
    bmm_errors,
    cat_errors,
    cat_samples,
    clamp_errors,
    clamp_samples,
    count_nonzero_samples,
    cross_samples,
    cumulative_samples,
    div_samples,
    einsum_samples,
    float_power_samples,
    gather_samples,
    gelu_samples,
    index_add_samples,
    index_copy_samples,
    index_fill_samples,
    index_put_samples,
    index_select_samples,
    kron_samples,
    lerp_samples,
    logit_samples,
    logsumexp_samples,
    masked_fill_samples,
    masked_scatter_samples,
    masked_select_samples,
    matmul_errors,
    matmul_samples,
    max_min_samples,
    mm_errors,
    nan_inf_samples,
    nan_samples,
    nan_to_num_samples,
    nonzero_samples,
    pow_samples,
    prod_samples,
    product_samples,
    reduction_samples,
    round_samples,
    scatter_add_samples,
    scatter_reduce_samples,
    scatter_samples,
    shape_samples,
    signbit_samples,
    stack_samples,
    take_along_dim_samples,
    take_samples,
    tensordot_samples,
    unary_samples,
    var_samples,
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

__all__ = [
    "OP_TABLE",
    "ErrorInput",
    "OpEntry",
    "OpSpec",
    "SampleInput",
    "binary_samples",
    "call",
    "map_tensors",
    "op_db",
    "tensors_of",
    "unary_samples",
]


@dataclass
class OpSpec:
    """What the table knows about an op beyond its registration."""

    samples: Callable
    ref: Callable | None = None
    domain: tuple | None = None
    tol: dict = field(default_factory=dict)   # dtype name -> (rtol, atol) for forward checks
    gradgrad: bool = False                    # run gradgradcheck (the core ops)
    grad: bool = True                         # gradcheck applies
    noncontig: bool = True                    # op accepts arbitrary strided inputs
    torch_name: str | None = None             # dotted path under torch when named differently
    parity: bool = True                       # compare with torch
    edge: bool = True                         # samples must include a 0-d and an empty input
    upcast: bool = True                       # run the reference on float64 copies of floats
    errors: Callable | None = None            # (rng, dtype) -> list[ErrorInput]


# ---------------------------------------------------------------------------------------------
# the table

_U = unary_samples
_B = binary_samples


def _unary(domain=REAL, **kw):
    return OpSpec(functools.partial(_U, domain=domain), domain=domain, **kw)


def _binary(name, domain=REAL, other=NONZERO, **kw):
    return OpSpec(functools.partial(_B, domain=domain, other_domain=other), domain=domain,
                  errors=binary_errors(name), **kw)


def _reduction(samples=reduction_samples, ref=None, **kw):
    return OpSpec(samples, ref=ref, **kw)


_CORE_UNARY = {"exp", "log", "tanh", "sigmoid", "sin", "sqrt", "abs", "relu"}  # gradgradcheck
_LOOSE16 = {"float16": (5e-3, 1e-3), "bfloat16": (3e-2, 1e-2)}

OP_TABLE: dict[str, OpSpec] = {
    # arithmetic
    "add": _binary("add", gradgrad=True, ref=lambda a, b, alpha=1: np.add(a, b if alpha == 1
                                                                             else alpha * b)),
    "sub": _binary("sub", gradgrad=True),
    "mul": _binary("mul", gradgrad=True),
    "div": OpSpec(div_samples, ref=div_ref, gradgrad=True, errors=binary_errors("div")),
    "floor_divide": _binary("floor_divide", ref=np.floor_divide),
    "remainder": _binary("remainder"), "fmod": _binary("fmod"),
    "pow": OpSpec(pow_samples, ref=np.power, domain=POSITIVE, gradgrad=True,
                  errors=binary_errors("pow")),
    "float_power": OpSpec(float_power_samples, ref=lambda a, b: np.power(
        np.asarray(a, np.float64), b), domain=POSITIVE),
    "atan2": _binary("atan2", other=REAL), "hypot": _binary("hypot", other=REAL),
    "maximum": _binary("maximum", other=REAL), "minimum": _binary("minimum", other=REAL),
    "fmax": _binary("fmax", other=REAL), "fmin": _binary("fmin", other=REAL),
    "copysign": _binary("copysign", other=NONZERO),
    "xlogy": _binary("xlogy", other=POSITIVE, ref=xlogy_ref),
    # comparisons, logical, bitwise
    # comparisons round a Python-number operand to the tensor's dtype first (as torch does),
    # so their reference runs in that dtype too
    **{n: _binary(n, other=REAL, upcast=False, ref=compare_ref(f)) for n, f in (
        ("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
        ("gt", np.greater), ("ge", np.greater_equal))},
    **{n: _binary(n, other=REAL) for n in ("logical_and",
                                           "logical_or", "logical_xor", "bitwise_and",
                                           "bitwise_or", "bitwise_xor")},
    "bitwise_left_shift": _binary("bitwise_left_shift", other=SHIFT),
    "bitwise_right_shift": _binary("bitwise_right_shift", other=SHIFT),
    # unary math
    **{n: _unary(gradgrad=n in _CORE_UNARY) for n in (
        "neg", "exp", "exp2", "expm1", "square", "sin", "cos", "atan",
                             "sinh", "cosh", "tanh", "asinh", "sigmoid", "erf", "erfc", "abs",
                             "sign", "sgn", "floor", "ceil", "trunc", "frac", "relu", "sinc",
                             "deg2rad", "rad2deg")},
    "tan": _unary(UNIT),
    **{n: _unary(POSITIVE, gradgrad=n in _CORE_UNARY) for n in (
        "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
                                     "lgamma", "digamma")},
    "reciprocal": _unary(NONZERO),
    **{n: _unary(UNIT) for n in ("asin", "acos", "atanh", "erfinv")},
    "acosh": _unary(GE1),
    "round": OpSpec(round_samples, ref=lambda x, decimals=0: np.round(x, decimals)),
    "gelu": OpSpec(gelu_samples, ref=gelu_ref, gradgrad=True,
                   torch_name="nn.functional.gelu"),
    "logit": OpSpec(logit_samples, ref=logit_ref, domain=OPEN_UNIT, gradgrad=True),
    "nan_to_num": OpSpec(nan_to_num_samples, ref=nan_to_num_ref, grad=False, upcast=False),
    **{n: OpSpec(nan_inf_samples, ref=getattr(np, n)) for n in ("isnan", "isinf",
                                                                  "isfinite", "isposinf",
                                                                  "isneginf")},
    # NaN's sign bit depends on how it was made, so signbit gets -0.0 and infinities instead
    "signbit": OpSpec(signbit_samples, ref=np.signbit),
    "isreal": OpSpec(nan_inf_samples, ref=np.isreal),
    "logical_not": _unary(ref=np.logical_not),
    "bitwise_not": _unary(ref=np.invert),
    "clamp": OpSpec(clamp_samples, ref=clamp_ref, gradgrad=True, errors=clamp_errors),
    "clamp_min": OpSpec(functools.partial(_U, min=-0.5), ref=lambda x, min: np.maximum(x, min)),
    "clamp_max": OpSpec(functools.partial(_U, max=0.5), ref=lambda x, max: np.minimum(x, max)),
    "lerp": OpSpec(lerp_samples, ref=lambda a, b, w: a + w * (b - a)),
    "addcmul": OpSpec(addc_samples, ref=lambda x, a, b, value=1: x + value * a * b),
    "addcdiv": OpSpec(addc_samples, ref=lambda x, a, b, value=1: x + value * a / b),
    "where": OpSpec(where_samples, ref=np.where, gradgrad=True),
    # reductions
    "sum": _reduction(ref=reduce_ref(np.sum), gradgrad=True),
    "mean": _reduction(ref=reduce_ref(np.mean), gradgrad=True),
    "nansum": _reduction(nan_samples("nansum"), ref=reduce_ref(np.nansum)),
    "nanmean": _reduction(nan_samples("nanmean"), ref=reduce_ref(np.nanmean)),
    "prod": _reduction(prod_samples, ref=reduce_ref(np.prod)),
    "amax": _reduction(amax_samples, ref=reduce_ref(np.max), gradgrad=True),
    "amin": _reduction(amax_samples, ref=reduce_ref(np.min)),
    "max": OpSpec(max_min_samples, ref=max_ref(np.max, np.argmax, np.maximum), gradgrad=True),
    "min": OpSpec(max_min_samples, ref=max_ref(np.min, np.argmin, np.minimum)),
    "argmax": _reduction(arg_samples, ref=reduce_ref(np.argmax), edge=False),
    "argmin": _reduction(arg_samples, ref=reduce_ref(np.argmin), edge=False),
    "var": OpSpec(var_samples, ref=var_ref(np.var), tol=_LOOSE16),
    "std": OpSpec(var_samples, ref=var_ref(np.std), tol=_LOOSE16),
    "var_mean": OpSpec(var_samples, ref=var_mean_ref(np.var), tol=_LOOSE16),
    "std_mean": OpSpec(var_samples, ref=var_mean_ref(np.std), tol=_LOOSE16),
    "logsumexp": _reduction(logsumexp_samples, ref=logsumexp_ref, gradgrad=True, tol=_LOOSE16),
    "all": _reduction(all_any_samples, ref=reduce_ref(np.all)),
    "any": _reduction(all_any_samples, ref=reduce_ref(np.any)),
    "count_nonzero": OpSpec(count_nonzero_samples, ref=lambda x, dim=None: np.count_nonzero(
        x, axis=np_axis(dim))),
    "cumsum": OpSpec(cumulative_samples, ref=cum_ref(np.cumsum), tol=_LOOSE16),
    "cumprod": OpSpec(cumulative_samples, ref=cum_ref(np.cumprod), tol=_LOOSE16),
    # views and shape ops
    "view": OpSpec(shape_samples("view"), ref=lambda x, shape: x.reshape(shape),
                   noncontig=False, parity=False),
    "reshape": OpSpec(shape_samples("reshape"), ref=lambda x, shape: x.reshape(shape)),
    "permute": OpSpec(shape_samples("permute"), ref=lambda x, dims: np.transpose(x, dims)),
    "transpose": OpSpec(shape_samples("transpose"), ref=lambda x, a, b: np.swapaxes(x, a, b)
                        if x.ndim else x),
    "t": OpSpec(shape_samples("t"), ref=lambda x: x.T),
    "adjoint": OpSpec(shape_samples("adjoint"), ref=lambda x: np.swapaxes(x, -1, -2),
                      edge=False),
    "expand": OpSpec(shape_samples("expand"), ref=lambda x, *s: np.broadcast_to(
        x, tuple(x.shape[i - len(s) + x.ndim] if v == -1 else v for i, v in enumerate(s))),
        parity=False),
    "broadcast_to": OpSpec(shape_samples("broadcast_to"), ref=np.broadcast_to),
    "squeeze": OpSpec(shape_samples("squeeze"), ref=lambda x, dim=None: np.squeeze(x, axis=tuple(
        d for d in ((dim,) if isinstance(dim, int) else dim or range(x.ndim))
        if x.shape[d] == 1))),
    "unsqueeze": OpSpec(shape_samples("unsqueeze"), ref=lambda x, d: np.expand_dims(x, d)),
    "flatten": OpSpec(shape_samples("flatten"), ref=lambda x, s=0, e=-1: x.reshape(
        x.shape[:s] + (-1,) + x.shape[e % x.ndim + 1:]) if x.ndim else x.reshape(1)),
    "unflatten": OpSpec(shape_samples("unflatten"), ref=lambda x, d, sizes: x.reshape(
        x.shape[:d % x.ndim] + tuple(sizes) + x.shape[d % x.ndim + 1:]), edge=False),
    "ravel": OpSpec(shape_samples("ravel"), ref=np.ravel),
    "clone": OpSpec(shape_samples("clone"), ref=np.copy),
    "as_strided": OpSpec(shape_samples("as_strided"), ref=as_strided_ref, noncontig=False),
    "narrow": OpSpec(shape_samples("narrow"), ref=lambda x, d, s, n: np.take(
        x, range(s % x.shape[d] if x.shape[d] else 0, (s % x.shape[d] if x.shape[d] else 0)
                 + n), axis=d), edge=False),
    "select": OpSpec(shape_samples("select"), ref=lambda x, d, i: np.take(x, i, axis=d),
                     edge=False),
    "unbind": OpSpec(shape_samples("unbind"), ref=lambda x, d=0: tuple(
        np.take(x, i, axis=d) for i in range(x.shape[d])), edge=False),
    "split": OpSpec(shape_samples("split"), ref=split_ref, edge=False),
    "chunk": OpSpec(shape_samples("chunk"), ref=chunk_ref, edge=False),
    "tensor_split": OpSpec(shape_samples("tensor_split"), ref=tensor_split_ref, edge=False),
    "movedim": OpSpec(shape_samples("movedim"), ref=np.moveaxis, edge=False),
    # ember/ops/shape.py (not a core module: failures there are reported to its owner)
    "flip": OpSpec(shape_samples("flip"), ref=lambda x, dims: np.flip(x, dims) if x.ndim else x),
    "fliplr": OpSpec(shape_samples("fliplr"), ref=np.fliplr, edge=False),
    "flipud": OpSpec(shape_samples("flipud"), ref=np.flipud, edge=False),
    "roll": OpSpec(shape_samples("roll"), ref=lambda x, s, d=None: np.roll(x, s, d), edge=False),
    "rot90": OpSpec(shape_samples("rot90"), ref=lambda x, k=1, dims=(0, 1): np.rot90(x, k, dims),
                    edge=False),
    "tile": OpSpec(shape_samples("tile"), ref=lambda x, reps: np.tile(x, reps)),
    "repeat_interleave": OpSpec(shape_samples("repeat_interleave"),
                                ref=lambda x, r, dim=None: np.repeat(x, r, dim)),
    "tril": OpSpec(shape_samples("tril"), ref=lambda x, k=0: np.tril(x, k), edge=False),
    "triu": OpSpec(shape_samples("triu"), ref=lambda x, k=0: np.triu(x, k), edge=False),
    "diagonal": OpSpec(shape_samples("diagonal"), ref=lambda x, o=0, d1=0, d2=1: np.diagonal(
        x, o, d1, d2), edge=False),
    "diag_embed": OpSpec(shape_samples("diag_embed"), ref=diag_embed_ref, edge=False),
    "diag": OpSpec(shape_samples("diag"), ref=lambda x, k=0: np.diag(x, k), edge=False),
    "diagflat": OpSpec(shape_samples("diagflat"), ref=lambda x, k=0: np.diagflat(x, k),
                       edge=False),
    "trace": OpSpec(shape_samples("trace"), ref=np.trace, edge=False),
    "cross": OpSpec(cross_samples, ref=lambda a, b, dim=None: np.cross(
        *np.broadcast_arrays(a, b), axis=-1), edge=False),
    "kron": OpSpec(kron_samples, ref=np.kron, edge=False),
    "cat": OpSpec(cat_samples, ref=lambda xs, dim=0: np.concatenate(
        [x for x in xs if x.shape != (0,)] or xs[:1], axis=dim), edge=False, errors=cat_errors),
    "stack": OpSpec(stack_samples, ref=lambda xs, dim=0: np.stack(xs, axis=dim)),
    # indexing
    "gather": OpSpec(gather_samples, ref=gather_ref),
    "scatter": OpSpec(scatter_samples, ref=scatter_ref, edge=False),
    "scatter_add": OpSpec(scatter_add_samples, ref=lambda x, d, i, s: scatter_ref(
        x, d, i, s, "add")),
    "scatter_reduce": OpSpec(scatter_reduce_samples, ref=scatter_reduce_ref),
    "index_select": OpSpec(index_select_samples, ref=index_select_ref),
    "index_add": OpSpec(index_add_samples, ref=index_add_ref, edge=False),
    "index_copy": OpSpec(index_copy_samples, ref=index_copy_ref, edge=False),
    "index_fill": OpSpec(index_fill_samples, ref=index_fill_ref, edge=False),
    "take": OpSpec(take_samples, ref=lambda x, i: np.take(x.reshape(-1), i)),
    "take_along_dim": OpSpec(take_along_dim_samples, ref=take_along_dim_ref, edge=False),
    "masked_fill": OpSpec(masked_fill_samples, ref=masked_fill_ref),
    "masked_select": OpSpec(masked_select_samples, ref=masked_select_ref),
    "masked_scatter": OpSpec(masked_scatter_samples, ref=masked_scatter_ref),
    "index_put": OpSpec(index_put_samples, ref=index_put_ref, edge=False),
    "nonzero": OpSpec(nonzero_samples, ref=np.argwhere),
    "argwhere": OpSpec(nonzero_samples, ref=np.argwhere),
    # products
    "matmul": OpSpec(matmul_samples, ref=matmul_ref, gradgrad=True, errors=matmul_errors(
        "matmul"), tol=_LOOSE16, edge=False),  # 0-d operands are an error sample
    "mm": OpSpec(product_samples("mm"), ref=np.matmul, errors=mm_errors, edge=False,
                 tol=_LOOSE16),
    "bmm": OpSpec(product_samples("bmm"), ref=np.matmul, errors=bmm_errors, edge=False,
                  tol=_LOOSE16),
    "mv": OpSpec(product_samples("mv"), ref=np.matmul, edge=False, tol=_LOOSE16),
    "dot": OpSpec(product_samples("dot"), ref=np.dot, edge=False, tol=_LOOSE16),
    "outer": OpSpec(product_samples("outer"), ref=np.outer, edge=False),
    "addmm": OpSpec(product_samples("addmm"), ref=addmm_like(np.matmul), tol=_LOOSE16),
    "baddbmm": OpSpec(product_samples("baddbmm"), ref=addmm_like(np.matmul), edge=False,
                      tol=_LOOSE16),
    "addbmm": OpSpec(product_samples("addbmm"), ref=addmm_like(
        lambda a, b: np.matmul(a, b).sum(0)), edge=False, tol=_LOOSE16),
    "addmv": OpSpec(product_samples("addmv"), ref=addmm_like(np.matmul), tol=_LOOSE16),
    "addr": OpSpec(product_samples("addr"), ref=addmm_like(np.outer), edge=False,
                   tol=_LOOSE16),
    "einsum": OpSpec(einsum_samples, ref=np.einsum, edge=False, tol=_LOOSE16),
    "tensordot": OpSpec(tensordot_samples, ref=lambda a, b, dims=2: np.tensordot(a, b, dims),
                        edge=False, tol=_LOOSE16),
}

# Registered ops deliberately left without samples, with the reason (test_op_db checks that
# every other registered op has samples).
NO_SAMPLES = {}


# ---------------------------------------------------------------------------------------------
# the merged view


@dataclass
class OpEntry:
    """A registry OpInfo (or a synthetic one for unregistered public functions) + its spec."""

    name: str
    fn: Callable
    spec: OpSpec | None
    dtypes: tuple
    method: bool
    inplace: bool
    differentiable: bool
    gradgrad: bool

    @property
    def samples(self):
        return None if self.spec is None else self.spec.samples

    @property
    def ref(self):
        return None if self.spec is None else self.spec.ref


_DTYPES_OF_UNREGISTERED = {"cat": D.ALL, "stack": D.ALL, "where": D.ALL, "einsum": D.FLOATING,
                           "tensordot": D.FLOATING}


def op_db() -> list[OpEntry]:
    """Every op of the registry plus the table's unregistered public functions, by name."""
    from ..ops.registry import FUNCTIONS, OPS
    out = []
    for name, info in OPS.items():
        spec = OP_TABLE.get(name)
        if spec is None and info.samples is not None:  # samples given at registration
            spec = OpSpec(info.samples, ref=info.ref)
        elif spec is not None and spec.ref is None and info.ref is not None:
            spec = dataclasses.replace(spec, ref=info.ref)  # the registered reference
        if spec is not None and info.samples is None:
            info.samples = spec.samples
        if spec is not None and spec.ref is not None:
            info.extra.setdefault("numpy_ref", spec.ref)
        out.append(OpEntry(name, info.fn, spec, info.dtypes, info.method, info.inplace,
                           info.differentiable, info.gradgrad and (spec is None or
                                                                   spec.gradgrad)))
    for name, dts in _DTYPES_OF_UNREGISTERED.items():
        if name not in OPS:
            out.append(OpEntry(name, FUNCTIONS[name], OP_TABLE[name], dts, False, False, True,
                               OP_TABLE[name].gradgrad))
    return out


# ---------------------------------------------------------------------------------------------
# sample plumbing shared by the generic tests


def defining_module(fn) -> str:
    """The module that implements a registered op (looks through the registry's wrapper)."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    impl = cells["impl"].cell_contents if "impl" in cells else fn
    owner = getattr(impl, "__self__", impl)  # Op.apply is bound to the Op class
    return getattr(owner, "__module__", "")


def map_tensors(obj, f):
    """obj with every Tensor inside (tuples, lists, dict values) replaced by f(tensor)."""
    if isinstance(obj, Tensor):
        return f(obj)
    if isinstance(obj, SampleInput):
        return SampleInput(map_tensors(obj.input, f), map_tensors(obj.args, f),
                           map_tensors(obj.kwargs, f), obj.name)
    if isinstance(obj, tuple):
        return tuple(map_tensors(o, f) for o in obj)
    if isinstance(obj, list):
        return [map_tensors(o, f) for o in obj]
    if isinstance(obj, dict):
        return {k: map_tensors(v, f) for k, v in obj.items()}
    return obj


def tensors_of(obj) -> list[Tensor]:
    """The tensors inside obj, in the order map_tensors visits them."""
    found = []
    map_tensors(obj, lambda t: found.append(t) or t)
    return found


def call(fn, sample, **extra):
    return fn(sample.input, *sample.args, **sample.kwargs, **extra)
