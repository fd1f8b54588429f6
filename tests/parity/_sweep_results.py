"""The harness of the sweeps that compare whole results with torch (test_reduction_sweep.py,
test_indexing_sweep.py): a case is a function of a Lib (one library's module and tensor
makers); `divergence` runs it on both libraries and describes the first difference in the
raised exception type, the result's type, dtype, shape, values (named-tuple results field by
field) or the float64 leaves' gradients."""
from __future__ import annotations

import numpy as np
import pytest
from _sweep import error_difference, grad_difference, weighted_grads

import ember

torch = pytest.importorskip("torch")  # the importing sweep is skipped without it


class Lib:
    """What a case sees of one library: its module and tensor makers."""

    def __init__(self, mod):
        self.mod = mod
        self.leaves = []

    def T(self, a, dtype=None):
        t = self.mod.tensor(np.asarray(a))
        return t if dtype is None else t.to(getattr(self.mod, dtype))

    def G(self, a):
        t = self.mod.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)
        self.leaves.append(t)
        return t

    def dt(self, name):
        return getattr(self.mod, name)


def _run(mod, fn):
    L = Lib(mod)
    try:
        with np.errstate(all="ignore"):
            out = fn(L)
    except Exception as exc:
        return L, None, exc
    return L, out, None


def _is_tensor(x):
    return isinstance(x, (ember.Tensor, torch.Tensor))


def _name(dtype):
    return str(dtype).split(".")[-1]


def _fields(x):
    """A named-tuple result's field names (torch's structseq or ember's namedtuple), or None."""
    names = getattr(x, "_fields", None) or getattr(type(x), "_fields", None)
    if names is None and hasattr(type(x), "n_fields"):  # a torch structseq knows its names
        names = getattr(type(x), "__match_args__", None)
    if names is None and hasattr(type(x), "n_fields"):
        names = [n for n in ("values", "indices", "min", "max", "mean", "output", "inverse_indices",
                             "counts") if hasattr(x, n)]
    return tuple(names) if names else None


def _summary(x):
    """A comparable description of one result (tensors become their metadata + values)."""
    if _is_tensor(x):
        t = x.detach()
        if _name(t.dtype) in ("bfloat16", "float16"):
            t = t.float()
        elif _name(t.dtype) == "complex32":  # (NumPy has no complex32; the dtype still differs)
            t = t.to(torch.complex64)
        if t.is_complex():  # torch's lazy conjugate/negative views refuse .numpy()
            t = t.resolve_conj().resolve_neg()
        return ("tensor", _name(x.dtype), tuple(x.shape), x.requires_grad,
                (np.asarray(t.numpy()), _name(x.dtype)))
    if isinstance(x, dict):  # (torch.func's pytree results) compared key by key, in order
        return ("named dict", [(str(k), _summary(v)) for k, v in x.items()])
    names = _fields(x) if isinstance(x, tuple) else None
    if names:
        return ("named " + type(x).__name__, [(n, _summary(getattr(x, n))) for n in names])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_summary(v) for v in x])
    if isinstance(x, (ember.dtype, torch.dtype)):
        return ("dtype", _name(x))
    if isinstance(x, str):
        return ("str", x.replace("ember.", "torch."))
    if isinstance(x, (bool, int, float, complex)) or x is None:
        return (type(x).__name__, x)
    return (type(x).__name__, "?")


_TOL = {"float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (1e-5, 1e-6),
        "complex64": (1e-5, 1e-6)}  # (float32 parts)


def _same(a, b):
    if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], np.ndarray):
        (a, dt), (b, _) = a, b
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc":
            rtol, atol = _TOL.get(dt, (1e-7, 1e-9))
            return np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        return np.array_equal(a, b)
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b) or abs(a - b) <= 1e-6 * abs(b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:
        return False


_FIELDS = ("kind", "dtype", "shape", "requires_grad", "values")


def _first_difference(a, b):
    if a[0] == b[0] == "tensor":
        for field, x, y in zip(_FIELDS, a, b):
            if not _same(x, y):
                return f"{field}: ember {str(x)[:150]}, torch {str(y)[:150]}"
        return None
    if a[0] == b[0] and (a[0] in ("list", "tuple") or a[0].startswith("named ")):
        if len(a[1]) != len(b[1]):
            return f"length: ember {str(a[1])[:100]}, torch {str(b[1])[:100]}"
        for i, (x, y) in enumerate(zip(a[1], b[1])):
            if a[0].startswith("named "):
                if x[0] != y[0]:
                    return f"field {i}: ember {x[0]}, torch {y[0]}"
                x, y = x[1], y[1]
            sub = _first_difference(x, y)
            if sub:
                return f"[{i}] {sub}"
        return None
    if _same(a, b):
        return None
    return f"ember {str(a)[:150]!s}, torch {str(b)[:150]!s}"


def _outputs(x):
    if _is_tensor(x):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for v in x for t in _outputs(v)]
    return []


def _grads(L, out):
    return weighted_grads(L, [o for o in _outputs(out) if o.requires_grad and
                              o.dtype == L.mod.float64])


def divergence(fn):
    """None when ember and torch agree on fn, else a short description of the difference."""
    Le, oe, ee = _run(ember, fn)
    Lt, ot, et = _run(torch, fn)
    if et is not None or ee is not None:
        return error_difference(ee, et, width=100)
    found = _first_difference(_summary(oe), _summary(ot))
    if found:
        return found
    return grad_difference(lambda: (_grads(Le, oe), _grads(Lt, ot)))
