"""The eighteen transforms of ``torch.fft``: argument checking in torch's terms, then one of
the three primitives of ``ember/ops/fft.py`` (C2C, R2C, C2R)."""
from __future__ import annotations

import operator

from .. import _dtype as D
from .._tensor import Tensor
from ..ops.fft import C2C, C2R, R2C
from ..ops.registry import write_out

_NORMS = ("backward", "ortho", "forward")


def _check_tensor(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def _check_input(name, input, real_only=False):
    """The transform's input as a tensor it can take: integer and bool inputs go to the default
    float dtype (torch's rule); half precision is refused, as by torch's CPU backend."""
    kind = input._data.dtype.kind
    if kind in "biu":
        return input.to(D.get_default_dtype())
    if input.dtype in (D.float16, D.bfloat16):
        raise RuntimeError(f"{name}: Unsupported dtype {input.dtype}; the transforms take "
                           "float32, float64 or complex inputs. Convert with .float() first.")
    if real_only and kind == "c":
        raise RuntimeError(f"{name} expects a real input tensor, but got {input.dtype}")
    return input


def _check_norm(name, norm):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'{name}: Invalid normalization mode: "{norm}"; expected None, '
                           "'backward', 'ortho' or 'forward'.")
    return norm


def _as_int(name, arg, value):
    if isinstance(value, bool):
        return int(value)
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}(): argument '{arg}' must be int, not "
                        f"{type(value).__name__}") from None


