"""``assert_close`` and ``make_tensor``: the two helpers users need to test their own ops.

Both follow ``torch.testing``: default tolerances depend on the dtypes compared, and
``make_tensor`` draws values from the same default ranges. The library never imports torch;
torch tensors given to ``assert_close`` are recognised by duck typing (``.detach().numpy()``).
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Mapping

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make

# (rtol, atol) per dtype, torch.testing's defaults; exact comparison for integers and bool
_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def default_tolerances(*dtypes) -> tuple[float, float]:
    """The (rtol, atol) assert_close uses for these dtypes: the loosest among them."""
    rtol = atol = 0.0
    for d in dtypes:
        r, a = _TOLERANCES.get(_dtype_name(d), (0.0, 0.0))
        rtol, atol = max(rtol, r), max(atol, a)
    return rtol, atol


def _dtype_name(d) -> str:
    if isinstance(d, D.dtype):
        return d.name
    if isinstance(d, str):
        return d.rsplit(".", 1)[-1]
    if D._BF16 is not None and np.dtype(d) == D._BF16:
        return "bfloat16"
    return np.dtype(d).name


def _to_numpy(x):
    """(array, dtype name) for an ember/torch tensor, an ndarray or a Python number."""
    if isinstance(x, Tensor):
        return x._data, x.dtype.name
    if isinstance(x, np.ndarray):
        return x, _dtype_name(x.dtype)
    if isinstance(x, np.generic):
        return np.asarray(x), _dtype_name(x.dtype)
    if hasattr(x, "detach") and hasattr(x, "numpy"):  # a torch tensor, without importing torch
        t = x.detach().cpu()
        name = str(t.dtype).rsplit(".", 1)[-1]
        if name == "bfloat16":
            t = t.float()
        return t.numpy(force=True), name  # force: also lazy zero / conjugated tensors
    if isinstance(x, bool):
        return np.asarray(x), "bool"
    if isinstance(x, int):
        return np.asarray(x, np.int64), "int64"
    if isinstance(x, float):
        return np.asarray(x, np.float64), "float64"
    raise TypeError(f"assert_close: cannot compare objects of type {type(x).__name__}; expected "
                    "tensors, arrays, numbers, or (nested) sequences of them")


def _is_sequence(x):
    return isinstance(x, (list, tuple))


def assert_close(actual, expected, rtol=None, atol=None, *, equal_nan=False, check_dtype=True,
                 msg=None):
    """Raise AssertionError unless ``actual`` and ``expected`` are close elementwise.

    Args:
        actual, expected: ember or torch tensors, NumPy arrays, Python numbers, or (nested)
            tuples/lists of them, compared item by item.
        rtol, atol: tolerances, ``|actual - expected| <= atol + rtol * |expected|``. Give both
            or neither; omitted, they default per dtype like torch.testing (float16 1e-3/1e-5,
            bfloat16 1.6e-2/1e-5, float32 1.3e-6/1e-5, float64 1e-7/1e-7, exact otherwise),
            taking the looser of the two operands' dtypes.
        equal_nan: treat NaNs in the same positions as equal.
        check_dtype: also require the same dtype (by name: ``float32`` == torch.float32).
        msg: prefix for the error message.

    Example:
        >>> import ember
        >>> from ember.testing import assert_close
        >>> assert_close(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0 + 1e-7]))
    """
    if (rtol is None) != (atol is None):
        raise ValueError("assert_close: both 'rtol' and 'atol' must be either specified or "
                         f"omitted; got rtol={rtol} and atol={atol}")
    _compare(actual, expected, rtol, atol, equal_nan, check_dtype, msg, path="")


# assert_allclose's own (older, looser) defaults; other dtypes compare exactly
_ALLCLOSE_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The older form of :func:`assert_close`, deprecated (FutureWarning) but still shipped by
    torch.testing, which tutorials call: Python numbers and lists become tensors (``expected``
    in ``actual``'s dtype), dtypes need not match, NaNs compare equal by default, and the
    default tolerances are looser (float16 1e-3/1e-3, float32 1e-4/1e-5, float64 1e-5/1e-8,
    exact otherwise, the looser of the two dtypes)."""
    warnings.warn("ember.testing.assert_allclose() is deprecated and will be removed; use "
                  "ember.testing.assert_close() instead.", FutureWarning, stacklevel=2)
    import ember
    if not isinstance(actual, Tensor):
        actual = ember.tensor(actual)
    if not isinstance(expected, Tensor):
        expected = ember.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol = atol = 0.0
        for d in (actual.dtype, expected.dtype):
            r, a = _ALLCLOSE_TOLERANCES.get(d.name, (0.0, 0.0))
            rtol, atol = max(rtol, r), max(atol, a)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_dtype=False, msg=msg or None)


