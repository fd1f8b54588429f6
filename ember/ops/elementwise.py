"""Elementwise binary ops: arithmetic, comparisons, logical, bitwise (unary math is in
unary.py).

Each op's gradient is written next to it with ember ops, so double backward works.
"""
from __future__ import annotations

import inspect

import numpy as np

from .. import _dtype as D
from .._backend import REUSE_MIN_BYTES, reusable_like
from .._tensor import Tensor, _make
from ..autograd.function import Op
from ..autograd.grad_mode import _state as _grad_state
from ..profiler.profiler import _active as _prof
from ._kernels import pointwise as _kpoint
from ._kernels import reduce as _kreduce
from .indexing import where
from .registry import (
    backward_on_arrays,
    promote_args,
    register,
    scalar_type,
    sum_to,
    tensor_operands,
    unwatched,
)

_broadcast_binary = _kpoint.broadcast_binary
# Add's backward sums a broadcast gradient with _kreduce.sum_to_both (an A/B switch)
_FAST_SUMS = [True]

def _bcast_error(name, a, b):
    sa, sb = np.shape(a), np.shape(b)
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(
                f"{name}: The size of tensor a ({pa[i]}) must match the size of tensor b "
                f"({pb[i]}) at non-singleton dimension {i}; got shapes {list(sa)} and "
                f"{list(sb)}, expected shapes that broadcast.")
    return RuntimeError(f"{name}: shapes {list(sa)} and {list(sb)} do not broadcast")


# NOTE [NumPy array operands]
# torch's `tensor <op> ndarray` works, through NumPy: Tensor's operator refuses the array, Python
# asks the array's reflected operator, NumPy computes on the tensor's values (its __array__,
# which refuses a tensor that requires grad) and wraps the result back into a tensor. So the
# result follows NumPy's dtype rules (float32 * float64 array -> float64), builds no graph, and
# `x += a` rebinds x to a new tensor. Functions and methods (torch.add(x, a), x.add(a)) raise
# TypeError. minimalRL's vtrace does `rhos * (td_target - v).numpy()`. The operators take the
# array on their slow path only (a same-dtype tensor pair never sees the check). `x != a` has no
# NumPy answer in torch (Python's identity fallback: True), nor have == and != with operands
# that are neither tensors, numbers nor arrays (`h == None` is False, as old RNN code expects).
_OPERATOR_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                    "div": np.true_divide, "floor_divide": np.floor_divide,
                    "remainder": np.remainder, "pow": np.power, "eq": np.equal,
                    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
                    "bitwise_xor": np.bitwise_xor, "bitwise_left_shift": np.left_shift,
                    "bitwise_right_shift": np.right_shift}


# the operands == and != compare elementwise; anything else gets Python's identity answer
_NUMBERS = (Tensor, int, float, complex, bool, np.number, np.bool_)


def _ndarray_operand(ufunc, input, other):
    """`input <op> other` for a NumPy array `other`, as torch computes it (see NOTE [NumPy
    array operands])."""
    return _make(np.asarray(ufunc(input.__array__(), other)))


def _dense_and_sparse(name, input, other, kw):
    """dense + alpha * sparse (sub: - alpha * sparse) as a dense tensor, as torch."""
    from ..sparse._arith import dense_add_sparse
    alpha = kw.pop("alpha", 1)
    if kw:
        raise TypeError(f"{name}(): unexpected keyword argument(s) {sorted(kw)} with a sparse "
                        "operand")
    return dense_add_sparse(input, other, alpha if name == "add" else -alpha)


# the binary ops torch computes on two Python numbers (as 0-d tensors)
_NUMBERS_ONLY = ("add", "sub", "mul", "div", "floor_divide")


