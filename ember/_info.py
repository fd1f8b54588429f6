"""finfo/iinfo, the default device, print options and memory formats: small torch-level records."""

from __future__ import annotations

import numpy as np

from . import _dtype as D
from . import _format

__all__ = ["finfo", "iinfo", "memory_format", "channels_last", "channels_last_3d",
           "contiguous_format", "preserve_format", "set_printoptions", "set_default_device",
           "get_default_device"]


def _resolve(type, kind, default):
    if type is None:
        type = default()
    if isinstance(type, str):
        type = D._by_name(type)
    if not isinstance(type, D.dtype):
        raise TypeError(f"{kind}(): argument 'type' must be an ember.dtype, not "
                        f"{type.__class__.__name__}")
    return type


class finfo:
    """Machine limits of a floating-point dtype (the default dtype when none is given).

    Example:
        >>> import ember
        >>> ember.finfo(ember.float32).eps
        1.1920928955078125e-07
    """

    def __init__(self, type=None):
        type = _resolve(type, "finfo", D.get_default_dtype)
        if not type.is_floating_point:
            raise TypeError(f"finfo(): dtype must be a floating point type; got {type}")
        if type is D.bfloat16 or type in D._FLOAT8:
            import ml_dtypes
            info = ml_dtypes.finfo(type.np)
        else:
            info = np.finfo(type.np)
        self.dtype = type.name
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = 10.0 ** -int(info.precision)
        if type in D._FLOAT8:
            # torch's values: no decimal digit is exact (resolution 1), and float8_e5m2fnuz's
            # epsilon is given as 2**-3 (ml_dtypes: 2**-2, the spacing at 1.0)
            self.resolution = 1.0
            if type is D.float8_e5m2fnuz:
                self.eps = 0.125

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer (or bool) dtype."""

    def __init__(self, type):
        type = _resolve(type, "iinfo", D.get_default_dtype)
        if type.is_floating_point:
            raise TypeError(f"iinfo(): dtype must be an integer type; got {type}")
        info = np.iinfo(np.uint8 if type is D.bool_ else type.np)
        self.dtype = type.name
        self.bits = 8 if type is D.bool_ else int(info.bits)
        self.max = 1 if type is D.bool_ else int(info.max)
        self.min = 0 if type is D.bool_ else int(info.min)

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


class memory_format:
    """A tensor memory layout request. ember stores tensors as NumPy strides; a channels-last
    request is honoured by the operations that produce a layout (``contiguous``, ``to``)
    where they support it and accepted everywhere else."""

    def __init__(self, name: str):
        self._name = name

    def __repr__(self):
        return "ember." + self._name

    def __reduce__(self):
        return self._name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
_CHANNELS_LAST_RANK = {channels_last: 4, channels_last_3d: 5}


def check_memory_format(memory_format, ndim: int) -> None:
    """torch's rank check of a channels-last format (whose layout ember does not make:
    docs/DEVIATIONS.md, Tensor core)."""
    rank = _CHANNELS_LAST_RANK.get(memory_format)
    if rank is not None and ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {memory_format._name} format; "
                           f"got a tensor with {ndim} dims")


# NOTE [Layout of a preserve_format copy]
# torch's clone(), *_like factories and elementwise ops (flip too) with preserve_format keep the
# input's strides when its elements fill memory densely in some dim order (x.t(), a permuted
# tensor); otherwise they lay the result out densely in the order of the input's strides,
# found by an insertion sort from the innermost dim that leaves a dim of stride 0 (expanded)
# where it is. So x[..., ::2].clone() is row-major, x.t()[0:2].clone() column-major, and an
# expanded dim goes where the dim order puts it.
def preserved_order(a):
    """The dim order (outermost first) of a preserve_format copy of array ``a``, or None for
    row-major (NOTE [Layout of a preserve_format copy])."""
    if a.flags.c_contiguous:
        return None
    if a.flags.f_contiguous:
        return tuple(range(a.ndim - 1, -1, -1))
    shape, strides = a.shape, a.strides

    def order(d0, d1):  # > 0: d0 is outer of d1 in memory, so it moves out
        s0, s1 = abs(strides[d0]), abs(strides[d1])
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    perm = list(range(a.ndim - 1, -1, -1))  # innermost first
    for i in range(1, a.ndim):
        inner = i
        for outer in range(i - 1, -1, -1):
            c = order(perm[outer], perm[inner])
            if c > 0:
                perm[outer], perm[inner] = perm[inner], perm[outer]
                inner = outer
            elif c < 0:
                break
    dims = tuple(reversed(perm))
    return None if dims == tuple(range(a.ndim)) else dims


def preserved_empty(a, dtype=None):
    """An uninitialised array of ``a``'s shape laid out as a preserve_format copy of it."""
    dims = preserved_order(a)
    dtype = a.dtype if dtype is None else dtype
    if dims is None:
        return np.empty(a.shape, dtype)
    inverse = sorted(range(len(dims)), key=dims.__getitem__)
    return np.empty([a.shape[d] for d in dims], dtype).transpose(inverse)


_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, float("inf"), 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print (torch's options: precision, threshold, edgeitems, linewidth,
    profile "default"/"short"/"full", and sci_mode True/False/None for automatic)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: unknown profile {profile!r}; expected one of "
                             f"{sorted(_PROFILES)}")
        (_format.PRECISION, _format.THRESHOLD, _format.EDGEITEMS,
         _format.LINEWIDTH) = _PROFILES[profile]
    if precision is not None:
        _format.PRECISION = int(precision)
    if threshold is not None:
        _format.THRESHOLD = threshold
    if edgeitems is not None:
        _format.EDGEITEMS = int(edgeitems)
    if linewidth is not None:
        _format.LINEWIDTH = int(linewidth)
    _format.SCI_MODE = sci_mode


_default_device = "cpu"


def set_default_device(device) -> None:
    """Set the device factories use when none is given; only the CPU exists in ember."""
    from . import _backend
    name = "cpu" if device is None else str(device)
    if name.split(":")[0] not in ("cpu", "meta"):
        raise RuntimeError("set_default_device: ember runs on the CPU only (and the meta "
                           f"device); got device {name!r}")
    _backend.DEFAULT[0] = _backend.device(name.split(":")[0])


def get_default_device():
    """The default device (always the CPU in ember)."""
    from ._backend import DEFAULT
    return DEFAULT[0]
