"""ONNX translations of special functions ONNX has no operator for (lgamma, digamma, polygamma
of order 0, mvlgamma, erfinv, i0), and of linalg helpers built from other translations
(vander, tensorinv, tensorsolve, matrix_norm) and as_strided.

NOTE [Special functions in float64]: each is evaluated in float64 from a standard expansion
(Lanczos for lgamma, recurrence plus the asymptotic series for digamma, Giles' polynomials for
erfinv, the power and asymptotic series for i0), accurate far beyond float32's rounding, then
cast to the result dtype."""
from __future__ import annotations

import math

import numpy as np

from ._builder import Builder, T
from ._functions import _norm, _out_dtype, _reg, _Unsupported
from ._linalg import _solve_square
from ._math import _by_name, _lin, arg
from ._reductions import reduce, vector_norm

F64 = np.float64


def _c(b: Builder, v) -> T:
    return b.const(v, F64)


def _poly(b: Builder, coeffs, w: T) -> T:
    """Horner's rule: coeffs from the highest power down."""
    p = _c(b, coeffs[0])
    for c in coeffs[1:]:
        p = b.op("Add", [b.op("Mul", [p, w]), _c(b, c)])
    return p


def _float_unary(build):
    def tr(b, node, args, kwargs):
        x = args[0]
        if not isinstance(x, T):
            raise _Unsupported()
        return build(b, b.cast(x, F64))
    return tr


# ------------------------------------------------------------------------------ lgamma
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _lgamma_right(b: Builder, x: T) -> T:
    """log Gamma(x) for x >= 0.5 (Lanczos, g = 7, nine terms)."""
    z = b.op("Sub", [x, _c(b, 1.0)])
    s = _c(b, _LANCZOS[0])
    for k, c in enumerate(_LANCZOS[1:], start=1):
        s = b.op("Add", [s, b.op("Div", [_c(b, c), b.op("Add", [z, _c(b, float(k))])])])
    t = b.op("Add", [z, _c(b, _LANCZOS_G + 0.5)])
    out = b.op("Add", [_c(b, 0.5 * math.log(2 * math.pi)),
                       b.op("Mul", [b.op("Add", [z, _c(b, 0.5)]), b.op("Log", [t])])])
    return b.op("Add", [b.op("Sub", [out, t]), b.op("Log", [s])])


def lgamma(b: Builder, x: T) -> T:
    left = b.op("Less", [x, _c(b, 0.5)], dtype=np.bool_)
    # reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x) below 1/2
    xr = b.op("Where", [left, b.op("Sub", [_c(b, 1.0), x]), x])
    right = _lgamma_right(b, xr)
    sin = b.op("Abs", [b.op("Sin", [b.op("Mul", [x, _c(b, math.pi)])])])
    refl = b.op("Sub", [b.op("Log", [b.op("Div", [_c(b, math.pi), sin])]), right])
    out = b.op("Where", [left, refl, right])
    # poles at 0, -1, -2, ... and both infinities give +inf
    pole = b.op("And", [b.op("LessOrEqual", [x, _c(b, 0.0)], dtype=np.bool_),
                        b.op("Equal", [b.op("Floor", [x]), x], dtype=np.bool_)])
    inf = b.op("Or", [pole, b.op("IsInf", [x], dtype=np.bool_)])
    return b.op("Where", [inf, _c(b, np.inf), out])


_by_name("lgamma")(_float_unary(lgamma))


@_by_name("mvlgamma")
def _mvlgamma(b, node, args, kwargs):
    x, p = b.cast(args[0], F64), arg(args, kwargs, 1, "p")
    if not isinstance(p, int):
        raise _Unsupported()
    out = _c(b, p * (p - 1) / 4.0 * math.log(math.pi))
    for i in range(p):
        out = b.op("Add", [out, lgamma(b, b.op("Sub", [x, _c(b, i / 2.0)]))])
    return out


# ------------------------------------------------------------------------------ digamma
_PSI_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _digamma_right(b: Builder, x: T) -> T:
    """psi(x) for x > 0: shift up by 6 with psi(x) = psi(x + 1) - 1/x, then the asymptotic
    series ln y - 1/(2y) - sum B_2k / (2k y^2k)."""
    acc = _c(b, 0.0)
    y = x
    for _ in range(6):
        acc = b.op("Add", [acc, b.op("Reciprocal", [y])])
        y = b.op("Add", [y, _c(b, 1.0)])
    inv2 = b.op("Reciprocal", [b.op("Mul", [y, y])])
    series = _poly(b, list(reversed(_PSI_SERIES)), inv2)
    psi = b.op("Sub", [b.op("Log", [y]), b.op("Div", [_c(b, 0.5), y])])
    psi = b.op("Sub", [psi, b.op("Mul", [inv2, series])])
    return b.op("Sub", [psi, acc])


