"""Everyday numeric helpers built from other ops: closeness tests, differences, covariance,
integration, set membership, window functions, splits and small linear-algebra solvers.

All are compositions of registered ops, so their gradients come for free; the few that are
not differentiable (integer gcd/lcm, histograms) say so.
"""

from __future__ import annotations

import collections
import itertools
import math

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make
from ..autograd.function import Op
from .registry import EXACT_OUT, export, result_dtype, sum_to, tensor_operands

_AminMax = collections.namedtuple("aminmax", ["min", "max"])
_Frexp = collections.namedtuple("frexp", ["mantissa", "exponent"])
_Histogram = collections.namedtuple("histogram", ["hist", "bin_edges"])


def _ember():
    import ember
    return ember


def _check_tensor(name, value, arg="input"):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(value).__name__}")


# ---- comparisons -----------------------------------------------------------------------------

@export(method=True)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise (NaNs equal when equal_nan)."""
    tensor_operands("isclose", input, other, "none")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if tol < 0:  # a negative tolerance would make nothing close (or flip the test)
            raise RuntimeError(f"isclose: {name} must be greater than or equal to zero, but got "
                               f"{tol:g}")
    if input.dtype != other.dtype:
        raise RuntimeError(f"isclose: {input.dtype} did not match {other.dtype}")
    if not (input.is_floating_point() or input.is_complex()):
        # integers and bools are compared by value too (|1 - 2| <= atol=1 is close), as torch's
        a, b = input.double(), other.double()
        return (input == other) | ((a - b).abs() <= atol + rtol * b.abs())
    close = (input == other) | ((input - other).abs() <= atol + rtol * other.abs())
    close = close & input.isfinite() & other.isfinite() | (input == other)
    if equal_nan:
        close = close | (input.isnan() & other.isnan())
    return close


@export(method=True)
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether every element of ``input`` is close to ``other`` (see isclose)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


@export(method=True)
def equal(input, other) -> bool:
    """True when the two tensors have the same shape and the same elements."""
    _check_tensor("equal", input)
    _check_tensor("equal", other, "other")
    if input.shape != other.shape:
        return False
    return bool((input == other).all())


@export(method=True)
def is_same_size(input, other) -> bool:
    return tuple(input.shape) == tuple(other.shape)


@export(method=True)
def is_nonzero(input) -> bool:
    """The truth value of a one-element tensor."""
    if input.numel() != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if input.numel() == 0 else 'more than one value'} is ambiguous")  # noqa: E501
    return bool(input.item())


# ---- differences, integration, statistics ----------------------------------------------------

@export(method=True, out=True)
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along ``dim`` (with optional values put before/after)."""
    em = _ember()
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    pieces = [t for t in (prepend, input, append) if t is not None]
    for p in pieces:
        # a 0-d one is expanded (a superset of torch's); another ndim would reach cat, which
        # skips a legacy empty 1-D tensor where torch's diff refuses it
        if p.dim() and p.dim() != input.dim():
            raise RuntimeError(f"diff expects prepend or append to be the same dimension as "
                               f"input; got {p.dim()} dims for an input of {input.dim()}")
    x = em.cat([p if p.dim() else p.expand(input.shape[:dim] + (1,)) for p in pieces], dim)
    for _ in range(n):
        size = x.shape[dim]
        if size == 0:
            break
        later, earlier = x.narrow(dim, 1, size - 1), x.narrow(dim, 0, size - 1)
        # torch's difference of two bools is their xor (subtracting bools is an error)
        x = em.logical_xor(later, earlier) if x.dtype is em.bool else later - earlier
    return x


