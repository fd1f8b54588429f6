"""dtypes and PyTorch's type-promotion rules.

An ``ember.dtype`` names a NumPy dtype. bfloat16 comes from ``ml_dtypes`` when it is installed;
without it ``ember.bfloat16`` exists but creating a tensor of it raises a clear error.
"""
from __future__ import annotations

import math

import numpy as np

try:  # bfloat16 is not a NumPy dtype; ml_dtypes adds it
    import ml_dtypes as _ml_dtypes

    _BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes is a declared dependency
    _BF16 = None

# categories order promotion across kinds: bool < integer < floating < complex
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type (``ember.float32`` ...), comparable and hashable like torch's."""

    __slots__ = ("name", "np", "itemsize", "category", "is_floating_point", "is_signed")

    def __init__(self, name: str, np_dtype, itemsize: int, category: int, is_signed: bool):
        self.name = name
        self.np = np_dtype
        self.itemsize = itemsize
        self.category = category
        self.is_floating_point = category == _FLOAT
        self.is_signed = is_signed

    @property
    def is_complex(self) -> bool:
        return self.category == _COMPLEX

    def to_real(self) -> dtype:
        """The real dtype of a complex one's parts (complex64 -> float32); others unchanged."""
        return _REAL_OF.get(self, self)

    def to_complex(self) -> dtype:
        """The complex dtype with this float dtype's parts (float64 -> complex128)."""
        if self.is_complex:
            return self
        if self.category != _FLOAT:
            raise RuntimeError(f"to_complex: expected a floating point dtype; got {self}")
        return complex128 if self is float64 else complex64

    def __repr__(self) -> str:
        return "ember." + self.name

    def __reduce__(self):
        # dtypes pickle by name so that they stay singletons across processes
        return (_by_name, (self.name,))


bool_ = dtype("bool", np.dtype(np.bool_), 1, _BOOL, False)
uint8 = dtype("uint8", np.dtype(np.uint8), 1, _INT, False)
int8 = dtype("int8", np.dtype(np.int8), 1, _INT, True)
int16 = dtype("int16", np.dtype(np.int16), 2, _INT, True)
int32 = dtype("int32", np.dtype(np.int32), 4, _INT, True)
int64 = dtype("int64", np.dtype(np.int64), 8, _INT, True)
float16 = dtype("float16", np.dtype(np.float16), 2, _FLOAT, True)
bfloat16 = dtype("bfloat16", _BF16, 2, _FLOAT, True)
float32 = dtype("float32", np.dtype(np.float32), 4, _FLOAT, True)
float64 = dtype("float64", np.dtype(np.float64), 8, _FLOAT, True)

complex64 = dtype("complex64", np.dtype(np.complex64), 8, _COMPLEX, True)
complex128 = dtype("complex128", np.dtype(np.complex128), 16, _COMPLEX, True)

# ALL stays the real dtypes (what generic suites iterate); COMPLEX lists the complex ones
ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
FLOATING = (float16, bfloat16, float32, float64)
INTEGRAL = (uint8, int8, int16, int32, int64)
COMPLEX = (complex64, complex128)
_REAL_OF = {complex64: float32, complex128: float64}

_NAMES = {d.name: d for d in ALL + COMPLEX}
_NAMES.update({"bool": bool_, "half": float16, "float": float32, "double": float64,
               "short": int16, "int": int32, "long": int64, "cfloat": complex64,
               "cdouble": complex128})
_FROM_NP = {d.np: d for d in ALL + COMPLEX if d.np is not None}


def _by_name(name: str) -> dtype:
    return _NAMES[name]


def from_numpy_dtype(np_dtype) -> dtype:
    """The ember dtype for a NumPy dtype; TypeError for kinds ember does not support."""
    try:
        return _FROM_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types "
            "are: complex128, complex64, float64, float32, float16, bfloat16, int64, int32, "
            "int16, int8, uint8, and bool."
        ) from None


def to_dtype(d) -> dtype:
    """Accept an ember dtype, a NumPy dtype / type, a Python type or a name."""
    if isinstance(d, dtype):
        return d
    # Python's types name torch's double-width dtypes whatever the default dtype is:
    # zeros(2, dtype=float) is float64, as NumPy's dtype=float
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return complex128
    if isinstance(d, str) and d in _NAMES:
        return _NAMES[d]
    return from_numpy_dtype(d)


_default = [float32]


