"""repr() of tensors in PyTorch's format: ``tensor([1., 2.], requires_grad=True)``."""
from __future__ import annotations

import numpy as np

from . import _dtype as D


def _float_formatter(a):
    finite = a[np.isfinite(a)] if a.size else a
    if finite.size == 0:
        return lambda v: _special(v) or f"{v:.4f}"
    absf = np.abs(finite)
    nonzero = absf[absf > 0]
    if np.all(finite == np.round(finite)) and (absf.max() < 1e8):
        return lambda v: _special(v) or f"{v:.0f}."
    if nonzero.size and (nonzero.max() / max(nonzero.min(), 1e-300) > 1000 or
                         nonzero.max() > 1e8 or nonzero.min() < 1e-4):
        return lambda v: _special(v) or f"{v:.4e}"
    return lambda v: _special(v) or f"{v:.4f}"


def _special(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


def tensor_repr(t) -> str:
    a = t._data
    dt = t.dtype
    if dt is D.bfloat16 or dt is D.float16:
        shown = a.astype(np.float32)
    else:
        shown = a
    suffix = []
    if a.size == 0 and a.shape != (0,):
        suffix.append(f"size={tuple(a.shape)}")
    if dt not in (D.get_default_dtype(), D.int64, D.bool_):
        suffix.append(f"dtype={dt!r}")
    if a.size == 0:
        body = "[]"
    elif dt.is_floating_point:
        fmt = _float_formatter(shown.astype(np.float64))
        body = np.array2string(shown, separator=", ", prefix="tensor(", threshold=1000,
                               edgeitems=3, formatter={"float_kind": fmt}, max_line_width=80)
    elif dt is D.bool_:
        body = np.array2string(a, separator=", ", prefix="tensor(", threshold=1000,
                               formatter={"bool": lambda v: "True" if v else "False"})
    else:
        body = np.array2string(a, separator=", ", prefix="tensor(", threshold=1000,
                               max_line_width=80)
    if t._grad_fn is not None:
        suffix.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        suffix.append("requires_grad=True")
    if suffix:
        return f"tensor({body}, {', '.join(suffix)})"
    return f"tensor({body})"