def digamma(b: Builder, x: T) -> T:
    neg = b.op("Less", [x, _c(b, 0.0)], dtype=np.bool_)
    xr = b.op("Where", [neg, b.op("Sub", [_c(b, 1.0), x]), x])
    right = _digamma_right(b, xr)
    # reflection: psi(x) = psi(1 - x) - pi / tan(pi x) for x < 0
    px = b.op("Mul", [x, _c(b, math.pi)])      # pi / tan(pi x); onnxruntime has no float64 Tan
    cot = b.op("Div", [b.op("Mul", [_c(b, math.pi), b.op("Cos", [px])]), b.op("Sin", [px])])
    refl = b.op("Sub", [right, cot])
    out = b.op("Where", [neg, refl, right])
    # torch: -inf at 0, NaN at the negative integers and at -inf, +inf at +inf
    neg_int = b.op("And", [neg, b.op("Equal", [b.op("Floor", [x]), x], dtype=np.bool_)])
    out = b.op("Where", [neg_int, _c(b, np.nan), out])
    out = b.op("Where", [b.op("Equal", [x, _c(b, 0.0)], dtype=np.bool_), _c(b, -np.inf), out])
    return b.op("Where", [b.op("IsInf", [x], dtype=np.bool_, detect_negative=0),
                          _c(b, np.inf), out])


_by_name("digamma")(_float_unary(digamma))


@_by_name("polygamma")
def _polygamma(b, node, args, kwargs):
    n, x = args[0], arg(args, kwargs, 1, "input")
    if n != 0 or not isinstance(x, T):
        raise _Unsupported()       # higher orders: not translated
    return digamma(b, b.cast(x, F64))


# ------------------------------------------------------------------------------ erfinv
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def erfinv(b: Builder, x: T) -> T:
    # Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single precision
    w = b.op("Neg", [b.op("Log", [b.op("Mul", [b.op("Sub", [_c(b, 1.0), x]),
                                                b.op("Add", [_c(b, 1.0), x])])])])
    central = _poly(b, _ERFINV_CENTRAL, b.op("Sub", [w, _c(b, 2.5)]))
    tail_w = b.op("Sub", [b.op("Sqrt", [b.op("Max", [w, _c(b, 5.0)])]), _c(b, 3.0)])
    tail = _poly(b, _ERFINV_TAIL, tail_w)
    p = b.op("Where", [b.op("Less", [w, _c(b, 5.0)], dtype=np.bool_), central, tail])
    out = b.op("Mul", [p, x])
    a = b.op("Abs", [x])
    out = b.op("Where", [b.op("Equal", [a, _c(b, 1.0)], dtype=np.bool_),
                         b.op("Mul", [x, _c(b, np.inf)]), out])
    return b.op("Where", [b.op("Greater", [a, _c(b, 1.0)], dtype=np.bool_), _c(b, np.nan), out])


_by_name("erfinv")(_float_unary(erfinv))


# ------------------------------------------------------------------------------ i0
def i0(b: Builder, x: T) -> T:
    a = b.op("Abs", [x])
    # |x| <= 15: the power series sum ((x/2)^2)^k / (k!)^2, 60 terms (the last < 1e-30 of it)
    q = b.op("Mul", [b.op("Mul", [a, a]), _c(b, 0.25)])
    term, total = _c(b, 1.0), _c(b, 1.0)
    small = b.op("Min", [q, _c(b, 15.0 * 15.0 / 4.0)])
    for k in range(1, 60):
        term = b.op("Mul", [term, b.op("Div", [small, _c(b, float(k * k))])])
        total = b.op("Add", [total, term])
    # |x| > 15: e^|x| / sqrt(2 pi |x|) * sum a_k / |x|^k, a_k = a_{k-1} (2k - 1)^2 / (8k)
    coef, coeffs = 1.0, [1.0]
    for k in range(1, 12):
        coef *= (2 * k - 1) ** 2 / (8.0 * k)
        coeffs.append(coef)
    big = b.op("Max", [a, _c(b, 15.0)])
    series = _poly(b, list(reversed(coeffs)), b.op("Reciprocal", [big]))
    asym = b.op("Mul", [b.op("Div", [b.op("Exp", [big]), b.op("Sqrt", [
        b.op("Mul", [big, _c(b, 2 * math.pi)])])]), series])
    return b.op("Where", [b.op("LessOrEqual", [a, _c(b, 15.0)], dtype=np.bool_), total, asym])


