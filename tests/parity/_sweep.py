"""What the differential sweeps against torch share (test_functional_sweep.py,
test_tensor_basics_sweep.py): comparing raised exceptions and float64 gradients."""
from __future__ import annotations

import warnings

import numpy as np

# every dtype a sweep runs its cases over, by torch/ember attribute name
DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128")


def error_difference(ee, et, width=80):
    """A description of how the two libraries' exceptions (either may be None) differ, or None
    when both raised the same type (ember's may subclass torch's, e.g. NoCudaError)."""
    if et is None:
        return f"ember raises {type(ee).__name__} ({str(ee)[:width]}), torch returns"
    if ee is None:
        return f"ember returns, torch raises {type(et).__name__} ({str(et)[:width]})"
    # (torch's LinAlgError is the class torch._C._LinAlgError, ember's is LinAlgError)
    if type(et).__name__.lstrip("_") not in [c.__name__ for c in type(ee).__mro__]:
        return (f"ember raises {type(ee).__name__} ({str(ee)[:width]}), "
                f"torch raises {type(et).__name__} ({str(et)[:width]})")
    return None


def weighted_grads(L, outs):
    """Gradients of sum_i (outs[i] * w_i).sum() w.r.t. L.leaves (fixed cosine weights, so a
    wrong gradient cannot hide behind a plain sum); None when there is nothing to differentiate."""
    if not outs or not L.leaves:
        return None
    total = None
    for i, o in enumerate(outs):
        w = L.mod.tensor(np.cos(np.arange(o.numel(), dtype=np.float64) + i).reshape(
            tuple(o.shape))).to(o.dtype)
        term = (o * w).sum()
        total = term if total is None else total + term
    gs = L.mod.autograd.grad(total, L.leaves, allow_unused=True)
    return [None if g is None else _array(g) for g in gs]


def second_derivative(L, out):
    """For a case: the gradient of out's cosine-weighted sum w.r.t. L.leaves and the gradient
    of that gradient's squared norm (double backward), as tensors (None where unused), so
    the harness compares both and a backward that raises is compared by its type."""
    w = L.mod.tensor(np.cos(np.arange(out.numel(), dtype=np.float64)).reshape(tuple(out.shape)))
    grads = L.mod.autograd.grad((out * w.to(out.dtype)).sum(), L.leaves, create_graph=True,
                                allow_unused=True)
    used = [g for g in grads if g is not None and g.requires_grad]
    first = tuple(g if g is None else g.detach() for g in grads)
    if not used:
        return first, None
    total = sum(((g * g.conj()).real if g.is_complex() else g * g).sum() for g in used)
    return first, tuple(L.mod.autograd.grad(total, L.leaves, allow_unused=True))


def _array(g):
    # torch gives some structurally zero gradients (sgn of a real input) as a ZeroTensor,
    # which refuses .numpy()
    if getattr(g, "_is_zerotensor", lambda: False)():
        return np.zeros(tuple(g.shape))
    if g.is_sparse:  # (Embedding(sparse=True)'s weight gradient) compared dense
        g = g.to_dense()
    return g.detach().numpy()


def grad_difference(grads):
    """grads: a callable returning (ember's, torch's) weighted_grads; a description of how they
    differ, or None."""
    try:
        ge, gt = grads()
    except Exception as exc:
        return f"gradient raises {type(exc).__name__}: {str(exc)[:80]}"
    if (ge is None) != (gt is None):
        return "one library has no gradient"
    for a, b in zip(ge or [], gt or []):
        if (a is None) != (b is None):
            return "a gradient is None in one library only"
        if a is not None and not np.allclose(a, b, rtol=1e-6, atol=1e-8, equal_nan=True):
            return f"gradients differ (max {np.nanmax(np.abs(a - b))})"
    return None


def assert_verdict(found, key, label, *expected):
    """A sweep case's verdict: ``found`` (the divergence or None) must be None unless ``key`` is
    in one of the ``expected`` tables (KNOWN, PENDING), and then it must still diverge."""
    if any(key in table for table in expected):
        assert found is not None, f"{label} agrees with torch now: drop it from KNOWN"
        return
    assert found is None, f"{label}: {found}"


# NOTE [Sweep cases grouped per test]
# A sweep has thousands of cases, each a few torch and ember calls (~0.1 ms); one pytest test
# per case would spend ~1 ms of pytest's own work on each (collection, reporting). So a test
# runs a family of cases (the same op and form over the dtypes: the case name before its
# " / dtype") and reports every case that fails its verdict. KNOWN and PENDING stay per case.
def families(cases):
    """(group, what, fn) cases as {(group, family): [(what, fn), ...]}."""
    grouped: dict = {}
    for group, what, fn in cases:
        grouped.setdefault((group, what.split(" / ")[0]), []).append((what, fn))
    return grouped


def check_family(group, members, divergence, *expected):
    """Every case of one family against its verdict (`assert_verdict`); one failure lists all
    the family's failing cases."""
    failed = []
    for what, fn in members:
        try:
            assert_verdict(divergence(fn), (group, what), f"{group} ({what})", *expected)
        except AssertionError as exc:
            failed.append(str(exc).split("\n")[0])
    assert not failed, f"{len(failed)} case(s) fail:\n" + "\n".join(failed)


def raised(fn, *phrases):
    """What fn raises: its type's name and the phrases its message lacks ('returned' when it
    does not raise), so the two libraries agree only when ember keeps torch's phrases."""
    try:
        fn()
    except Exception as exc:
        text = str(exc)
        return type(exc).__name__, [p for p in phrases if p not in text]
    return "returned"


def warned(fn, *phrases):
    """fn's result with the categories of the warnings it raised and the phrases they lack."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn()
    text = " ".join(str(w.message) for w in seen)
    return out, sorted({w.category.__name__ for w in seen}), [p for p in phrases if p not in text]