@export
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Integral of ``y`` along ``dim`` by the trapezoidal rule (points ``x`` or spacing ``dx``)."""
    size = y.shape[dim]
    if size == 0:
        return y.sum(dim) * 0
    left, right = y.narrow(dim, 0, size - 1), y.narrow(dim, 1, size - 1)
    if x is None:
        return ((left + right).sum(dim) * (1.0 if dx is None else dx)) / 2
    if dx is not None:
        raise RuntimeError("trapezoid: received both x and dx; expected one of them")
    if x.dim() == 1:
        spacing = x[1:] - x[:-1]
        shape = [1] * y.dim()
        shape[dim] = spacing.shape[0]
        spacing = spacing.reshape(shape)
    else:
        spacing = diff(x, dim=dim)
    return ((left + right) * spacing).sum(dim) / 2


@export
def trapz(y, x=None, *, dx=None, dim=-1):
    """The older name of trapezoid (``trapz(y, x, dim=-1)`` or ``trapz(y, dx=1, dim=-1)``)."""
    if x is None and dx is None:
        dx = 1.0
    return trapezoid(y, x, dx=dx, dim=dim)


@export
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral of ``y`` along ``dim`` (one fewer element)."""
    size = y.shape[dim]
    left, right = y.narrow(dim, 0, max(size - 1, 0)), y.narrow(dim, min(1, size), max(size - 1, 0))
    if x is None:
        return ((left + right) * (1.0 if dx is None else dx) / 2).cumsum(dim)
    spacing = diff(x, dim=-1 if x.dim() == 1 else dim)
    if x.dim() == 1:
        shape = [1] * y.dim()
        shape[dim] = spacing.shape[0]
        spacing = spacing.reshape(shape)
    return ((left + right) * spacing / 2).cumsum(dim)


@export(method=True)
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the rows of ``input`` (variables) over its columns (observations)."""
    if input.dim() > 2:
        raise ValueError(f"cov(): expected input to have two or fewer dimensions but got an "
                         f"input with {input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    if not x.is_floating_point():
        x = x.to(D.get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        w_sum = float(n)
        avg = x.mean(1, keepdim=True)
        norm = w_sum - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1, keepdim=True) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights.to(x.dtype)).sum() / w_sum
    centered = x - avg
    weighted = centered if w is None else centered * w
    if isinstance(norm, float):
        norm = max(norm, 0.0)
    else:
        norm = norm.clamp(min=0)
    c = weighted @ centered.mT / norm
    return c.squeeze() if input.dim() < 2 else c


@export(method=True)
def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input``."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    stddev = d.sqrt()
    c = c / stddev.unsqueeze(1) / stddev.unsqueeze(0)
    return c.clamp(-1, 1)


@export(method=True, out=True)
def aminmax(input, *, dim=None, keepdim=False):
    """The minimum and the maximum together (over ``dim``, or all elements)."""
    if input.numel() == 0 and dim is None:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if dim is None:
        lo, hi = input.min(), input.max()
        if keepdim:
            shape = (1,) * input.dim()
            lo, hi = lo.reshape(shape), hi.reshape(shape)
        return _AminMax(lo, hi)
    return _AminMax(input.amin(dim, keepdim), input.amax(dim, keepdim))


@export(out=True)
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """A histogram of ``input``'s values: counts (float) and bin edges. Not differentiable."""
    _check_tensor("histogram", input)
    if not input.is_floating_point():
        raise RuntimeError(f"histogram: input tensor and bins tensors should have the same "
                           f"floating-point dtype; got {input.dtype}")
    data = input.detach().numpy().reshape(-1)
    b = bins.detach().numpy() if isinstance(bins, Tensor) else bins
    w = None if weight is None else weight.detach().numpy().reshape(-1)
    hist, edges = np.histogram(data, bins=b, range=range, weights=w, density=density)
    em = _ember()
    return _Histogram(em.tensor(hist.astype(data.dtype)), em.tensor(edges.astype(data.dtype)))


# ---- log-sum-exp pairs, integers, floats ------------------------------------------------------

def _floating_operands(name, input, other, complex_ok=False):
    """The common dtype of a float-only binary op's tensor operands; a number or an integer,
    bool (or, unless ``complex_ok``, complex) dtype is torch's error (NOTE [Number operands] and
    NOTE [Kernel dtypes] in registry.py and elementwise.py)."""
    tensor_operands(name, input, other, "none")
    dt = result_dtype(input, other)
    if not (dt.is_floating_point or (complex_ok and dt.is_complex)):
        kinds = "floating point or complex" if complex_ok else "floating point"
        raise NotImplementedError(f"{name}: not implemented for dtype {dt} (operands of dtypes "
                                  f"{input.dtype} and {other.dtype}); expected {kinds} tensors.")
    return dt