_by_name("i0")(_float_unary(i0))


# ------------------------------------------------------------------------------ linalg
@_reg(_lin("vander"))
def _vander(b, node, args, kwargs):
    x = args[0]
    n = kwargs.get("N")
    n = x.shape[-1] if n is None else n
    if not isinstance(x, T) or n is None:
        raise _Unsupported()
    dt = _out_dtype(node)
    xs = b.op("Unsqueeze", [b.tensor(x, dt), b.const([-1], np.int64)])
    # x^0, x^1, ...: a running product, as torch's (exact for integers)
    cols = [b.op("Mul", [xs, b.tensor(0, dt)])] if n else []
    if n:
        cols[0] = b.op("Add", [cols[0], b.tensor(1, dt)])
    for _ in range(1, n):
        cols.append(b.op("Mul", [cols[-1], xs]))
    return b.op("Concat", cols, axis=-1)


def _numel(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


@_reg(_lin("tensorinv"))
def _tensorinv(b, node, args, kwargs):
    x, ind = args[0], arg(args, kwargs, 1, "ind", 2)
    if not isinstance(x, T) or x.shape is None or None in x.shape:
        raise _Unsupported()
    left, right = x.shape[:ind], x.shape[ind:]
    m = b.op("Reshape", [x, b.const([_numel(left), _numel(right)], np.int64)],
             shape=(_numel(left), _numel(right)))
    inv = _solve_square(b, m, None)[0]
    return b.op("Reshape", [inv, b.const(list(right) + list(left), np.int64)])


@_reg(_lin("tensorsolve"))
def _tensorsolve(b, node, args, kwargs):
    x, y = args[0], arg(args, kwargs, 1, "other")
    dims = arg(args, kwargs, 2, "dims")
    if not isinstance(x, T) or not isinstance(y, T) or dims is not None or \
            None in (x.shape or (None,)) or None in (y.shape or (None,)):
        raise _Unsupported()
    rest = x.shape[y.rank:]
    m = b.op("Reshape", [x, b.const([_numel(y.shape), _numel(rest)], np.int64)],
             shape=(_numel(y.shape), _numel(rest)))
    rhs = b.op("Reshape", [y, b.const([-1, 1], np.int64)], shape=(_numel(y.shape), 1))
    sol = _solve_square(b, m, rhs)[0]
    return b.op("Reshape", [sol, b.const(list(rest), np.int64)])


@_reg(_lin("matrix_norm"))
def _matrix_norm(b, node, args, kwargs):
    x = b.tensor(args[0], _out_dtype(node))
    ord_ = arg(args, kwargs, 1, "ord", "fro")
    dim = arg(args, kwargs, 2, "dim", (-2, -1))
    keep = arg(args, kwargs, 3, "keepdim", False)
    d0, d1 = (_norm(d, x.rank) for d in dim)
    if ord_ == "fro":
        return vector_norm(b, x, 2, [d0, d1], keep)
    if ord_ in ("nuc", 2, -2):
        from ._spectral import spectral_norm
        return spectral_norm(b, x, ord_, (d0, d1), keep)
    if ord_ not in (1, -1, np.inf, -np.inf):
        raise _Unsupported()
    # 1: the largest column sum of |x| (sum over rows d0, then max over d1); inf: rows
    s_dim, m_dim = (d0, d1) if ord_ in (1, -1) else (d1, d0)
    sums = reduce(b, "ReduceSum", b.op("Abs", [x]), s_dim, True)
    out = reduce(b, "ReduceMax" if ord_ > 0 else "ReduceMin", sums, m_dim, True)
    if not keep:
        out = b.op("Squeeze", [out, b.const(sorted([d0, d1]), np.int64)])
    return out


# ------------------------------------------------------------------------------ as_strided
@_by_name("as_strided")
def _as_strided(b, node, args, kwargs):
    x = args[0]
    size, stride = arg(args, kwargs, 1, "size"), arg(args, kwargs, 2, "stride")
    offset = arg(args, kwargs, 3, "storage_offset") or 0
    if not isinstance(x, T) or any(isinstance(v, T) for v in (*size, *stride, offset)):
        raise _Unsupported()
    # element (i0, i1, ...) is the input's element offset + sum(i_k * stride_k) in row-major
    # order (the input as a contiguous tensor; see docs/DEVIATIONS.md)
    idx = np.full(tuple(size), int(offset), dtype=np.int64)
    for k, (n, s) in enumerate(zip(size, stride, strict=True)):
        shape = [1] * len(size)
        shape[k] = n
        idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    flat = b.op("Reshape", [x, b.const([-1], np.int64)])
    return b.op("Gather", [flat, b.const(idx)], axis=0)


# ------------------------------------------------------------------------------ igamma
def _igamma(b: Builder, a: T, x: T, upper: bool) -> T:
    """Regularized incomplete gamma P(a, x) (Q = 1 - P for ``upper``): the power series
    below x = a + 1, the continued fraction (modified Lentz) above, with fixed term counts
    (200 and 100) that converge for a up to a few hundred."""
    lg = lgamma(b, a)
    logx = b.op("Log", [b.op("Max", [x, _c(b, 1e-300)])])
    pref = b.op("Exp", [b.op("Sub", [b.op("Sub", [b.op("Mul", [a, logx]), x]), lg])])
    term = b.op("Reciprocal", [a])
    total = term
    for n in range(1, 200):
        term = b.op("Mul", [term, b.op("Div", [x, b.op("Add", [a, _c(b, float(n))])])])
        total = b.op("Add", [total, term])
    p_series = b.op("Mul", [total, pref])
    tiny = _c(b, 1e-300)
    bb = b.op("Sub", [b.op("Add", [x, _c(b, 1.0)]), a])
    c = _c(b, 1e300)
    d = b.op("Reciprocal", [bb])
    h = d
    for i in range(1, 100):
        an = b.op("Mul", [_c(b, -float(i)), b.op("Sub", [_c(b, float(i)), a])])
        bb = b.op("Add", [bb, _c(b, 2.0)])
        d = b.op("Add", [b.op("Mul", [an, d]), bb])
        d = b.op("Where", [b.op("Less", [b.op("Abs", [d]), tiny], dtype=np.bool_), tiny, d])
        c = b.op("Add", [bb, b.op("Div", [an, c])])
        c = b.op("Where", [b.op("Less", [b.op("Abs", [c]), tiny], dtype=np.bool_), tiny, c])
        d = b.op("Reciprocal", [d])
        h = b.op("Mul", [h, b.op("Mul", [d, c])])
    q_frac = b.op("Mul", [pref, h])
    use_series = b.op("Less", [x, b.op("Add", [a, _c(b, 1.0)])], dtype=np.bool_)
    p = b.op("Where", [use_series, p_series, b.op("Sub", [_c(b, 1.0), q_frac])])
    p = b.op("Where", [b.op("IsInf", [x], dtype=np.bool_, detect_negative=0), _c(b, 1.0), p])
    # a = 0: P is 1 for every x > 0 (NaN at x = 0, as torch)
    a_zero = b.op("Equal", [a, _c(b, 0.0)], dtype=np.bool_)
    p = b.op("Where", [a_zero, _c(b, 1.0), p])
    out = b.op("Sub", [_c(b, 1.0), p]) if upper else p
    bad = b.op("Or", [b.op("Or", [b.op("Less", [x, _c(b, 0.0)], dtype=np.bool_),
                                  b.op("Less", [a, _c(b, 0.0)], dtype=np.bool_)]),
                      b.op("And", [a_zero, b.op("Equal", [x, _c(b, 0.0)], dtype=np.bool_)])])
    return b.op("Where", [bad, _c(b, np.nan), out])


def _igamma_tr(upper: bool):
    def tr(b, node, args, kwargs):
        a, x = args[0], arg(args, kwargs, 1, "other")
        if not isinstance(a, T) and not isinstance(x, T):
            raise _Unsupported()
        return _igamma(b, b.tensor(a, F64), b.tensor(x, F64), upper)
    return tr


_by_name("igamma")(_igamma_tr(False))
_by_name("igammac")(_igamma_tr(True))
