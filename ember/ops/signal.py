"""Short-time Fourier transforms: ``ember.stft`` / ``ember.istft`` (and the Tensor methods).

Both are compositions of differentiable ops: stft frames the (padded) signal with a strided
view, multiplies by the window and runs ``fft.rfft``/``fft.fft`` over each frame; istft runs
the inverse transform per frame, multiplies by the window again and overlap-adds the frames
(the one primitive here, ``OverlapAdd``, whose backward is the framing view), then divides by
the overlap-added squared window. Gradients reach the input and the window.
"""
from __future__ import annotations

import warnings

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Op
from .registry import export


class OverlapAdd(Op):
    """Sum frames ``(..., T, n)`` taken every ``hop`` points into a signal of
    ``n + hop * (T - 1)`` points; the adjoint of framing a signal with ``unfold``."""

    @staticmethod
    def forward(ctx, frames, hop):
        ctx.hop, ctx.n = hop, frames.shape[-1]
        *batch, count, n = frames.shape
        blocks = -(-n // hop)  # each frame spans this many hop-sized blocks (the last partial)
        padded = np.zeros((*batch, count, blocks * hop), frames.dtype)
        padded[..., :n] = frames
        out = np.zeros((*batch, count + blocks - 1, hop), frames.dtype)
        for k in range(blocks):  # blocks = ceil(n / hop) passes, not one per frame
            out[..., k:k + count, :] += padded[..., :, k * hop:(k + 1) * hop]
        length = n + hop * (count - 1)
        return out.reshape(*batch, -1)[..., :length]

    @staticmethod
    def backward(ctx, grad):
        # the gradient of a frame is the window of the output gradient it was added into
        return grad.unfold(-1, ctx.n, ctx.hop), None


def _int_arg(name, arg, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}(): argument '{arg}' must be int, not {type(value).__name__}")
    return int(value)


def _window_for(name, window, win_length, n_fft, dtype):
    """The window zero-padded on both sides to ``n_fft`` points (centred, as torch does)."""
    import ember
    if window is None:
        warnings.warn(f"{name}: A window was not provided. A rectangular window will be "
                      "applied, which is known to cause spectral leakage; pass "
                      f"window=ember.ones({n_fft}) to silence this, or use a window such as "
                      "ember.hann_window.", UserWarning, stacklevel=3)
        window = ember.ones(win_length, dtype=dtype)
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{list(window.shape)}")
    left = (n_fft - win_length) // 2
    if left or win_length != n_fft:
        window = ember.nn.functional.pad(window, (left, n_fft - win_length - left))
    return window


def _center_pad(x, half, mode):
    """``x`` (B, L) padded by ``half`` points on both sides (stft's ``center=True``)."""
    import ember
    if mode != "reflect" or half == 0:
        return ember.nn.functional.pad(x.unsqueeze(1), (half, half), mode=mode).squeeze(1)
    length = x.shape[-1]
    if half >= length:
        raise RuntimeError(f"stft: Padding size should be less than the corresponding input "
                           f"dimension, but got: padding ({half}, {half}) for a signal of "
                           f"{length} points (pad_mode='reflect' needs n_fft // 2 < length)")
    # reflection without repeating the edge point: two flipped slices, cheaper than F.pad's
    # general gather for the long 1-D signals stft sees
    left = x[..., 1:half + 1].flip(-1)
    right = x[..., length - half - 1:length - 1].flip(-1)
    return ember.cat([left, x, right], dim=-1)


def _lengths(name, n_fft, hop_length, win_length):
    n_fft = _int_arg(name, "n_fft", n_fft)
    hop = n_fft // 4 if hop_length is None else _int_arg(name, "hop_length", hop_length)
    win = n_fft if win_length is None else _int_arg(name, "win_length", win_length)
    return n_fft, hop, win


@export(method=True)
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """Short-time Fourier transform: the FFT of ``n_fft``-point frames taken every
    ``hop_length`` points (default ``n_fft // 4``), each multiplied by ``window`` (``win_length``
    points, zero-padded to ``n_fft`` in the centre; rectangular when None).

    Returns ``(B?, N, T)`` complex: ``N = n_fft // 2 + 1`` when ``onesided`` (the default for
    real input and window), else ``n_fft``; ``T`` frames. ``center`` pads ``n_fft // 2`` points
    on both sides with ``pad_mode``; ``normalized`` scales by ``n_fft ** -0.5``;
    ``align_to_window`` (only with ``center=False``) starts frame t's window at point
    ``t * hop_length``. ``return_complex`` must be given for real input; ``False`` returns the
    deprecated real view with a trailing dim of 2.

    Example:
        >>> import ember
        >>> spec = ember.stft(ember.ones(64), 16, window=ember.hann_window(16),
        ...                   return_complex=True)
        >>> spec.shape
        ember.Size([9, 17])
    """
    import ember
    name = "stft"
    if not isinstance(input, Tensor):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    n_fft, hop, win = _lengths(name, n_fft, hop_length, win_length)
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        return_complex = True
    elif not return_complex:
        warnings.warn("stft with return_complex=False is deprecated: stft will return complex "
                      "tensors for all inputs. Call ember.view_as_real on the complex output "
                      "to get the old format.", UserWarning, stacklevel=2)
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor; got a tensor of shape "
                           f"{list(input.shape)}")
    if not (input.dtype.is_floating_point or input.is_complex()):
        raise RuntimeError(f"stft: expected a tensor of floating point or complex values; got "
                           f"{input.dtype}")
    if align_to_window is not None and center:
        raise RuntimeError("stft: align_to_window should only be set when center = false")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    if center:
        x = _center_pad(x, n_fft // 2, pad_mode)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {length} (the signal length"
                           f"{' after padding' if center else ''}), but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win}")
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError("stft: Cannot have onesided output if window or input is complex")
    dtype = input.dtype if input.dtype.is_floating_point else input.dtype.to_real()
    w = _window_for(name, window, win, n_fft, dtype)
    if align_to_window:
        # frame t's window covers points t*hop .. t*hop + win_length of the unpadded signal
        left = (n_fft - win) // 2
        x = ember.nn.functional.pad(x, (left, n_fft - win - left))
    frames = x.unfold(-1, n_fft, hop) * w
    norm = "ortho" if normalized else "backward"
    spec = (ember.fft.rfft if onesided else ember.fft.fft)(frames, dim=-1, norm=norm)
    spec = spec.transpose(-1, -2)
    if input.ndim == 1:
        spec = spec.squeeze(0)
    return spec if return_complex else ember.view_as_real(spec)


