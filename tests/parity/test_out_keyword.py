"""Every public function whose torch counterpart takes ``out=`` takes it too (issue 20: the fuzzer
found tensordot and linalg.det refusing it). torch's signature line is the first line of its
docstring; ember's signature is read with inspect."""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

# name -> why ember does not take out= yet; the test fails once the gap is closed, so that the
# entry is deleted
GAPS = {
}

_SIGNATURE_LINE = re.compile(r"^\s*[\w.]+\((.*)\)")


def _torch_takes_out(fn):
    try:  # a Python function (tensordot, functional wrappers): its real signature
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        pass
    doc = (getattr(fn, "__doc__", None) or "").strip().splitlines()
    head = doc[0] if doc else ""
    m = _SIGNATURE_LINE.match(head)
    return bool(m) and re.search(r"\bout=None\b", m.group(1)) is not None


def _ember_takes_out(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True  # a builtin or C callable: not ours to judge here
    return any(p.name == "out" for p in params)


def _pairs():
    for e_ns, t_ns, prefix in ((ember, torch, ""), (ember.linalg, torch.linalg, "linalg."),
                               (ember.special, torch.special, "special.")):
        for name in sorted(dir(t_ns)):
            t_fn, e_fn = getattr(t_ns, name), getattr(e_ns, name, None)
            if name.startswith("_") or isinstance(t_fn, type) or not callable(e_fn):
                continue
            if _torch_takes_out(t_fn):
                yield prefix + name, e_fn


def test_out_keyword_wherever_torch_has_it():
    missing = sorted(n for n, fn in _pairs() if not _ember_takes_out(fn) and n not in GAPS)
    assert not missing, f"these take out= in torch but not in ember: {missing}"


def test_out_gaps_are_still_gaps():
    fixed = sorted(n for n, fn in _pairs() if n in GAPS and _ember_takes_out(fn))
    assert not fixed, f"delete these from GAPS, they take out= now: {fixed}"


def test_the_scan_sees_torch_out_signatures():
    # guards the docstring parsing itself: if torch's docstring form changes, the scan must not
    # silently find nothing
    names = {n for n, _ in _pairs()}
    assert {"add", "tensordot", "logaddexp", "linalg.det", "special.ndtr"} <= names


@pytest.mark.parametrize("name, call", [
    ("hstack", lambda L, out: L.hstack([L.ones(2), L.zeros(3)], out=out)),
    ("logaddexp", lambda L, out: L.logaddexp(L.tensor([0.5, 2.0]), L.tensor([1.0, -1.0]),
                                             out=out)),
    ("inner", lambda L, out: L.inner(L.tensor([[1.0, 2.0]]), L.tensor([[3.0, 4.0]]), out=out)),
    ("special.ndtr", lambda L, out: L.special.ndtr(L.tensor([-1.0, 0.0, 2.0]), out=out)),
    ("special.xlog1py", lambda L, out: L.special.xlog1py(L.tensor([0.0, 2.0]), L.tensor([0.5, 1.0]),
                                                         out=out)),
    ("special.zeta", lambda L, out: L.special.zeta(L.tensor([2.0, 3.0]), L.tensor([1.0, 2.0]),
                                                   out=out)),
])
def test_out_values_match_torch(name, call):
    out = ember.empty(0)
    got = call(ember, out)
    assert got is out
    want = call(torch, torch.empty(0))
    assert tuple(out.shape) == tuple(want.shape)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-6)


def test_where_out_resizes_an_empty_out_and_requires_the_result_dtype():
    # a fuzz finding: ember refused an empty bool out= that torch resizes
    cond = [True, False, True]
    for lib in (ember, torch):
        out = lib.empty(0, dtype=lib.bool)
        got = lib.where(lib.tensor(cond), lib.tensor([True] * 3), lib.tensor([False] * 3), out=out)
        assert got is out and out.tolist() == cond
    with pytest.raises(RuntimeError, match=r"where\(\): expected out= to have dtype ember.bool"):
        ember.where(ember.tensor(cond), ember.tensor([True] * 3), ember.tensor([False] * 3),
                    out=ember.empty(3))
    with pytest.raises(RuntimeError):
        torch.where(torch.tensor(cond), torch.tensor([True] * 3), torch.tensor([False] * 3),
                    out=torch.empty(3))
