"""Every public function whose torch counterpart takes ``out=`` takes it too (issue 20: the fuzzer
found tensordot and linalg.det refusing it). torch's signature line is the first line of its
docstring; ember's signature is read with inspect."""
from __future__ import annotations

import inspect
import re
import warnings

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


# NOTE [Resizing out=] in ember/ops/registry.py: an out= of the wrong shape with elements is
# resized, with a UserWarning, as torch does (the reduction sweep found 35 ops refusing it)
_RESIZED = [
    ("sum", lambda L, out: L.sum(L.tensor([[1.0, 2.0], [3.0, 4.0]]), 1, out=out)),
    ("cumsum", lambda L, out: L.cumsum(L.tensor([[1.0, 2.0], [3.0, 4.0]]), 0, out=out)),
    ("maximum", lambda L, out: L.maximum(L.tensor([1.0, 5.0, 2.0]), L.tensor([3.0]), out=out)),
    ("sort", lambda L, out: L.sort(L.tensor([[3.0, 1.0, 2.0]]), out=(out, L.zeros(5).long()))),
    ("clamp", lambda L, out: L.clamp(L.tensor([-1.0, 0.5, 2.0]), 0, 1, out=out)),
    ("tensordot", lambda L, out: L.tensordot(L.ones(2, 3), L.ones(3, 4), 1, out=out)),
]


@pytest.mark.parametrize("name, call", _RESIZED, ids=[n for n, _ in _RESIZED])
def test_out_with_elements_of_another_shape_is_resized_with_a_warning(name, call):
    results = []
    for lib in (ember, torch):
        out = lib.full((7,), 9.0)
        with pytest.warns(UserWarning, match="resized"):
            got = call(lib, out)
        assert (got[0] if isinstance(got, tuple) else got) is out
        results.append(out)
    assert tuple(results[0].shape) == tuple(results[1].shape)
    np.testing.assert_allclose(results[0].numpy(), results[1].numpy())


def test_out_of_the_right_shape_is_written_without_a_warning():
    out = ember.full((2,), 9.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.sum(ember.tensor([[1.0, 2.0], [3.0, 4.0]]), 1, out=out)
    assert out.tolist() == [3.0, 7.0]


def test_out_of_a_wrong_dtype_is_refused_before_it_is_resized():
    out = ember.zeros(5, dtype=ember.int64)
    with pytest.raises(RuntimeError, match=r"maximum\(\): result type ember.float32 can't be "
                                           r"cast to the desired output type ember.int64"):
        ember.maximum(ember.tensor([1.0, 5.0]), ember.tensor([3.0, 2.0]), out=out)
    assert tuple(out.shape) == (5,)


# (torch has no bool cumsum/cumprod kernel, and its nansum out= none for int64/bool although its
# dtype= form has: those pairs are left out, ember computes them)
_OUT_DTYPES = [(fn, dt) for fn in ("sum", "prod", "nansum", "cumsum", "cumprod")
               for dt in ("int64", "float16", "bool")
               if not (dt == "bool" and fn.startswith("cum") or fn == "nansum" and dt != "float16")]


@pytest.mark.parametrize("fn, out_dtype", _OUT_DTYPES)
def test_sum_like_ops_compute_in_the_dtype_of_out(fn, out_dtype):
    # torch's sum/prod/nansum/cumsum/cumprod read out's dtype as dtype=: the float inputs are
    # converted before the sum (1.7 * 3 into int64 is 3, not 5)
    values = [[1.7, 1.7, 0.4], [2.5, -1.2, 3.0]]
    got = []
    for lib in (ember, torch):
        out = lib.empty(0, dtype=getattr(lib, out_dtype))
        getattr(lib, fn)(lib.tensor(values, dtype=lib.float64), 1, out=out)
        got.append(out.float().numpy())
    np.testing.assert_allclose(*got, rtol=1e-3)