def get_default_dtype() -> dtype:
    """The dtype of floating tensors created from Python floats (float32 unless changed)."""
    return _default[0]


def get_default_complex_dtype() -> dtype:
    """The dtype of complex tensors created from Python complex numbers: the complex dtype
    matching the default float dtype (complex128 when it is float64, complex64 otherwise)."""
    return complex128 if _default[0] is float64 else complex64


def set_default_dtype(d) -> None:
    """Set the default floating dtype; like torch, only floating dtypes are allowed."""
    d = to_dtype(d)
    if not d.is_floating_point or d in (bfloat16,):
        if d not in (float16, float32, float64, bfloat16):
            raise TypeError(f"set_default_dtype: only floating-point types are supported as the "
                            f"default type; got {d}")
    _default[0] = d


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both a and b can be converted to (torch.promote_types)."""
    if a is b:
        return a
    if a.category == _COMPLEX or b.category == _COMPLEX:
        return _promote_complex(a, b)
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == _FLOAT:
        if {a, b} == {float16, bfloat16}:
            return float32  # neither holds the other's range and precision
        return a if a.itemsize > b.itemsize else b
    if a.category == _INT:
        if a.is_signed == b.is_signed:
            return a if a.itemsize > b.itemsize else b
        signed, unsigned = (a, b) if a.is_signed else (b, a)
        if signed.itemsize > unsigned.itemsize:
            return signed
        return {1: int16, 2: int32, 4: int64, 8: int64}[unsigned.itemsize]
    return a


def _promote_complex(a: dtype, b: dtype) -> dtype:
    # the result is complex with parts wide enough for both: complex64 + float64 -> complex128
    parts = promote_types(a.to_real(), b.to_real()) if b.category >= _FLOAT and \
        a.category >= _FLOAT else (a if a.is_complex else b).to_real()
    # ember has no complex32: float16 / bfloat16 parts widen to complex64 (see DEVIATIONS)
    return complex128 if parts is float64 else complex64


def can_cast(from_: dtype, to: dtype) -> bool:
    """torch.can_cast: casting may not lower the category (float -> int, int -> bool)."""
    return from_.category <= to.category


def _combine(higher, lower):
    # mirrors the category rule: a result from a higher-priority group wins unless the
    # lower-priority group brings a higher category (e.g. int tensor + float scalar)
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == _COMPLEX:
        return higher
    if lower.category == _COMPLEX:
        # a float group keeps its precision in complex form; an integer one takes lower's
        return higher.to_complex() if higher.category == _FLOAT else lower
    if higher.category == _FLOAT:
        return higher
    if higher is bool_ or lower.category == _FLOAT:
        return promote_types(higher, lower)
    return higher


def result_type_from(dim_dt, zero_dt, scalar_dt):
    """Combine per-group results: tensors with dims > 0-d tensors > Python scalars."""
    return _combine(dim_dt, _combine(zero_dt, scalar_dt))


def scalar_dtype(v) -> dtype:
    """The dtype a Python scalar participates with in promotion."""
    if isinstance(v, bool):
        return bool_
    if isinstance(v, (int, np.integer)):  # a NumPy integer scalar counts as a Python int
        return int64
    if isinstance(v, (complex, np.complexfloating)):
        return get_default_complex_dtype()
    return get_default_dtype()


# NOTE [Shell unsigned dtypes]: torch's uint16/uint32/uint64 are storage dtypes: tensors of them
# can be created, copied, viewed, compared and converted, but mixing them with another dtype in
# arithmetic is refused ("Promotion for uint16, uint32, uint64 types is not supported"). They
# stay out of ALL (the dtypes every op claims) and promote only with themselves.
uint16 = dtype("uint16", np.dtype(np.uint16), 2, _INT, False)
uint32 = dtype("uint32", np.dtype(np.uint32), 4, _INT, False)
uint64 = dtype("uint64", np.dtype(np.uint64), 8, _INT, False)
_SHELL_UNSIGNED = (uint16, uint32, uint64)
for _d in _SHELL_UNSIGNED:
    _NAMES[_d.name] = _d
    _FROM_NP[_d.np] = _d

# NOTE [Float8 dtypes]: torch's float8 dtypes are storage formats too: a tensor of one can be
# made, copied, viewed, compared and cast to and from other dtypes (how quantized caches and
# fp8 checkpoints store weights), and on CPU most arithmetic on it is refused. ember's are
# ml_dtypes' types of the same bit layouts, so casts round as torch's do, except for two
# rules of torch's own that `astype` applies first: float8_e4m3fn saturates (values past
# its largest finite 448, infinities included, become +-448; ml_dtypes makes them NaN) and
# float8_e8m0fnu (an exponent alone) takes magnitudes and maps zero to its smallest value. Like
# the shell unsigned dtypes they stay out of ALL and promote only with themselves.
_F8_NAMES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
             "float8_e8m0fnu")
_FLOAT8 = tuple(dtype(n, np.dtype(getattr(_ml_dtypes, n)) if _BF16 is not None else None, 1,
                      _FLOAT, n != "float8_e8m0fnu") for n in _F8_NAMES)
float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu = _FLOAT8
for _d in _FLOAT8:
    _NAMES[_d.name] = _d
    if _d.np is not None:
        _FROM_NP[_d.np] = _d


_E4M3FN, _E8M0 = float8_e4m3fn.np, float8_e8m0fnu.np


def astype(x: np.ndarray, np_dtype) -> np.ndarray:
    """`x.astype(np_dtype)`, with torch's rounding rules for casts to float8 (NOTE [Float8
    dtypes])."""
    if np_dtype == _E4M3FN:
        x = np.clip(x.astype(np.float32), -448.0, 448.0)
    elif np_dtype == _E8M0:
        x = np.maximum(np.abs(x.astype(np.float32)), np.float32(2.0 ** -127))
    return x.astype(np_dtype)


_promote_core = promote_types


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both type1 and type2 can be converted to (torch.promote_types)."""
    if type1 is not type2 and (type1 in _FLOAT8 or type2 in _FLOAT8):
        raise RuntimeError(f"Promotion for Float8 Types is not supported, attempted to "
                           f"promote {type1} and {type2}")
    if type1 is not type2 and (type1 in _SHELL_UNSIGNED or type2 in _SHELL_UNSIGNED):
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {type1} and {type2}")
    return _promote_core(type1, type2)


