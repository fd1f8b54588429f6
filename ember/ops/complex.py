"""Complex-number ops: real/imag and view_as_real/view_as_complex (views), conj, angle, polar,
complex, is_complex.

Gradients follow torch's convention (NOTE [Complex gradients] in autograd/function.py): for a
real loss L of z = x + iy, the gradient held for z is dL/dx + i dL/dy.

``conj`` is eager here: it returns a new tensor holding the conjugated values, where torch
returns a lazy view with a conjugate bit (so ``is_conj()`` is always False and writes to
``z.conj()`` do not reach ``z``); see docs/DEVIATIONS.md.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make
from ..autograd.function import Op
from .registry import ensure_tensor, export, register


def _need_complex(name, x):
    if not x.is_complex():
        raise RuntimeError(f"{name}: expected a complex tensor; got dtype {x.dtype}.")


class _RealPart(Op):
    """The real parts of a complex tensor, as a view sharing its memory."""

    view = True

    @staticmethod
    def forward(ctx, z):
        return z.real

    @staticmethod
    def backward(ctx, grad):
        # Re(z) = x: dL/dx = grad, dL/dy = 0
        return complex_(grad, grad.new_zeros(grad.shape))


class _ImagPart(Op):
    """The imaginary parts of a complex tensor, as a view sharing its memory."""

    view = True

    @staticmethod
    def forward(ctx, z):
        return z.imag

    @staticmethod
    def backward(ctx, grad):
        # Im(z) = y: dL/dx = 0, dL/dy = grad
        return complex_(grad.new_zeros(grad.shape), grad)


@register("real", method=False, wrap_out=False)  # Tensor.real: a property (below); no out=
def real(input):
    """The real part: a view for complex tensors (writes reach ``input``), ``input`` itself for
    real ones."""
    ensure_tensor(input, "real")
    return _RealPart.apply(input) if input.is_complex() else input


@register("imag", method=False, wrap_out=False)  # Tensor.imag: a property (below); no out=
def imag(input):
    """The imaginary part of a complex tensor, as a view (writes reach ``input``)."""
    ensure_tensor(input, "imag")
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes; got "
                           f"dtype {input.dtype}.")
    return _ImagPart.apply(input)


def _set_part(part):
    def setter(self, value):
        getattr(self, part).copy_(value if isinstance(value, Tensor) else
                                  _make(np.asarray(value)))
    return setter


# Tensor.real / Tensor.imag are properties in torch (and assignable)
Tensor.real = property(lambda self: real(self), _set_part("real"))
Tensor.imag = property(lambda self: imag(self), _set_part("imag"))


class ViewAsReal(Op):
    """A complex tensor's memory seen as real pairs: shape (..., 2)."""

    view = True

    @staticmethod
    def forward(ctx, z):
        # a trailing axis of length 1 is contiguous, so NumPy can split each element in two
        return z[..., np.newaxis].view(z.real.dtype)

    @staticmethod
    def backward(ctx, grad):
        return view_as_complex(grad.contiguous())


class ViewAsComplex(Op):
    """A real (..., 2) tensor's memory seen as complex numbers."""

    view = True

    @staticmethod
    def forward(ctx, x):
        return x.view(np.complex64 if x.dtype == np.float32 else np.complex128)[..., 0]

    @staticmethod
    def backward(ctx, grad):
        return view_as_real(grad)


@register("view_as_real", method=False)
def view_as_real(input):
    """(..., 2) real view of a complex tensor: [..., 0] the real parts, [..., 1] the imaginary."""
    ensure_tensor(input, "view_as_real")
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors; got dtype "
                           f"{input.dtype}.")
    return ViewAsReal.apply(input)


@register("view_as_complex", method=False)
def view_as_complex(input):
    """Complex view of a float32/float64 tensor whose last dim has size 2 and stride 1."""
    ensure_tensor(input, "view_as_complex")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError("view_as_complex is only supported for float and double tensors, but "
                           f"got a tensor of scalar type: {input.dtype}.")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError(f"view_as_complex: Tensor must have a last dimension of size 2; got "
                           f"shape {list(input.shape)}.")
    if input.stride(-1) != 1:
        raise RuntimeError("view_as_complex: Tensor must have a last dimension with stride 1; got "
                           f"stride {input.stride(-1)}.")
    strides = input.stride()[:-1]
    if any(s % 2 for s in strides) or input.storage_offset() % 2:
        raise RuntimeError("view_as_complex: Tensor must have a stride divisible by 2 for all "
                           f"but last dimension; got strides {list(input.stride())}.")
    return ViewAsComplex.apply(input)


