"""Discrete Fourier transforms: three differentiable primitives over SciPy's pocketfft.

Every public transform of ``ember.fft`` is one of three linear maps along a set of dims:

* ``C2C``: complex (or real) -> complex, ``fftn``/``ifftn``;
* ``R2C``: real -> one-sided complex (the last dim keeps ``n // 2 + 1`` entries), ``rfftn``
  and, conjugated, ``ihfftn``;
* ``C2R``: one-sided Hermitian complex -> real of ``n`` points, ``irfftn`` and ``hfftn``.

Each primitive resizes its input to the transform size (zero-padding or truncating, as the
``n=``/``s=`` arguments ask), transforms, and may resize its output: the last step is only
used by backward passes. The backward of a linear map is its adjoint, and the adjoint of each
primitive is again one of them (see NOTE [FFT adjoints]), so backward is built from the same
three ops and double backward works.
"""
from __future__ import annotations

import numpy as np
import scipy.fft as _sf

from .._threads import get_num_threads
from ..autograd.function import Op

__all__ = ["C2C", "R2C", "C2R", "swap_norm", "real_part"]

_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def swap_norm(norm: str) -> str:
    """The norm whose inverse transform has the scale ``norm`` gives the forward one."""
    return _SWAP[norm]


# NOTE [FFT adjoints]
# Write F for the unnormalized DFT along the dims (sign -1; F^H is the sign +1 transform) and
# s for the scale a norm mode gives (1, 1/sqrt(n) or 1/n). torch's gradient of a real loss with
# respect to a complex input is dL/dRe + i dL/dIm, which for a linear map y = A x is A^H g.
# * C2C: y = s F x, so the gradient is s F^H g: the opposite direction with the same scale,
#   i.e. the swapped norm (the inverse with norm "forward" has scale 1, like the forward with
#   "backward"). Resizing the input to the transform size is adjoint to resizing the gradient
#   back to the input size, which is what `out_sizes` does.
# * R2C: y = trunc(s F x) keeps entries 0..n//2 of the last dim. Its adjoint on a real input is
#   Re(s F^H pad(g)). pocketfft's c2r computes s F^H of the Hermitian extension of g, in which
#   entries 1..(n-1)//2 appear twice (as g_k and conj(g_k)) and the imaginary parts of entries 0
#   and n/2 drop out - which they do from Re(...) too. So the adjoint is c2r(D^-1 g), D doubling
#   entries 1..(n-1)//2 of the last dim: `C2R(halve=True)`.
# * C2R: y = c2r(X) = Re(s F^H pad(D X)) by the same identity, whose adjoint is D trunc(s F y):
#   `R2C(double=True)`. Hence R2C(double=b)^H = C2R(halve=not b) and C2R(halve=h)^H =
#   R2C(double=not h), and each primitive's backward is the other one.
# hfft/ihfft are the conjugated forms (the other sign): the same pairs with direction flipped.


def real_part(t):
    """Re(t) as an ember op (the gradient of a real input of a complex transform)."""
    from .. import real
    return real(t)


def _resize(x: np.ndarray, dims, sizes) -> np.ndarray:
    """Truncate or zero-pad ``x`` along ``dims`` to ``sizes`` (x itself when nothing changes)."""
    if all(x.shape[d] == n for d, n in zip(dims, sizes)):
        return x
    shape = list(x.shape)
    src = [slice(None)] * x.ndim
    for d, n in zip(dims, sizes):
        src[d] = slice(0, min(n, x.shape[d]))
        shape[d] = n
    out = np.zeros(shape, x.dtype)
    out[tuple(src)] = x[tuple(src)]
    return out