def _compare(actual, expected, rtol, atol, equal_nan, check_dtype, msg, path):
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):  # e.g. two state_dicts
        if set(actual) != set(expected):
            _fail(msg, path, "The keys of the mappings do not match:\n"
                             f"Missing keys in the actual mapping: "
                             f"{sorted(map(str, set(expected) - set(actual)))}\n"
                             f"Additional keys in the actual mapping: "
                             f"{sorted(map(str, set(actual) - set(expected)))}")
        for key in actual:
            _compare(actual[key], expected[key], rtol, atol, equal_nan, check_dtype, msg,
                     f"{path}[{key!r}]")
        return
    if _is_sequence(actual) or _is_sequence(expected):
        if not (_is_sequence(actual) and _is_sequence(expected)):
            _fail(msg, path, f"one input is a sequence and the other is not: "
                             f"{type(actual).__name__} vs {type(expected).__name__}")
        if len(actual) != len(expected):
            _fail(msg, path, f"sequence lengths differ: {len(actual)} vs {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, rtol, atol, equal_nan, check_dtype, msg, f"{path}[{i}]")
        return
    a, adt = _to_numpy(actual)
    e, edt = _to_numpy(expected)
    if a.shape != e.shape:
        _fail(msg, path, f"shapes differ: {list(a.shape)} vs {list(e.shape)}")
    if check_dtype and adt != edt:
        _fail(msg, path, f"dtypes differ: {adt} vs {edt}")
    if rtol is None:
        rtol, atol = default_tolerances(adt, edt)
    _compare_values(a, e, rtol, atol, equal_nan, msg, path)


def _compare_values(a, e, rtol, atol, equal_nan, msg, path):
    if a.dtype.kind == "b" and e.dtype.kind == "b":
        bad = a != e
    else:
        # complex values compare by the modulus of the difference, as torch.testing does
        wide = np.complex128 if "c" in (a.dtype.kind, e.dtype.kind) else np.float64
        af, ef = a.astype(wide), e.astype(wide)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(af - ef)
            bad = ~(diff <= atol + rtol * np.abs(ef))
            same_inf = np.isinf(af) & (af == ef)
            bad &= ~same_inf
            if equal_nan:
                bad &= ~(np.isnan(af) & np.isnan(ef))
    if not bad.any():
        return
    n_bad, n = int(bad.sum()), bad.size
    where = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), bad.shape))
    text = (f"Tensor-likes are not close!\n\nMismatched elements: {n_bad} / {n} "
            f"({100.0 * n_bad / n:.1f}%)\n")
    if a.dtype.kind != "b" or e.dtype.kind != "b":
        with np.errstate(invalid="ignore", divide="ignore"):
            diff = np.abs(af - ef)
            rel = diff / np.abs(ef)
        text += (f"Greatest absolute difference: {_greatest(diff[bad]):.6g} "
                 f"(up to {atol} allowed)\nGreatest relative difference: "
                 f"{_greatest(rel[bad]):.6g} (up to {rtol} allowed)\n")
    text += f"First mismatch at index {where}: actual {a[where]!r}, expected {e[where]!r}"
    _fail(msg, path, text)


def _greatest(x):
    """The largest value, NaN (a NaN mismatch) counting as the largest."""
    return float(np.where(np.isnan(x), np.inf, x).max()) if x.size else 0.0


def _fail(msg, path, text):
    where = f"at item {path}: " if path else ""
    raise AssertionError((f"{msg}\n" if msg else "") + where + text)


# ---------------------------------------------------------------------------------------------
# make_tensor

_DEFAULT_RANGES = {"float": (-9.0, 9.0), "int": (-9, 10), "uint8": (0, 10)}


def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, seed=None):
    """A tensor of random values for tests, like ``torch.testing.make_tensor``.

    Floats are uniform in [low, high) (default [-9, 9)), integers uniform in [low, high)
    (default [-9, 10), [0, 10) for uint8), bool a fair coin. ``seed`` (an int) makes the values
    independent of ember's global generator; without it they come from the default generator,
    so ``ember.manual_seed`` controls them. ``noncontiguous`` returns a strided view (every other
    element of a buffer twice as long in the last dim) holding the same values.

    Example:
        >>> import ember
        >>> from ember.testing import make_tensor
        >>> make_tensor(2, 3, dtype=ember.float64, low=0, high=1, seed=0).shape
        ember.Size([2, 3])
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    dt = D.to_dtype(dtype)
    if device is not None:
        from .._backend import check_device
        check_device(device)
    if requires_grad and not dt.is_floating_point:
        raise ValueError(f"make_tensor: requires_grad=True is not supported for dtype {dt}; "
                         "only floating dtypes can require gradients")
    if seed is None:
        from ..ops.random import default_generator
        g = default_generator._np
    else:
        g = np.random.default_rng(seed)
    arr = _draw(g, shape, dt, low, high)
    if exclude_zero:
        arr = _replace_zeros(arr, dt, low, high)
    if noncontiguous and arr.size > 1:
        buf = np.zeros(shape[:-1] + (2 * shape[-1],), arr.dtype)
        buf[..., ::2] = arr
        arr = buf[..., ::2]
    t = _make(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _draw(g, shape, dt, low, high):
    if dt is D.bool_:
        return g.random(shape) < 0.5
    if dt.is_floating_point:
        lo, hi = _DEFAULT_RANGES["float"]
        lo = lo if low is None else float(low)
        hi = hi if high is None else float(high)
        if not lo <= hi or not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"make_tensor: expected finite low <= high, got low={low}, "
                             f"high={high}")
        return (lo + (hi - lo) * g.random(shape)).astype(dt.np)
    info = np.iinfo(dt.np)
    lo, hi = _DEFAULT_RANGES["uint8" if dt is D.uint8 else "int"]
    lo = max(lo if low is None else math.ceil(low), int(info.min))
    hi = min(hi if high is None else math.ceil(high), int(info.max) + 1)
    if lo >= hi:
        raise ValueError(f"make_tensor: empty integer range [{low}, {high}) for dtype {dt}")
    return g.integers(lo, hi, size=shape).astype(dt.np)


def _tiny(dt):
    if dt is D.bfloat16:
        import ml_dtypes
        return float(ml_dtypes.finfo(dt.np).tiny)
    return float(np.finfo(dt.np).tiny)


def _replace_zeros(arr, dt, low, high):
    if dt is D.bool_:
        return np.ones_like(arr)
    # torch's rule: zeros become the smallest positive representable value in range (1 for
    # integers, tiny for floats), or the upper bound when that is not in range
    eps = 1 if not dt.is_floating_point else _tiny(dt)
    repl = eps if high is None or eps < high else high
    out = arr.copy()
    out[out == 0] = repl
    return out