class Conj(Op):
    """Complex conjugate (a copy; see the module docstring)."""

    @staticmethod
    def forward(ctx, z):
        return np.conjugate(z)

    @staticmethod
    def backward(ctx, grad):
        return grad.conj()


@register("conj", wrap_out=False)  # (torch's conj takes no out=)
def conj(input):
    """Complex conjugate; a real tensor is returned as it is. Differs from torch: eager (a new
    tensor), not a lazy view with the conjugate bit."""
    ensure_tensor(input, "conj")
    return Conj.apply(input) if input.is_complex() else input


@register("conj_physical", inplace=True)
def conj_physical(input):
    """Complex conjugate computed now (always a new tensor for complex input)."""
    ensure_tensor(input, "conj_physical")
    return Conj.apply(input) if input.is_complex() else input


@register("resolve_conj")
def resolve_conj(input):
    """``input``: ember's conj is eager, so no tensor carries an unresolved conjugate bit."""
    return input


@register("resolve_neg")
def resolve_neg(input):
    """``input``: ember has no lazy negation bit."""
    return input


@export(method=True)
def is_conj(input) -> bool:
    """False: ember's conj is eager (see the module docstring)."""
    return False


@export(method=True)
def is_neg(input) -> bool:
    return False


@export
def is_complex(input) -> bool:
    """Whether ``input`` has a complex dtype."""
    return ensure_tensor(input, "is_complex").is_complex()


class Angle(Op):
    """Argument of each element, in radians (0 or pi for real inputs)."""

    @staticmethod
    def forward(ctx, z):
        if z.dtype.kind != "c":
            if z.dtype.kind in "biu":
                z = z.astype(D.get_default_dtype().np)
            ctx.real = True
            # torch: pi for negative reals, 0 otherwise, NaN stays NaN
            return np.where(z < 0, np.pi, np.where(np.isnan(z), z, 0)).astype(z.dtype)
        ctx.real = False
        ctx.save_for_backward(z)
        return np.angle(z)

    @staticmethod
    def backward(ctx, grad):
        if ctx.real:
            return grad * 0
        (z,) = ctx.saved_tensors
        # angle = atan2(y, x): dL/dx = -y/|z|^2 grad, dL/dy = x/|z|^2 grad, i.e. grad * iz/|z|^2
        r2 = z.real * z.real + z.imag * z.imag
        safe = r2 + (r2 == 0).to(r2.dtype)  # angle has no derivative at 0; torch gives 0 there
        return complex_(-grad * z.imag / safe, grad * z.real / safe)


@register("angle")
def angle(input):
    """Elementwise argument (phase) of a complex tensor; for real input 0 or pi."""
    ensure_tensor(input, "angle")
    return Angle.apply(input)


class Complex(Op):
    """real + i * imag, from two real tensors of one dtype (broadcasting)."""

    @staticmethod
    def forward(ctx, re, im):
        ctx.shapes = (re.shape, im.shape)
        out = np.empty(np.broadcast_shapes(re.shape, im.shape),
                       np.complex64 if re.dtype == np.float32 else np.complex128)
        out.real, out.imag = re, im
        return out

    @staticmethod
    def backward(ctx, grad):
        from .registry import sum_to
        sr, si = ctx.shapes
        return sum_to(grad.real, sr), sum_to(grad.imag, si)


def complex_(real, imag):
    """ember.complex without the argument checks (for backward formulas)."""
    return Complex.apply(real, imag)


@register("complex", method=False)
def complex(real, imag):
    """A complex tensor from its real and imaginary parts (float32 or float64, same dtype)."""
    ensure_tensor(real, "complex", "real")
    ensure_tensor(imag, "complex", "imag")
    if real.dtype != imag.dtype:
        raise RuntimeError(f"complex: Expected object of scalar type {real.dtype} but got scalar "
                           f"type {imag.dtype} for second argument")
    if real.dtype not in (D.float32, D.float64):
        raise RuntimeError("complex: Expected both inputs to be Float or Double tensors but got "
                           f"{real.dtype} and {imag.dtype}")
    try:
        return Complex.apply(real, imag)
    except ValueError:
        raise RuntimeError(f"complex: shapes {list(real.shape)} and {list(imag.shape)} do not "
                           "broadcast") from None