def _binary_fn(name, cls, result=None, operator=False, numbers="both"):
    """Public function for a binary op: dtype promotion, then the Op. Its `as_operator` is the
    same for Tensor's Python operator, which also takes a NumPy array operand. ``numbers``: where
    the op takes a Python number (NOTE [Number operands])."""
    ufunc = _OPERATOR_UFUNCS.get(name) if operator else None
    identity_fallback = operator and name in ("eq", "ne")
    unrecorded = getattr(cls, "unrecorded", None)
    # dense + sparse, dense - sparse (and add_/sub_, which run this): ember/sparse/_arith.py
    sparse_aware = name in ("add", "sub")

    def fn(input, other, **kw):
        if sparse_aware and getattr(other, "is_sparse", False) and not getattr(
                input, "is_sparse", True):
            return _dense_and_sparse(name, input, other, kw)
        if kw and isinstance(kw.get("alpha"), Tensor):
            kw["alpha"] = _number_option(name, "alpha", kw["alpha"])
        if isinstance(input, Tensor) and isinstance(other, Tensor) and \
                input._data.dtype == other._data.dtype and result is None:
            a, b = input, other
            if (unrecorded is not None and not kw and not ((a._requires_grad or
                                                            b._requires_grad) and
                                                           _grad_state.enabled)
                    and unwatched()):
                # nothing records or watches this call: NOTE [Unrecorded same-shape ops]
                out = unrecorded(a._data, b._data)
                if out is not None:
                    return _make(out)
        else:
            if not isinstance(input, Tensor) and not isinstance(other, Tensor):
                if name in _NUMBERS_ONLY and scalar_type(input) and scalar_type(other):
                    # torch.add(2, 3) is tensor(5): the first number as a 0-d tensor
                    return fn(_make(np.asarray(input, D.scalar_dtype(input).np)), other, **kw)
                raise TypeError(f"{name}(): expected at least one Tensor argument, got "
                                f"{type(input).__name__} and {type(other).__name__}")
            if input is None or other is None:
                if operator:  # x + None: Python's own TypeError, as torch's
                    return NotImplemented
                raise TypeError(f"{name}(): argument 'other' must be a Tensor or a number, not "
                                "NoneType")
            if numbers != "both" and not operator:
                tensor_operands(name, input, other, numbers)
            if name == "sub" and (_boolish(input) or _boolish(other)):
                raise RuntimeError("sub: Subtraction, the `-` operator, with a bool tensor is not "
                                   "supported. If you are trying to invert a mask, use the `~` "
                                   "or `logical_not()` operator instead.")
            if ufunc is not None and isinstance(other, np.ndarray):
                return _ndarray_operand(ufunc, input, other)
            if identity_fallback and not isinstance(other, _NUMBERS):
                # x == None, x != "a", x == [1, 2]: Python's identity answer, as in torch
                return NotImplemented
            a, b = promote_args(name, input, other, floating=result is not None)
        try:
            if kw or _prof.prof is not None:
                return cls.apply(a, b, **kw)
            return cls._run(a, b)  # what apply calls when not profiling (per-op overhead)
        except ValueError as e:
            if "broadcast" in str(e):
                # _bcast_error takes the operands (it reads their shapes itself)
                raise _bcast_error(name, getattr(a, "_data", a), getattr(b, "_data", b)) \
                    from None
            raise

    fn.__name__ = name
    fn.__doc__ = cls.__doc__
    # the public parameters (NOTE [Registered signatures]): input, other, then the Op's own
    # options keyword-only, as torch has them (add(input, other, *, alpha=1))
    extra = list(inspect.signature(cls.forward).parameters.values())[3:]
    fn.__signature__ = inspect.Signature(
        [inspect.Parameter("input", inspect.Parameter.POSITIONAL_OR_KEYWORD),
         inspect.Parameter("other", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in extra])
    if not operator and (name in _OPERATOR_UFUNCS or name == "ne"):
        fn.as_operator = _binary_fn(name, cls, result, operator=True, numbers=numbers)
    return fn


def _number_option(name, arg, value):
    """A Number option given as a tensor: torch takes a 0-d tensor as its value (Adafactor's
    `exp_avg.add_(update, alpha=1 - beta1)` with a tensor beta1, a learned lr) and refuses any
    other tensor."""
    if value.ndim != 0:
        raise TypeError(f"{name}(): argument '{arg}' must be Number, not Tensor (a tensor of "
                        f"shape {tuple(value.shape)}; only a 0-dim tensor is read as a number)")
    return value.item()


def _boolish(x):
    """A Python bool or a bool tensor (what torch's subtraction refuses beside a number)."""
    return type(x) is bool or (isinstance(x, Tensor) and x._data.dtype == np.bool_)


def _to_float(t):
    """For true division: integer operands become the default float dtype."""
    if isinstance(t, Tensor):
        return t if t._data.dtype.kind in "fc" or t.dtype is D.bfloat16 else t.to(
            D.get_default_dtype())
    # ml_dtypes' bfloat16 has kind "V", so it is checked by identity
    return t if t.dtype.kind in "fc" or t.dtype == D.bfloat16.np else t.astype(
        D.get_default_dtype().np)


# ----------------------------------------------------------------------------- arithmetic
# NOTE [Unrecorded same-shape ops]
# `a + b` and `a * b` on two tensors of one dtype, when nothing would record the call (grad
# mode off or no operand needs a gradient) and nothing watches op calls (`unwatched`: NOTE
# [Unwatched no-grad views] in registry.py), are the NumPy operation and a fresh tensor around
# it: Op._run would add only a ctx nobody keeps and its checks, ~0.7 us of a ~2 us call
# (benchmarks/overhead.py's add and mul; a decoding step's 9 residual adds), ~2 us of a ~3 us
# broadcast (the step's token embedding plus its position row). Taken: one shape (not 0-d:
# NumPy would return a scalar) under the reuse pool's size, and broadcasts whose result is
# under the row kernels' size, where the Op's forward runs NumPy's loop too (NOTE [Row-broadcast
# binary ops]). `unrecorded` returns None for the rest (big results, operands that do not
# broadcast: the Op raises the op's message), which then runs through the Op as before.
def _same_shape(ufunc):
    small = _kpoint._ROWS_MIN_SIZE

    def unrecorded(a, b):
        if a.shape == b.shape:
            if a.ndim and a.nbytes < REUSE_MIN_BYTES:
                return ufunc(a, b)
            return None
        # the result has at most a.size * b.size elements (each of its dims is one operand's)
        if a.size * b.size >= small:
            try:
                if np.broadcast(a, b).size >= small:
                    return None
            except ValueError:
                return None
        elif not (a.size and b.size):
            return None  # (an empty operand: the Op checks the shapes)
        try:
            return ufunc(a, b)
        except ValueError:
            return None
    return staticmethod(unrecorded)


def _check_alpha(name, dtype, alpha):
    """add/sub's alpha must fit the result dtype `dtype` (as torch checks it): no float alpha
    for an integer or bool result (it would silently turn into a float sum), no complex alpha
    for a real one, a bool alpha only for a bool result, and one that fits the dtype (NOTE
    [Numbers that do not fit the dtype]). Messages are torch's, after the op's name, with the
    dtype and alpha at the end."""
    if isinstance(alpha, (bool, np.bool_)):
        if dtype == np.bool_:
            return
        why = "Boolean alpha only supported for Boolean results."
    elif isinstance(alpha, (complex, np.complexfloating)) and dtype.kind != "c":
        why = "For non-complex input tensors, argument alpha must not be a complex number."
    elif isinstance(alpha, (float, np.floating)) and dtype.kind in "iub":
        why = "For integral input tensors, argument alpha must not be a floating point number."
    else:
        D.check_fits(name, alpha, D.from_numpy_dtype(dtype))
        return
    raise RuntimeError(f"{name}: {why} (result dtype {D.from_numpy_dtype(dtype)}, alpha={alpha!r})")


def _int_alpha(a, alpha):
    """An int alpha of an integer or bool sum in the sum's dtype: it fits (_check_alpha), and
    a negative one of a uint8 sum wraps, as torch takes it (uint8 - 1 * b is uint8 + 255 * b)."""
    if type(alpha) is int and a.dtype.kind in "iub":
        return np.asarray(alpha).astype(a.dtype)
    return alpha


class Add(Op):
    """input + alpha * other, broadcasting."""

    holomorphic = True  # see NOTE [Complex gradients]
    unrecorded = _same_shape(np.add)

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        if type(alpha) is not int or alpha != 1:
            _check_alpha("add", a.dtype, alpha)
        ctx.shapes, ctx.alpha = (a.shape, b.shape), alpha
        if alpha != 1:
            out = a + _int_alpha(a, alpha) * b
            # bool + 2 * bool is a bool sum in torch (NumPy would count it in int64), and
            # bfloat16 * 0.5 is float32 in ml_dtypes
            return out if out.dtype == a.dtype else out.astype(a.dtype)
        if a.shape == b.shape:  # nothing to broadcast: NumPy's loop (per-op overhead)
            if a.nbytes >= REUSE_MIN_BYTES and a.dtype == b.dtype:  # a residual stream's sums
                out = reusable_like(a)  # NOTE [Reused buffers] in _backend.py
                if out is not None:
                    return np.add(a, b, out=out)
            return a + b
        out = _broadcast_binary("add", a, b)  # NOTE [Row-broadcast binary ops]
        return a + b if out is None else out

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.shapes
        if ctx.alpha == 1 and _FAST_SUMS[0] and not _grad_state.enabled and \
                grad._data.size >= _kreduce.SUM_MIN:
            # nothing records this backward: both sums in one read of grad
            sums = _kreduce.sum_to_both(grad._data, sa, sb)  # NOTE [Broadcast add gradients
            if sums is not None:                              # in one pass]
                ga, gb = sums
                return (grad if ga is None else _make(ga)), (grad if gb is None else _make(gb))
        gb = grad if ctx.alpha == 1 else grad * ctx.alpha
        return sum_to(grad, sa), sum_to(gb, sb)


class Sub(Op):
    """input - alpha * other, broadcasting."""

    holomorphic = True  # see NOTE [Complex gradients]

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        if a.dtype == np.bool_:
            raise RuntimeError("sub: Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        if type(alpha) is not int or alpha != 1:
            _check_alpha("sub", a.dtype, alpha)
        ctx.shapes, ctx.alpha = (a.shape, b.shape), alpha
        if alpha != 1:
            out = a - _int_alpha(a, alpha) * b
            return out if out.dtype == a.dtype else out.astype(a.dtype)  # (see Add)
        out = _broadcast_binary("sub", a, b)  # NOTE [Row-broadcast binary ops]
        return a - b if out is None else out

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.shapes
        return sum_to(grad, sa), sum_to(-grad if ctx.alpha == 1 else grad * -ctx.alpha, sb)


# NOTE [Unrecorded product backward]
# Mul's backward is two products of the same shape as the gradient. When nothing records the
# backward (no create_graph), nothing watches op calls and the three arrays share shape and
# dtype, they are NumPy's multiply on the arrays, which is what `grad * b` would run after its
# dtype and hook checks (~1 us of a 4x4 product's forward and backward of ~42). Not for 0-d
# arrays, whose product NumPy returns as a scalar.
class Mul(Op):
    """input * other, broadcasting."""

    holomorphic = True  # see NOTE [Complex gradients]
    unrecorded = _same_shape(np.multiply)

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        if a.shape == b.shape:  # nothing to broadcast: NumPy's loop (per-op overhead)
            return a * b
        out = _broadcast_binary("mul", a, b)  # NOTE [Row-broadcast binary ops]
        return a * b if out is None else out

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        g, x, y = grad._data, a._data, b._data
        if (g.shape == x.shape == y.shape and g.ndim and g.dtype is x.dtype is y.dtype
                and backward_on_arrays(grad)):
            # NOTE [Unrecorded product backward]
            return (_make(g * y) if need[0] else None, _make(g * x) if need[1] else None)
        ga = sum_to(grad * b, a.shape) if need[0] else None
        gb = sum_to(grad * a, b.shape) if need[1] else None
        return ga, gb


class Div(Op):
    """input / other (true division; integers divide as floats)."""

    holomorphic = True  # see NOTE [Complex gradients]

    @staticmethod
    def forward(ctx, a, b, rounding_mode=None):
        ctx.rounding_mode = rounding_mode
        if rounding_mode is None:
            ctx.save_for_backward(a, b)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return a / b
        ctx.shapes = (a.shape, b.shape)
        if rounding_mode not in ("trunc", "floor"):  # (torch: a RuntimeError)
            raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                               f"'floor' but found '{rounding_mode}'")
        _rounding_checks("div" if rounding_mode == "trunc" else "floor_divide", a, b)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if rounding_mode == "floor":
                # floats too: NumPy's floor_divide is Python's (and torch's) a // b, exact where
                # floor(a / b) is not (1 // 0.1 is 9; an infinite a gives NaN)
                return np.floor_divide(a, b)
            if a.dtype.kind in "iu":  # "trunc"
                return (np.trunc(a / b)).astype(a.dtype)
            return np.trunc(a / b)

    @staticmethod
    def backward(ctx, grad):
        if ctx.rounding_mode is not None:  # piecewise constant: zero gradient almost everywhere
            sa, sb = ctx.shapes
            return grad.new_zeros(sa), grad.new_zeros(sb)
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = sum_to(grad / b, a.shape) if need[0] else None
        # d(a/b)/db = -a/b^2, taken as -(a/b)/b as torch does: b*b underflows (b = 1e-30 in
        # float32 gave inf where the answer is 1e30) or overflows (a = inf, b = 1e30 gave NaN)
        gb = sum_to(-grad * (a / b) / b, b.shape) if need[1] else None
        return ga, gb


_add = _binary_fn("add", Add)
_sub = _binary_fn("sub", Sub)
_mul = _binary_fn("mul", Mul)
_div_true = _binary_fn("div", Div, result=_to_float)
_div_round = _binary_fn("div", Div)


def _div(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _div_true(input, other)
    return _div_round(input, other, rounding_mode=rounding_mode)


_div.as_operator = _div_true.as_operator  # a / b never rounds


register("add", inplace=True, deprecated="alpha")(_add)
register("sub", inplace=True, aliases=("subtract",), deprecated="alpha")(_sub)
register("mul", inplace=True, aliases=("multiply",))(_mul)
register("div", inplace=True, aliases=("divide", "true_divide"))(_div)


_floor_divide = _binary_fn("floor_divide", Div)  # its own name in error messages


def floor_divide(input, other):
    """input // other, rounding toward negative infinity."""
    return _floor_divide(input, other, rounding_mode="floor")


def _floor_divide_operator(input, other):
    return _floor_divide.as_operator(input, other, rounding_mode="floor")


floor_divide.as_operator = _floor_divide_operator
register("floor_divide", inplace=True)(floor_divide)


# NOTE [Kernel dtypes]
# torch's CPU kernels exist for a set of dtypes per op, and a promoted operand dtype outside it is
# a NotImplementedError ("hypot_cpu" not implemented for 'Long'), where NumPy would compute
# something (hypot of ints in float64, bool ** bool as int8). The ops check the promoted dtype
# against the kinds torch lacks: "b" bool, "iu" integers, "c" complex (NumPy's dtype kinds).
def no_kernel(name, a, kinds, expected):
    """Raise torch's NotImplementedError when the promoted array ``a``'s dtype kind is one of
    ``kinds`` (see NOTE [Kernel dtypes])."""
    kind = a.dtype.kind
    if kind in kinds:
        what = {"b": "bool", "c": "complex"}.get(kind, "integer")
        raise NotImplementedError(f"{name}: not implemented for {what} dtype "
                                  f"{D.from_numpy_dtype(a.dtype)}; expected {expected}.")


def _rounding_checks(name, a, b):
    """torch's refusals for the rounding ops (after promotion): bool and complex operands (a
    float tensor with a Python complex promotes to complex here), integers by zero."""
    no_kernel(name, a, "bc", "real numbers other than bool")
    if a.dtype.kind in "iu" and (np.asarray(b) == 0).any():
        raise RuntimeError("ZeroDivisionError: integer division by zero")


class Remainder(Op):
    """Python-style modulus: the result has the sign of the divisor."""

    @staticmethod
    def forward(ctx, a, b):
        _rounding_checks("remainder", a, b)
        ctx.save_for_backward(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.remainder(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors  # a - floor(a/b)*b: d/da = 1, d/db = -(a // b)
        return sum_to(grad, a.shape), sum_to(-grad * _div(a, b, rounding_mode="floor"), b.shape)


class Fmod(Op):
    """C-style modulus: the result has the sign of the dividend."""

    @staticmethod
    def forward(ctx, a, b):
        _rounding_checks("fmod", a, b)
        ctx.save_for_backward(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.fmod(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return sum_to(grad, a.shape), sum_to(-grad * (a / b).trunc(), b.shape)


register("remainder", inplace=True)(_binary_fn("remainder", Remainder))
register("fmod", inplace=True)(_binary_fn("fmod", Fmod, numbers="other"))


# NOTE [Special scalar exponents]
# np.power on floats calls libm's pow per element (~60 ns; x ** 3.0 on a 131k-element tensor took
# 8 ms, GELU's tanh approximation hits it). For the scalar exponents torch's CPU kernel also
# special-cases, products, sqrt and reciprocals give the result instead (the same special values:
# sqrt(-0.) is -0., as in torch; within an ulp or two of pow elsewhere).
_POW_SPECIAL = {
    2.0: lambda a: a * a,
    3.0: lambda a: a * a * a,
    0.5: np.sqrt,
    -0.5: lambda a: np.reciprocal(np.sqrt(a)),
    -1.0: np.reciprocal,
    -2.0: lambda a: np.reciprocal(a * a),
}


def _pow_special(a, b):
    """a ** b for a float/complex array and a 0-d exponent torch computes without pow, or None.
    Taken at every size, since the special values differ from pow's ((-0.) ** -0.5 is -inf)."""
    if b.ndim or a.dtype.kind not in "fc" or b.dtype != a.dtype:
        return None
    fn = _POW_SPECIAL.get(complex(b).real if b.dtype.kind == "c" and b.imag == 0 else b.item())
    if fn is None:
        return None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # as pow: silent
        return np.asarray(fn(a))


class Pow(Op):
    """input ** exponent."""

    holomorphic = True  # see NOTE [Complex gradients]

    @staticmethod
    def forward(ctx, a, b):
        if a.dtype == np.bool_:  # (bool ** bool: the promoted dtype has no pow kernel)
            no_kernel("pow", a, "b", "a non-bool base or exponent")
        y = _pow_special(a, b)
        if y is None and a.dtype.kind in "iu":
            y = _int_pow(a, b)
        elif y is None:
            # an array even for 0-d inputs: saved by identity. Silent on 0 ** -1, inf, NaN, as
            # torch (NumPy would warn)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                y = np.asarray(np.power(a, b))
        ctx.save_for_backward(a, b, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        a, b, y = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = gb = None
        if need[0]:  # d a^b / da = b * a^(b-1); written so that a = 0, b >= 1 stays finite
            ga = grad * b * a.pow(b - 1)
            # mask before sum_to: b may broadcast against a
            ga = sum_to(where(b == 0, 0.0, ga) if b.numel() > 0 else ga, a.shape)
        if need[1]:  # d a^b / db = a^b * log(a), taken as 0 where a == 0 and b >= 0 (a = 0,
            # b < 0: inf * log(0), +-inf as torch)
            gb = grad * y * a.log()
            b_nonneg = (b.real >= 0) if b.is_complex() else (b >= 0)
            gb = sum_to(where((a == 0) & b_nonneg, 0.0, gb), b.shape)
        return ga, gb


def _int_pow(a, b):
    """a ** b on integer arrays as torch computes it: a negative exponent from a tensor gives
    the truncated 1 / a^|b| (1 for a = 1, +-1 for a = -1, else 0; 0 ** -n too), where NumPy
    raises."""
    negative = b < 0
    if not negative.any():
        return np.asarray(np.power(a, b))
    y = np.power(a, np.where(negative, 0, b))
    sign = np.where(b % 2 == 0, 1, -1)
    inverse = np.where(a == 1, 1, np.where(a == -1, sign, 0))
    return np.where(negative, inverse, y).astype(y.dtype)


def _number_exponent(input, exponent):
    """Check a Python number exponent of a tensor as torch does: a negative int exponent of an
    integer tensor is refused (a tensor exponent is computed, see _int_pow), and one that
    stays in the tensor's dtype must fit it (NOTE [Numbers that do not fit the dtype])."""
    if not isinstance(input, Tensor) or type(exponent) not in (int, float):
        return
    kind = input._data.dtype.kind
    if type(exponent) is int and kind in "biu":
        if exponent < 0:
            raise RuntimeError("pow: Integers to negative integer powers are not allowed; got "
                               f"an exponent of {exponent} for a tensor of dtype {input.dtype}. "
                               "Use a float exponent or tensor.")
        if kind != "b":
            D.check_fits("pow", exponent, input.dtype)
    elif input.dtype in (D.float16, D.bfloat16):  # (float32/64 take it in double precision)
        D.check_fits("pow", exponent, input.dtype)


def _pow(input, exponent):
    _number_exponent(input, exponent)
    if type(exponent) is bool and isinstance(input, Tensor) and input.dtype is D.bool_:
        # torch takes a number exponent of 0 or 1 without its kernel, which has no bool version
        return input.clone() if exponent else input.new_ones(input.shape)
    return _pow_fn(input, exponent)


def _pow_operator(input, exponent):
    _number_exponent(input, exponent)
    return _pow_fn.as_operator(input, exponent)


_pow_fn = _binary_fn("pow", Pow)
_pow.as_operator = _pow_operator
register("pow", inplace=True)(_pow)


def float_power(input, exponent):
    """input ** exponent computed in float64 (complex128 when either is complex)."""
    complex_ = any(isinstance(v, complex) or (isinstance(v, Tensor) and v.is_complex())
                   for v in (input, exponent))
    dt = D.complex128 if complex_ else D.float64
    return _pow(input.to(dt) if isinstance(input, Tensor) else input,
                exponent.to(dt) if isinstance(exponent, Tensor) else
                (complex(exponent) if complex_ else float(exponent)))


register("float_power", method=True, out_exact=True)(float_power)


class Atan2(Op):
    """Angle of (other, input) in radians."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.arctan2(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors  # d/da = b/(a^2+b^2), d/db = -a/(a^2+b^2)
        den = a * a + b * b
        # 0 where the denominator is 0 (the origin, or a^2 + b^2 underflowing), as torch
        zero = den == 0
        ga = where(zero, 0.0, grad * b / den)
        gb = where(zero, 0.0, -grad * a / den)
        return sum_to(ga, a.shape), sum_to(gb, b.shape)


register("atan2", inplace=True, aliases=("arctan2",))(
    _binary_fn("atan2", Atan2, result=_to_float, numbers="none"))


class _MaxMin(Op):
    fn = None

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save_for_backward(a, b)
        return cls.fn(a, b)

    @classmethod
    def backward(cls, ctx, grad):
        # torch's rule: the gradient is halved at ties and zeroed for the operand that lost;
        # where either is NaN neither lost, so both get all of it. Selects, not products, so an
        # inf/NaN grad does not leak into the zeroed side.
        a, b = ctx.saved_tensors
        a_lost = (a < b) if cls.fn is np.maximum else (a > b)
        b_lost = (a > b) if cls.fn is np.maximum else (a < b)
        shared = where(a == b, grad / 2, grad)
        return (sum_to(where(a_lost, 0.0, shared), a.shape),
                sum_to(where(b_lost, 0.0, shared), b.shape))


class Maximum(_MaxMin):
    """Elementwise maximum (NaN propagates)."""
    fn = np.maximum


class Minimum(_MaxMin):
    """Elementwise minimum (NaN propagates)."""
    fn = np.minimum


class _FmaxFmin(_MaxMin):
    @classmethod
    def backward(cls, ctx, grad):
        # torch's rule: all of the gradient goes to the operand picked, input at ties and where
        # other is NaN (other where only input is NaN)
        a, b = ctx.saved_tensors
        wins = (a >= b) if cls.fn is np.fmax else (a <= b)
        to_a = wins | b.isnan()
        return sum_to(where(to_a, grad, 0.0), a.shape), sum_to(where(to_a, 0.0, grad), b.shape)


class Fmax(_FmaxFmin):
    """Elementwise maximum ignoring NaN."""
    fn = np.fmax


class Fmin(_FmaxFmin):
    """Elementwise minimum ignoring NaN."""
    fn = np.fmin

register("maximum")(_binary_fn("maximum", Maximum, numbers="none"))
register("minimum")(_binary_fn("minimum", Minimum, numbers="none"))
register("fmax")(_binary_fn("fmax", Fmax, numbers="none"))
register("fmin")(_binary_fn("fmin", Fmin, numbers="none"))


class Hypot(Op):
    """sqrt(input^2 + other^2)."""

    @staticmethod
    def forward(ctx, a, b):
        no_kernel("hypot", a, "biuc", "floating point tensors")
        y = np.asarray(np.hypot(a, b))
        ctx.save_for_backward(a, b, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        a, b, y = ctx.saved_tensors
        return sum_to(grad * a / y, a.shape), sum_to(grad * b / y, b.shape)


register("hypot", inplace=True)(_binary_fn("hypot", Hypot, numbers="none"))


class Copysign(Op):
    """|input| with the sign of other."""

    @staticmethod
    def forward(ctx, a, b):
        no_kernel("copysign", a, "c", "real tensors")  # (a Python complex operand)
        y = np.asarray(np.copysign(a, b))
        ctx.save_for_backward(a, y)
        ctx.bshape = b.shape
        return y

    @staticmethod
    def backward(ctx, grad):
        a, y = ctx.saved_tensors
        s = where(a == 0, 0.0, y / where(a == 0, 1.0, a))
        return sum_to(grad * s, a.shape), grad.new_zeros(ctx.bshape)


register("copysign", inplace=True)(
    _binary_fn("copysign", Copysign, result=_to_float, numbers="other"))


class Xlogy(Op):
    """input * log(other), defined as 0 where input == 0 and other is not NaN."""

    @staticmethod
    def forward(ctx, a, b):
        no_kernel("xlogy", a, "c", "real floating point tensors")
        ctx.save_for_backward(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            y = np.where((a == 0) & ~np.isnan(b), np.zeros((), a.dtype), a * np.log(b))
        return y.astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        # torch's derivatives: d/da = log(b) (at a = 0 too), taken as 0 where a == 0 and b <= 0;
        # d/db = a / b everywhere (0 / 0 is NaN)
        a, b = ctx.saved_tensors
        ga = where((a == 0) & (b <= 0), 0.0, _xlogy(grad, b))
        return sum_to(ga, a.shape), sum_to(grad * a / b, b.shape)


_xlogy = _binary_fn("xlogy", Xlogy, result=_to_float)
register("xlogy", inplace=True)(_xlogy)


# ----------------------------------------------------------------------------- comparisons
def _compare(name, ufunc):
    ordering = name not in ("eq", "ne")

    class Cmp(Op):
        @staticmethod
        def forward(ctx, a, b):
            if ordering and (a.dtype.kind == "c" or np.asarray(b).dtype.kind == "c"):
                # complex numbers have no order; torch raises NotImplementedError too
                raise NotImplementedError(f"{name}: not implemented for complex tensors; got "
                                          f"dtypes {a.dtype} and {np.asarray(b).dtype}.")
            return ufunc(a, b)

    Cmp.__name__ = name.capitalize()
    fn = _binary_fn(name, Cmp, numbers="other")
    fn.__doc__ = f"Elementwise {name} comparison; returns a bool tensor."
    return fn


for _n, _uf, _al in (("eq", np.equal, ()), ("ne", np.not_equal, ("not_equal",)),
                     ("lt", np.less, ("less",)), ("le", np.less_equal, ("less_equal",)),
                     ("gt", np.greater, ("greater",)),
                     ("ge", np.greater_equal, ("greater_equal",))):
    register(_n, inplace=True, aliases=_al)(
        _compare(_n, _uf))


def _logical(name, ufunc):
    def fn(input, other):
        tensor_operands(name, input, other, "none")
        a = input._data if isinstance(input, Tensor) else np.asarray(input)
        b = other._data if isinstance(other, Tensor) else np.asarray(other)
        try:
            return _make(np.asarray(ufunc(a, b)))
        except ValueError:
            raise _bcast_error(name, a, b) from None

    fn.__name__ = name
    return fn


for _n, _uf in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                ("logical_xor", np.logical_xor)):
    register(_n, inplace=True)(_logical(_n, _uf))


def _bitwise(name, ufunc):
    shift = "shift" in name

    class Bitwise(Op):
        @staticmethod
        def forward(ctx, a, b):
            if a.dtype.kind == "c":  # (a Python complex promotes a float tensor here)
                raise NotImplementedError(f"{name}: not implemented for complex dtype "
                                          f"{a.dtype}; expected integer or bool tensors.")
            if a.dtype.kind == "f" or a.dtype == D.bfloat16.np:
                # NotImplementedError (a RuntimeError) is what torch raises here
                raise NotImplementedError(f"{name}: not implemented for floating dtype "
                                          f"{a.dtype}; expected integer or bool tensors.")
            if shift:
                no_kernel(name, a, "b", "integer tensors (no bool shifts)")
            return ufunc(a, b)

    Bitwise.__name__ = "".join(p.capitalize() for p in name.split("_"))
    return _binary_fn(name, Bitwise)


for _n, _uf in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                ("bitwise_xor", np.bitwise_xor), ("bitwise_left_shift", np.left_shift),
                ("bitwise_right_shift", np.right_shift)):
    register(_n, inplace=True)(
        _bitwise(_n, _uf))