# NOTE [Numbers that do not fit the dtype]
# torch has two ways of taking a Python number beside a tensor. The arithmetic and comparison
# ops (add, mul, sub, div, eq...) treat it as a 0-d tensor of int64/float/complex and cast it
# as they compute, so `int8_t + 300` wraps like C. The ops that take it as an option of the
# tensor's own type (pow's exponent, add's alpha, clamp's bounds, fill_/masked_fill/index_fill/
# scatter values, where's scalar branch, addcmul's value, threshold/hardtanh) convert it with
# a range check and raise "value cannot be converted to type int8_t without overflow". The
# check (c10's `overflows`): an integer dtype takes integers in its range, and an unsigned one
# the negatives down to -max as well (they wrap as two's complement: uint8 - 1); a float never
# fits an integer dtype unless it is a finite value in range; a float dtype takes any integer
# or float up to its largest finite value, and inf/NaN; a complex number fits a real dtype only
# with a zero imaginary part. bool takes anything. The ops call `check_fits` on such options.
def fits(value, dt: dtype) -> bool:
    """Whether the Python number ``value`` converts to ``dt`` without overflow (torch's
    range check for numbers given as an op's option, NOTE [Numbers that do not fit the dtype])."""
    if dt.category == _BOOL or isinstance(value, (bool, np.bool_)):
        return True
    if isinstance(value, (complex, np.complexfloating)):
        if dt.category != _COMPLEX and value.imag != 0:
            return False
        return fits(float(value.real), dt) and fits(float(value.imag), dt)
    if dt.category == _INT:
        info = np.iinfo(dt.np)
        lo = -int(info.max) if info.min == 0 else int(info.min)
        if isinstance(value, (float, np.floating)):
            return bool(np.isfinite(value)) and lo <= value <= int(info.max)
        return lo <= value <= int(info.max)
    if isinstance(value, (float, np.floating)) and not np.isfinite(value):
        return True
    return abs(value) <= _FLOAT_MAX.get(dt.to_real().name, math.inf)


_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}


def check_fits(op: str, value, dt: dtype) -> None:
    """Raise torch's RuntimeError when the number ``value`` (an option of ``op`` taken in the
    tensor's dtype ``dt``) does not fit it (NOTE [Numbers that do not fit the dtype])."""
    if not fits(value, dt):
        raise RuntimeError(f"{op}: value {value!r} cannot be converted to type {dt} without "
                           "overflow")
