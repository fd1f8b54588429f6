"""repr() of tensors in PyTorch's format: ``tensor([1., 2.], requires_grad=True)``.

The layout follows torch's documented print options (precision 4, threshold 1000, edgeitems 3,
linewidth 80): every element is right-aligned to the widest one; floats print as integers
with a trailing dot when all finite values are whole numbers, in scientific notation when the
finite nonzero magnitudes span more than a factor of 1000, exceed 1e8 or go below 1e-4, and
with 4 decimals otherwise. Large tensors show their first and last 3 entries per dim around
``...``.

Remaining difference from torch: the ``grad_fn=<...>`` name is ember's node name, which can
differ from torch's (``BasicIndexBackward0`` where torch says ``SelectBackward0``).
"""
from __future__ import annotations

import math

import numpy as np

from . import _dtype as D

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80
SCI_MODE = None  # set_printoptions(sci_mode=): True/False forces it, None decides per tensor


class _Formatter:
    """Formats single elements of one tensor, all padded to a common width."""

    def __init__(self, shown: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode, self.sci_mode, self.width = True, False, 1
        if not floating:
            for v in shown.reshape(-1).tolist():
                self.width = max(self.width, len(str(v)))
            return
        vals = shown.reshape(-1).astype(np.float64)
        finite = vals[np.isfinite(vals) & (vals != 0)]
        if finite.size == 0:  # only zeros / nan / inf: integer style, no padding (as torch)
            return
        big, small = np.abs(finite).max(), np.abs(finite).min()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            self.sci_mode = big / small > 1000.0 or big > 1.0e8
            if not self.sci_mode:
                self.width = max(len(f"{v:.0f}") + 1 for v in finite.tolist())
        else:
            self.sci_mode = big / small > 1000.0 or big > 1.0e8 or small < 1.0e-4
            if not self.sci_mode:
                self.width = max(len(f"{v:.{PRECISION}f}") for v in finite.tolist())
        if SCI_MODE is not None and SCI_MODE != self.sci_mode:
            self.sci_mode = SCI_MODE
            if not SCI_MODE:
                self.int_mode = bool(np.all(finite == np.ceil(finite)))
                fmt = "{:.0f}." if self.int_mode else f"{{:.{PRECISION}f}}"
                self.width = max(len(fmt.format(v)) for v in finite.tolist())
        if self.sci_mode:
            self.width = max(len(f"{v:.{PRECISION}e}") for v in finite.tolist())

    def _text(self, v) -> str:
        if not self.floating:
            return str(v)
        if math.isnan(v) or math.isinf(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        if self.sci_mode:
            return f"{v:.{PRECISION}e}"
        if self.int_mode:
            return f"{v:.0f}."
        return f"{v:.{PRECISION}f}"

    def __call__(self, v) -> str:
        return self._text(v).rjust(self.width)


class _ComplexFormatter:
    """Complex elements as torch prints them: the real parts formatted (and padded) together,
    the imaginary parts formatted together, then joined as ``re+imj`` with the sign of im."""

    def __init__(self, shown: np.ndarray):
        self.re = _Formatter(shown.real, True)
        self.im = _Formatter(shown.imag, True)
        self.width = self.re.width + self.im.width + 1  # (the "j"; the sign is in im's width)

    def __call__(self, v) -> str:
        v = complex(v)
        im = self.im(v.imag).lstrip() + "j"
        sign = "" if im[0] in "+-" else "+"
        return self.re(v.real) + sign + im


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summarized print shows (first and last EDGEITEMS along every dim)."""
    if a.ndim == 0:
        return a.reshape(1)
    if a.shape[0] > 2 * EDGEITEMS:
        parts = [a[:EDGEITEMS], a[-EDGEITEMS:]]
    else:
        parts = [a]
    if a.ndim == 1:  # (with EDGEITEMS 0, a[-0:] is all of a: torch's formatter sees it too)
        return np.concatenate(parts)
    if EDGEITEMS == 0:
        return np.zeros(0, a.dtype)
    rows = [_summarized(r) for p in parts for r in p]
    return np.concatenate(rows) if rows else np.zeros(0, a.dtype)


def _vector(a, fmt, indent, summarize):
    items = a.tolist()
    if summarize and EDGEITEMS == 0:
        data = ["..."]
    elif summarize and len(items) > 2 * EDGEITEMS:
        data = [fmt(v) for v in items[:EDGEITEMS]] + [" ..."] + \
            [fmt(v) for v in items[-EDGEITEMS:]]
    else:
        data = [fmt(v) for v in items]
    per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _body(a, fmt, indent, summarize):
    if a.ndim == 0:
        return fmt(a.item())
    if a.ndim == 1:
        return _vector(a, fmt, indent, summarize)
    n = a.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        slices = [_body(a[i], fmt, indent + 1, summarize) for i in range(EDGEITEMS)] + ["..."] \
            + [_body(a[i], fmt, indent + 1, summarize) for i in range(n - EDGEITEMS, n)]
    else:
        slices = [_body(a[i], fmt, indent + 1, summarize) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def tensor_repr(t) -> str:
    a = t._data
    dt = t.dtype
    if t._meta:
        return _meta_repr(t, dt)
    prefix = "tensor("
    suffix = []
    # the size is named when the values cannot show it: empty (unless 1-D), or edgeitems=0
    if (a.size == 0 and a.ndim != 1) or (a.size and EDGEITEMS == 0):
        suffix.append(f"size={tuple(a.shape)}")
    # an empty tensor has no values that show its dtype: it is named unless the default one
    implied = (D.get_default_dtype(),) if a.size == 0 else implied_dtypes()
    if dt not in implied:
        suffix.append(f"dtype={dt!r}")
    body = tensor_body(a, dt, len(prefix))
    suffix += grad_suffixes(t)
    return _with_suffixes(prefix + body, suffix, len(prefix))


def implied_dtypes():
    """The dtypes a non-empty tensor's values show, so its repr does not name them."""
    return (D.get_default_dtype(), D.int64, D.bool_, D.get_default_complex_dtype())


def grad_suffixes(t) -> list:
    if t._grad_fn is not None:
        return [f"grad_fn=<{t._grad_fn.name()}>"]
    return ["requires_grad=True"] if t._requires_grad else []


def tensor_body(a: np.ndarray, dt, indent: int) -> str:
    """The bracketed values of array ``a`` (of dtype ``dt``), nested lines indented by
    ``indent``: a repr without its ``tensor(`` and suffixes (a sparse tensor's parts)."""
    if a.size == 0:
        return "[]"
    shown = a.astype(np.float32) if dt in (D.bfloat16, D.float16) else a
    summarize = a.size > THRESHOLD
    part = _summarized(shown) if summarize else shown
    fmt = _ComplexFormatter(part) if dt.is_complex else _Formatter(part, dt.is_floating_point)
    return _body(shown, fmt, indent, summarize)


def _with_suffixes(text: str, suffixes: list, indent: int, force_newline=False) -> str:
    """Append ``, dtype=...`` etc.; a suffix that would pass LINEWIDTH starts a new line (the
    first one always does with ``force_newline``, as a sparse tensor's size)."""
    parts = [text]
    line_len = len(text) - text.rfind("\n") + 1  # the last line, with its ", " and ")"
    for s in suffixes:
        if force_newline or line_len + len(s) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + s)
            line_len = indent + len(s)
            force_newline = False
        else:
            parts.append(", " + s)
            line_len += len(s) + 2
    return "".join(parts) + ")"


def _meta_repr(t, dt):
    """torch's form for a tensor without data: tensor(..., device='meta', size=(2, 3))."""
    parts = ["...", "device='meta'", f"size={tuple(t._data.shape)}"]
    if dt != D.get_default_dtype():  # torch names every other dtype here, int64 too
        parts.append(f"dtype={dt!r}")
    if t._grad_fn is not None:
        parts.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        parts.append("requires_grad=True")
    return f"tensor({', '.join(parts)})"