@register("polar", method=False)
def polar(abs, angle):
    """abs * (cos(angle) + i sin(angle)); abs and angle real tensors of one dtype."""
    ensure_tensor(abs, "polar", "abs")
    ensure_tensor(angle, "polar", "angle")
    if abs.dtype != angle.dtype or abs.dtype not in (D.float32, D.float64):
        raise RuntimeError("polar: Expected both inputs to be Float or Double tensors of the "
                           f"same dtype but got {abs.dtype} and {angle.dtype}")
    return complex(abs * angle.cos(), abs * angle.sin())


# ----------------------------------------------------------------------------- unsupported ops
# Ops that need an order (or integer rounding) have no complex version in torch; NumPy would
# order complex numbers lexicographically and return an answer, so they are refused here, once,
# by wrapping the public function, the method and the in-place method.
_ORDERED = ("max", "min", "amax", "amin", "aminmax", "argmax", "argmin", "sort", "argsort",
            "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin",
            "maximum", "minimum", "fmax", "fmin", "clamp", "clip", "clamp_min", "clamp_max",
            "remainder", "fmod", "floor_divide", "atan2", "arctan2", "hypot", "copysign",
            "heaviside", "logaddexp2", "searchsorted", "bucketize", "histc",
            "signbit", "nextafter", "frexp")  # (torch's logaddexp and ldexp take complex)


def _refuse_complex(name, fn):
    def wrapper(*args, **kwargs):
        for a in args[:2]:
            if isinstance(a, Tensor) and a._data.dtype.kind == "c":
                _check_arguments_first(name, fn, args, kwargs)
                raise NotImplementedError(f"{name}: not implemented for complex tensors; got "
                                          f"dtype {a.dtype}.")
        return fn(*args, **kwargs)

    wrapper.__name__, wrapper.__qualname__, wrapper.__doc__ = name, name, fn.__doc__
    wrapper.__wrapped__ = fn
    return wrapper


def _check_arguments_first(name, fn, args, kwargs):
    """torch reports a bad argument (a dim out of range or of the wrong type, a missing one)
    before the complex dtype: run the op on copies of the real parts, so that such an error
    surfaces as it would for a real input. Only on this error path. argmax/argmin check the
    dtype before the dim's range (only the argument parser's TypeError comes first)."""
    real = [_make(a._data.real.copy()) if isinstance(a, Tensor) and a._data.dtype.kind == "c"
            else a for a in args]
    kwargs = {k: v for k, v in kwargs.items() if k != "out"}  # (a real result would not fit)
    try:
        fn(*real, **kwargs)
    except TypeError:
        raise
    except Exception:
        if name.rstrip("_") not in ("argmax", "argmin"):
            raise


def _refuse_inplace_abs(method):
    def abs_(self, *args, **kwargs):
        if self._data.dtype.kind == "c":
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        return method(self, *args, **kwargs)

    abs_.__name__, abs_.__doc__, abs_.__wrapped__ = method.__name__, method.__doc__, method
    return abs_


def _install_complex_refusals():
    from .registry import FUNCTIONS, OPS
    for name in _ORDERED:
        if name in FUNCTIONS:
            FUNCTIONS[name] = _refuse_complex(name, FUNCTIONS[name])
        if name in OPS:  # the op database's callable (not always FUNCTIONS[name])
            OPS[name].fn = _refuse_complex(name, OPS[name].fn)
        for attr in (name, name + "_"):
            method = Tensor.__dict__.get(attr)
            if callable(method):
                setattr(Tensor, attr, _refuse_complex(attr, method))
    for attr in ("abs_", "absolute_"):  # |z| is real: it cannot be stored back into z
        setattr(Tensor, attr, _refuse_inplace_abs(Tensor.__dict__[attr]))
    for dunder, name in (("floordiv", "floor_divide"), ("mod", "remainder")):
        for attr in (f"__{dunder}__", f"__r{dunder}__", f"__i{dunder}__"):
            method = Tensor.__dict__.get(attr)
            if callable(method):
                setattr(Tensor, attr, _refuse_complex(name, method))


_install_complex_refusals()