@export(method=True, out=True)
def logaddexp(input, other):
    """log(exp(input) + exp(other)) without overflow."""
    dt = _floating_operands("logaddexp", input, other, complex_ok=True)
    em = _ember()
    if dt.is_complex:
        # the operand of the larger real part factored out: a + log1p(e^(b - a))
        x, y = input.to(dt), other.to(dt)
        x_big = x.real >= y.real
        hi, lo = em.where(x_big, x, y), em.where(x_big, y, x)
        return hi + em.log1p(em.exp(lo - hi))
    hi = em.maximum(input, other)
    lo = em.minimum(input, other)
    # where both are the same infinity, the difference would be nan
    same_inf = (input == other) & input.isinf()
    zero = em.zeros_like(hi)
    gap = em.where(same_inf, zero, lo) - em.where(same_inf, zero, hi)
    result = hi + em.log1p(em.exp(gap))
    return em.where(same_inf, hi, result)


@export(method=True, out=True)
def logaddexp2(input, other):
    """log2(2**input + 2**other) without overflow."""
    dt = _floating_operands("logaddexp2", input, other)
    # in the common dtype first: a float16 operand beside float32 ones is scaled in float32
    return logaddexp(input.to(dt) * math.log(2), other.to(dt) * math.log(2)) / math.log(2)


def _integer_op(name, ufunc):
    def fn(input, other):
        tensor_operands(name, input, other, "none")
        dt = result_dtype(input, other)
        if dt.is_floating_point or dt.is_complex or dt is D.bool_:  # (NOTE [Kernel dtypes])
            raise NotImplementedError(f"{name}: not implemented for dtype {dt} (operands of "
                                      f"dtypes {input.dtype} and {other.dtype}); expected "
                                      "integer tensors.")
        a, b = (t.detach().numpy().astype(dt.np, copy=False) for t in (input, other))
        try:
            return _make(np.asarray(ufunc(a, b)))
        except ValueError:
            raise RuntimeError(f"{name}: the shapes {list(input.shape)} and "
                               f"{list(other.shape)} do not broadcast") from None

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} of integer tensors (not differentiable)."
    return export(method=True, out=True)(fn)


gcd = _integer_op("gcd", np.gcd)
lcm = _integer_op("lcm", np.lcm)


@export(method=True, out=True)
def heaviside(input, values):
    """0 where input < 0, 1 where input > 0, ``values`` where input == 0."""
    tensor_operands("heaviside", input, values, "none")
    em = _ember()
    if input.dtype != values.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different "
                           f"dtypes; got {input.dtype} and {values.dtype}")
    if input.is_complex():
        raise NotImplementedError(f"heaviside: not implemented for complex dtype {input.dtype}")
    step = (input > 0).to(input.dtype)
    return em.where(input == 0, values, step)  # (broadcasts input and values both ways)


EXACT_OUT.add("heaviside")  # torch: an out= of another dtype is "not yet implemented" too


@export(method=True, out=True)
def frexp(input):
    """Mantissa in [0.5, 1) and integer exponent with input = mantissa * 2**exponent."""
    if not input.is_floating_point():
        raise RuntimeError(f"torch.frexp() only supports floating-point dtypes; got "
                           f"{input.dtype}")
    mantissa, exponent = np.frexp(input.detach().numpy())
    return _Frexp(_make(mantissa), _make(exponent.astype(np.int32)))


@export(method=True, out=True)
def ldexp(input, other):
    """input * 2**other."""
    tensor_operands("ldexp", input, other, "none")
    dt = result_dtype(input, other)
    if other.dtype is D.bool_ and dt.is_floating_point:
        # (torch's kernel for 2**other in a float result dtype has no bool exponent)
        raise NotImplementedError(f"ldexp: not implemented for a bool exponent with an input of "
                                  f"dtype {input.dtype}; pass the exponent as integers.")
    if not (dt.is_floating_point or dt.is_complex):
        dt = D.get_default_dtype()
    # 2**other in other's own float dtype (as torch's: a bfloat16 exponent gives bfloat16
    # powers), then the product in the common float dtype
    return input.to(dt) * other.exp2().to(dt)