def _wrap(name, dim, ndim):
    if ndim == 0:
        raise IndexError(f"{name}: Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"{name}: Dimension out of range (expected to be in range of "
                         f"[{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _check_points(name, sizes):
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"{name}: Invalid number of data points ({n}) specified; "
                               "expected at least 1.")


def _plan_1d(name, x, n, dim):
    """(dims, sizes) of a one-dimensional transform; a size of None means the input's."""
    _check_tensor(name, x)
    d = _wrap(name, _as_int(name, "dim", dim), x.ndim)
    return (d,), (None if n is None else _as_int(name, "n", n),)


def _plan_nd(name, x, s, dim):
    """(dims, sizes) of an n-dimensional transform, torch's rules for s and dim together."""
    _check_tensor(name, x)
    if dim is not None:
        dims = (dim,) if not isinstance(dim, (tuple, list)) else tuple(dim)
        dims = tuple(_wrap(name, _as_int(name, "dim", d), x.ndim) for d in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{name}: FFT dims must be unique; got dim={tuple(dim)}")
    if s is None:
        dims = tuple(range(x.ndim)) if dim is None else dims
        return dims, (None,) * len(dims)
    s = (s,) if not isinstance(s, (tuple, list)) else tuple(s)
    s = tuple(_as_int(name, "s", n) for n in s)
    if dim is None:
        if len(s) > x.ndim:
            raise RuntimeError(f"{name}: Got shape with {len(s)} values but input tensor only "
                               f"has {x.ndim} dimensions.")
        dims = tuple(range(x.ndim - len(s), x.ndim))
    elif len(dims) != len(s):
        raise RuntimeError(f"{name}: When given, dim and shape arguments must have the same "
                           f"length; got s={s} and dim={tuple(dims)}")
    # -1 in s means "the input's size along that dim"
    return dims, tuple(None if n == -1 else n for n in s)


def _sizes(name, x, dims, sizes):
    """Transform sizes of a complex or real-to-complex transform."""
    out = tuple(x.shape[d] if n is None else n for d, n in zip(dims, sizes))
    _check_points(name, out)
    return out


def _c2r_sizes(name, x, dims, sizes):
    """Transform sizes of a Hermitian-to-real transform: the last defaults to 2 * (m - 1)."""
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    out = tuple(x.shape[d] if n is None else n for d, n in zip(dims[:-1], sizes[:-1]))
    last = sizes[-1] if sizes[-1] is not None else 2 * (x.shape[dims[-1]] - 1)
    out += (last,)
    _check_points(name, out)
    return out


def _finish(name, result, out):
    if out is None:
        return result
    # as torch: an out of the result's kind (complex or real floating), any precision
    if out.is_complex() != result.is_complex() or not (out.is_complex() or
                                                         out.is_floating_point()):
        kind = "complex" if result.is_complex() else "floating point"
        raise RuntimeError(f"{name} expects a {kind} output tensor, but got {out.dtype}")
    return write_out(out, result, name)


def _c2c(name, input, dims, sizes, norm, forward, out):
    x = _check_input(name, input)
    norm = _check_norm(name, norm)
    return _finish(name, C2C.apply(x, dims, _sizes(name, x, dims, sizes), norm, forward), out)


def _r2c(name, input, dims, sizes, norm, forward, out):
    x = _check_input(name, input, real_only=True)
    norm = _check_norm(name, norm)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    return _finish(name, R2C.apply(x, dims, _sizes(name, x, dims, sizes), norm, forward), out)


def _c2r(name, input, dims, sizes, norm, forward, out):
    x = _check_input(name, input)
    norm = _check_norm(name, norm)
    return _finish(name, C2R.apply(x, dims, _c2r_sizes(name, x, dims, sizes), norm, forward),
                   out)


# ---- one dimension ---------------------------------------------------------------------------

def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional discrete Fourier transform along ``dim``, zero-padded or truncated to
    ``n`` points. ``norm``: "backward" (no scaling, the default), "ortho" (1/sqrt(n)) or
    "forward" (1/n).

    Example:
        >>> import ember
        >>> y = ember.fft.fft(ember.tensor([1.0, 2.0, 3.0, 4.0]))
        >>> y.real
        tensor([10., -2., -2., -2.])
    """
    return _c2c("fft", input, *_plan_1d("fft", input, n, dim), norm, True, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of :func:`fft` ("backward" norm scales by 1/n)."""
    return _c2c("ifft", input, *_plan_1d("ifft", input, n, dim), norm, False, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """FFT of a real signal: the ``n // 2 + 1`` non-negative frequencies."""
    return _r2c("rfft", input, *_plan_1d("rfft", input, n, dim), norm, True, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of :func:`rfft`: ``n`` real points (default ``2 * (input.size(dim) - 1)``) from
    the one-sided spectrum. The imaginary parts of the zero (and, for even n, the Nyquist)
    frequency are ignored."""
    return _c2r("irfft", input, *_plan_1d("irfft", input, n, dim), norm, False, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """FFT of a Hermitian-symmetric signal given by its one-sided half: ``n`` real points."""
    return _c2r("hfft", input, *_plan_1d("hfft", input, n, dim), norm, True, out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of :func:`hfft`: the one-sided half of the inverse FFT of a real signal."""
    return _r2c("ihfft", input, *_plan_1d("ihfft", input, n, dim), norm, False, out)


# ---- two and n dimensions --------------------------------------------------------------------

def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional FFT over ``dim`` (all dims by default; the last ``len(s)`` with ``s``)."""
    return _c2c("fftn", input, *_plan_nd("fftn", input, s, dim), norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of :func:`fftn`."""
    return _c2c("ifftn", input, *_plan_nd("ifftn", input, s, dim), norm, False, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional FFT of a real input, one-sided along the last transformed dim."""
    return _r2c("rfftn", input, *_plan_nd("rfftn", input, s, dim), norm, True, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of :func:`rfftn`; ``s[-1]`` defaults to ``2 * (input.size(dim[-1]) - 1)``."""
    return _c2r("irfftn", input, *_plan_nd("irfftn", input, s, dim), norm, False, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional FFT of a Hermitian-symmetric input given one-sided in the last dim."""
    return _c2r("hfftn", input, *_plan_nd("hfftn", input, s, dim), norm, True, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of :func:`hfftn`: one-sided in the last transformed dim."""
    return _r2c("ihfftn", input, *_plan_nd("ihfftn", input, s, dim), norm, False, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional FFT (:func:`fftn` over the last two dims by default)."""
    return _c2c("fft2", input, *_plan_nd("fft2", input, s, dim), norm, True, out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional inverse FFT."""
    return _c2c("ifft2", input, *_plan_nd("ifft2", input, s, dim), norm, False, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional FFT of a real input."""
    return _r2c("rfft2", input, *_plan_nd("rfft2", input, s, dim), norm, True, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Inverse of :func:`rfft2`."""
    return _c2r("irfft2", input, *_plan_nd("irfft2", input, s, dim), norm, False, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional FFT of a Hermitian-symmetric input."""
    return _c2r("hfft2", input, *_plan_nd("hfft2", input, s, dim), norm, True, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Inverse of :func:`hfft2`."""
    return _r2c("ihfft2", input, *_plan_nd("ihfft2", input, s, dim), norm, False, out)