@export(method=True)
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """Inverse of :func:`stft` by weighted overlap-add: each frame's inverse FFT is multiplied
    by the window, the frames are summed at their offsets and divided by the summed squared
    window (which must not vanish anywhere in the kept range).

    ``input`` is ``(B?, N, T)`` complex as stft returns it; ``onesided`` defaults to
    ``N != n_fft``; ``center`` drops the ``n_fft // 2`` padded points at both ends; ``length``
    trims or zero-pads the result. ``return_complex=True`` (two-sided input only) keeps a complex
    signal.

    Example:
        >>> import ember
        >>> w = ember.hann_window(16)
        >>> x = ember.arange(64.0)
        >>> spec = ember.stft(x, 16, window=w, return_complex=True)
        >>> bool(ember.allclose(ember.istft(spec, 16, window=w, length=64), x, atol=1e-4))
        True
    """
    import ember
    name = "istft"
    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           f"from stft with return_complex=True; got {input.dtype}")
    n_fft, hop, win = _lengths(name, n_fft, hop_length, win_length)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex "
                           f"values, but got {input.ndim}")
    if input.numel() == 0:
        raise RuntimeError(f"istft: input tensor cannot be empty; got shape "
                           f"{list(input.shape)}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"istft: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win}")
    if not 0 < hop <= win:
        raise RuntimeError(f"istft: expected 0 < hop_length <= win_length; got "
                           f"hop_length={hop}, win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(f"istft: Invalid window shape. window has to be 1D and length of "
                           f"`win_length`={win}; got {list(window.shape)}")
    bins = input.shape[-2]
    if onesided is None:
        onesided = bins != n_fft
    if onesided:
        if bins != n_fft // 2 + 1:
            raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of "
                               f"the input tensor to match n_fft / 2 + 1 when onesided=True, "
                               f"but got {bins}")
        if return_complex or (window is not None and window.is_complex()):
            raise RuntimeError("istft: Cannot have onesided output if window or input is "
                               "complex")
    elif bins != n_fft:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got {bins}")
    spec = (input if input.ndim == 3 else input.unsqueeze(0)).transpose(-1, -2)
    norm = "ortho" if normalized else "backward"
    if onesided:
        frames = ember.fft.irfft(spec, n=n_fft, dim=-1, norm=norm)
    else:
        frames = ember.fft.ifft(spec, n=n_fft, dim=-1, norm=norm)
        if not return_complex:
            frames = frames.real
    real_dtype = input.dtype.to_real()
    w = _window_for(name, window, win, n_fft, real_dtype)
    count = frames.shape[-2]
    y = OverlapAdd.apply(frames * w, hop)
    envelope = OverlapAdd.apply((w * w).expand(count, n_fft), hop)
    expected = n_fft + hop * (count - 1)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + _int_arg(name, "length", length)
    else:
        end = expected - n_fft // 2 if center else expected
    end = min(end, expected)
    y, envelope = y[..., start:end], envelope[start:end]
    smallest = float(envelope.abs().min()) if envelope.numel() else 1.0
    if smallest < 1e-11:
        raise RuntimeError(f"istft: window overlap add min: {smallest:g}; the squared window "
                           "summed over the frames vanishes somewhere (a zero window, "
                           "hop_length too large, or center=False with a window that is zero at "
                           "its ends), so the signal cannot be recovered there.")
    y = y / envelope
    if length is not None and y.shape[-1] < length:
        warnings.warn("istft: The length of signal is shorter than the length parameter. "
                      "Result is being padded with zeros in the tail. Please check your center "
                      "and hop_length settings.", UserWarning, stacklevel=2)
        y = ember.nn.functional.pad(y, (0, length - y.shape[-1]))
    return y if input.ndim == 3 else y.squeeze(0)