class Nextafter(Op):
    """The next representable float after x towards y. The step is one ulp, so torch (and
    ember) differentiate it as the identity in x, except where x == y (the result is y: no
    step), and as a constant in y."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(np.asarray(x == y))
        ctx.shapes = x.shape, y.shape
        return np.asarray(np.nextafter(x, y))

    @staticmethod
    def backward(ctx, grad):
        (same,) = ctx.saved_tensors
        xshape, yshape = ctx.shapes
        return sum_to(_ember().where(same, 0.0, grad), xshape), grad.new_zeros(yshape)


@export(method=True, out=True)
def nextafter(input, other):
    """The next representable float after ``input`` towards ``other``."""
    dt = _floating_operands("nextafter", input, other)
    try:
        np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError:
        raise RuntimeError(f"nextafter: the shapes {list(input.shape)} and {list(other.shape)} "
                           "do not broadcast; each dim must match or be 1") from None
    return Nextafter.apply(input.to(dt), other.to(dt))


@export(method=True)
def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    return other - alpha * input


@export(method=True)
def positive(input):
    """input itself (an error for bool tensors, as in torch)."""
    _check_tensor("positive", input)
    if input.dtype is D.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@export(method=True, out=True)
def vdot(input, other):
    """The dot product of two 1-D tensors, conjugating the first: sum(conj(input) * other)."""
    for arg, value in (("input", input), ("other", other)):
        _check_tensor("vdot", value, arg)
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {other.dim()}D "
                           "tensors")
    if input.dtype != other.dtype:
        raise RuntimeError(f"vdot: expected both vectors to have same dtype, but found "
                           f"{input.dtype} and {other.dtype}")
    return _ember().dot(input.conj(), other)  # (dot keeps an integer dtype, as torch's vdot)


@export(method=True, out=True)
def renorm(input, p, dim, maxnorm):
    """Rescale each slice along ``dim`` whose p-norm exceeds ``maxnorm`` down to ``maxnorm``."""
    dims = [d for d in range(input.dim()) if d != dim % input.dim()]
    norms = input.abs().pow(p).sum(dims, keepdim=True).pow(1.0 / p)
    factor = (maxnorm / (norms + 1e-7)).clamp(max=1.0)
    return input * factor


# ---- sets and indices ------------------------------------------------------------------------

@export(out=True)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` is in ``test_elements``."""
    em = _ember()
    a = elements.numpy() if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements.numpy() if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return em.tensor(np.isin(a, b, assume_unique=assume_unique, invert=invert))


@export
def unravel_index(indices, shape):
    """Flat indices into a tuple of coordinate tensors for an array of ``shape``."""
    em = _ember()
    idx = indices if isinstance(indices, Tensor) else em.tensor(indices)
    if idx.is_floating_point() or idx.dtype is D.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {idx.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got "
                         f"{tuple(shape)}")
    total = math.prod(shape)
    flat = idx.numpy()
    if ((flat < -total) | (flat >= total)).any():
        raise ValueError(f"'indices' must be in range [{-total}, {total - 1}]")
    coords = np.unravel_index(np.where(flat < 0, flat + total, flat), shape)
    return tuple(em.tensor(c.astype(np.int64)) for c in coords)


@export
def combinations(input, r=2, with_replacement=False):
    """All length-``r`` combinations of a 1-D tensor's elements, as rows."""
    em = _ember()
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    if r == 0 or not rows:
        return input.new_empty((0,) if r == 0 else (0, r))
    return input[em.tensor(rows)]