def _middle(ndim: int, dim: int, n: int):
    """Index of the entries 1..(n-1)//2 of ``dim``: the ones a one-sided spectrum holds once
    for two entries of the full Hermitian one."""
    idx = [slice(None)] * ndim
    idx[dim] = slice(1, (n - 1) // 2 + 1)
    return tuple(idx)


def _workers(size: int):
    # pocketfft splits the batch over threads; below ~64k points the thread start-up costs more
    return get_num_threads() if size >= 1 << 16 else 1


def _transform(one_dim, n_dim, x, dims, sizes, norm, output_sized=False):
    """SciPy's 1-D function for one dim (its n-D entry point costs ~2x more per call on
    small inputs), else the n-D one. ``output_sized``: the size is the output's (c2r), which
    must always be passed."""
    if len(dims) == 1:
        n = sizes[0]
        if not output_sized and n == x.shape[dims[0]]:
            n = None  # skips SciPy's resize step
        return one_dim(x, n=n, axis=dims[0], norm=norm, workers=_workers(x.size))
    return n_dim(x, s=sizes, axes=dims, norm=norm, workers=_workers(x.size))


class C2C(Op):
    """Complex-to-complex transform along ``dims`` of sizes ``sizes`` (see NOTE [FFT adjoints])."""

    @staticmethod
    def forward(ctx, x, dims, sizes, norm, forward, out_sizes=None):
        ctx.dims, ctx.sizes, ctx.norm, ctx.fwd = dims, sizes, norm, forward
        ctx.in_sizes = tuple(x.shape[d] for d in dims)
        ctx.real_input = x.dtype.kind != "c"
        if not dims:  # fftn over no dims (a 0-d input, dim=()): the input as complex
            return x.astype(np.result_type(x.dtype, np.complex64))
        if forward:
            y = _transform(_sf.fft, _sf.fftn, x, dims, sizes, norm)
        else:
            y = _transform(_sf.ifft, _sf.ifftn, x, dims, sizes, norm)
        if out_sizes is not None:
            y = _resize(y, dims, out_sizes)
        return y

    @staticmethod
    def backward(ctx, grad):
        gx = C2C.apply(grad, ctx.dims, ctx.sizes, swap_norm(ctx.norm), not ctx.fwd, ctx.in_sizes)
        return real_part(gx) if ctx.real_input else gx


class R2C(Op):
    """Real-to-one-sided-complex transform (rfftn; ihfftn with ``forward=False``)."""

    @staticmethod
    def forward(ctx, x, dims, sizes, norm, forward, double=False, out_sizes=None):
        ctx.dims, ctx.sizes, ctx.norm, ctx.fwd, ctx.double = dims, sizes, norm, forward, double
        ctx.in_sizes = tuple(x.shape[d] for d in dims)
        if forward:
            y = _transform(_sf.rfft, _sf.rfftn, x, dims, sizes, norm)
        else:
            y = _transform(_sf.ihfft, _sf.ihfftn, x, dims, sizes, norm)
        if double:
            y[_middle(y.ndim, dims[-1], sizes[-1])] *= 2
        if out_sizes is not None:
            y = _resize(y, dims, out_sizes)
        return y

    @staticmethod
    def backward(ctx, grad):
        return C2R.apply(grad, ctx.dims, ctx.sizes, swap_norm(ctx.norm), not ctx.fwd,
                         not ctx.double, ctx.in_sizes)


class C2R(Op):
    """One-sided-Hermitian-to-real transform to ``sizes`` points (irfftn; hfftn with
    ``forward=True``)."""

    @staticmethod
    def forward(ctx, x, dims, sizes, norm, forward, halve=False, out_sizes=None):
        ctx.dims, ctx.sizes, ctx.norm, ctx.fwd, ctx.halve = dims, sizes, norm, forward, halve
        ctx.in_sizes = tuple(x.shape[d] for d in dims)
        ctx.real_input = x.dtype.kind != "c"
        if halve:
            half = sizes[:-1] + (sizes[-1] // 2 + 1,)
            resized = _resize(x, dims, half)
            x = resized.copy() if resized is x else resized  # never scale the caller's array
            x[_middle(x.ndim, dims[-1], sizes[-1])] *= 0.5
        if forward:
            y = _transform(_sf.hfft, _sf.hfftn, x, dims, sizes, norm, output_sized=True)
        else:
            y = _transform(_sf.irfft, _sf.irfftn, x, dims, sizes, norm, output_sized=True)
        if out_sizes is not None:
            y = _resize(y, dims, out_sizes)
        return y

    @staticmethod
    def backward(ctx, grad):
        gx = R2C.apply(grad, ctx.dims, ctx.sizes, swap_norm(ctx.norm), not ctx.fwd,
                       not ctx.halve, ctx.in_sizes)
        return real_part(gx) if ctx.real_input else gx