def _split_along(name, dim, min_dim):
    def fn(input, *indices_args, sections=None, indices=None):
        given = [v for v in (*indices_args[:1], sections, indices) if v is not None]
        if len(indices_args) > 1:     # the method's x.hsplit(1, 2) form: indices as varargs
            given = [list(indices_args)]
        if len(given) != 1:
            raise TypeError(f"{name}(): expected sections (int) or indices (sequence of int); "
                            f"got {len(given)} of them")
        indices_or_sections = given[0]
        if input.dim() < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} "
                               f"dimension, but got a tensor with {input.dim()} dimensions!")
        d = 0 if name == "hsplit" and input.dim() == 1 else dim
        if isinstance(indices_or_sections, int):
            if input.shape[d] % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but "
                                   f"the size of the dimension {input.shape[d]} is not "
                                   f"divisible by the split_size {indices_or_sections}!")
            return input.tensor_split(indices_or_sections, d)
        return input.tensor_split(list(indices_or_sections), d)

    fn.__name__ = name
    fn.__doc__ = f"Split into pieces along dim {dim} (see tensor_split)."
    return export(method=True)(fn)


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


# ---- windows ---------------------------------------------------------------------------------

def _window(name, values):
    def fn(window_length, periodic=True, *args, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False, **params):
        em = _ember()
        if window_length < 0:
            raise RuntimeError(f"{name} requires non-negative window_length, got "
                               f"window_length={window_length}")
        dtype = dtype or D.get_default_dtype()
        if not dtype.is_floating_point:
            raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
        if window_length <= 1:
            w = np.ones(window_length)
        else:
            n = window_length + 1 if periodic else window_length
            w = values(n, *args, **params)[:window_length]
        return em.tensor(w, dtype=dtype, requires_grad=requires_grad)

    fn.__name__ = name
    fn.__doc__ = f"The {name.split('_')[0]} window of ``window_length`` points."
    return export(fn)


hann_window = _window("hann_window", np.hanning)
hamming_window = _window("hamming_window",
                         lambda n, alpha=0.54, beta=0.46: alpha - beta * np.cos(
                             2 * np.pi * np.arange(n) / (n - 1)))
blackman_window = _window("blackman_window", np.blackman)
bartlett_window = _window("bartlett_window", np.bartlett)
kaiser_window = _window("kaiser_window", lambda n, beta=12.0: np.kaiser(n, beta))


# ---- predicates and small aliases ------------------------------------------------------------

# is_complex, is_conj, is_neg, resolve_conj, resolve_neg: ops/complex.py


@export
def is_signed(input) -> bool:
    return input.dtype.is_signed


@export
def is_storage(obj) -> bool:
    return type(obj).__name__ in ("UntypedStorage", "TypedStorage")


@export
def get_device(input) -> int:
    """-1: every ember tensor is on the CPU."""
    return -1


@export
def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor sharing memory with an object that exposes the buffer protocol."""
    em = _ember()
    array = np.frombuffer(buffer, dtype=dtype.np, count=count, offset=offset)
    return em.from_numpy(array).requires_grad_(requires_grad) if requires_grad else \
        em.from_numpy(array)


@export
def chain_matmul(*matrices, out=None):
    """The product of the matrices, in the cheapest order (deprecated in torch)."""
    em = _ember()
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    for t in matrices:  # (multi_dot takes a 1-D first or last operand; chain_matmul does not)
        if t.ndim != 2:
            raise RuntimeError(f"chain_matmul: Tensor dimension is {t.ndim}, expected 2 instead "
                               f"(shape {list(t.shape)})")
    result = matrices[0].clone() if len(matrices) == 1 else em.linalg.multi_dot(list(matrices))
    if out is not None:
        out.copy_(result)
        return out
    return result


_warn_always = False


@export
def set_warn_always(b: bool) -> None:
    global _warn_always
    _warn_always = bool(b)


@export
def is_warn_always_enabled() -> bool:
    return _warn_always


@export
def set_flush_denormal(mode: bool) -> bool:
    """False: ember cannot change the CPU's denormal mode (torch returns False where it can't)."""
    return False


@export
def fill(input, value):
    """A new tensor shaped like ``input`` filled with ``value`` (out-of-place ``fill_``)."""
    return input.clone().fill_(value)
