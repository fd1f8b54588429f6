"""Differential fuzzing against torch (issue 20): hypothesis draws an op from the op database,
its inputs (shapes: 0-d, empty, broadcasting, non-contiguous, large; dtypes; values including
0, -0, inf, nan and huge ones) and a calling form (function, method, in-place, out=), runs it on
ember and on torch, and checks that both raise an exception of the same type, or both return
values that agree (and, for float64, gradients that agree). A crash or a hang fails the run.

About a minute of CPU by default; ``EMBER_FUZZ_EXAMPLES=N`` runs N examples instead
(``EMBER_FUZZ_SEED`` picks another fixed seed). Divergences already understood and kept on
purpose are listed in KNOWN with their reason; anything else is a finding.
"""
from __future__ import annotations

import functools
import os
import warnings

import numpy as np
import pytest

import ember
from ember import _dtype as D
from ember._tensor import Tensor
from ember.testing import SampleInput, op_db
from ember.testing._generators import binary_samples, unary_samples

hypothesis = pytest.importorskip("hypothesis")
torch = pytest.importorskip("torch")
st = hypothesis.strategies

pytestmark = [pytest.mark.parity, pytest.mark.timeout(900)]

EXAMPLES = int(os.environ.get("EMBER_FUZZ_EXAMPLES", "1000"))
SEED = int(os.environ.get("EMBER_FUZZ_SEED", "20"))
DTYPES = {D.float32: torch.float32, D.float64: torch.float64, D.int64: torch.int64,
          D.bool_: torch.bool}

# (op, what) -> why the difference is deliberate or out of scope for this fuzzer
KNOWN: dict = {
    ("sort", "ember returns, torch raises TypeError"):
        "torch's overloads refuse a positional dim together with stable= (sort(x, 0, "
        "stable=True)); ember accepts the call, a superset kept on purpose",
    ("igamma", "ember returns, torch raises TypeError"):
        "torch's igamma/igammac take only Tensors; ember also accepts a Python number for "
        "either argument (promoted like every binary op), a superset kept on purpose",
    ("igammac", "ember returns, torch raises TypeError"):
        "as igamma: ember also accepts a Python number where torch requires a Tensor",
    ("addbmm", "ember raises RuntimeError, torch returns"):
        "torch's addbmm_ resizes a broadcastable self in place (shape (2,) becomes the (1, 2) "
        "result); ember's in-place ops never change self's shape and raise, as torch's other "
        "in-place ops do",
}


def _torch_fn(entry):
    obj = torch
    for part in (entry.spec.torch_name or entry.name).split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _family(entry):
    fn = getattr(entry.spec.samples, "func", None)
    if fn is unary_samples:
        return "unary"
    if fn is binary_samples:
        return "binary"
    return "samples"


ENTRIES = sorted((e for e in op_db() if e.spec is not None and e.spec.parity
                  and _torch_fn(e) is not None and any(d in DTYPES for d in e.dtypes)),
                 key=lambda e: e.name)


# ------------------------------------------------------------------------------- inputs
SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 1e-30]


@st.composite
def _shapes(draw, n):
    """n mutually broadcastable shapes: 0-d, empty and size-1 dimensions included; now and
    then one with 2^16 elements."""
    if draw(st.integers(0, 30)) == 0:
        base = [256, 256]
    else:
        base = draw(st.lists(st.integers(0, 5), min_size=0, max_size=4))
    shapes = []
    for _ in range(n):
        s = [1 if draw(st.integers(0, 3)) == 0 else d for d in base]
        drop = draw(st.integers(0, len(s)))  # broadcasting against fewer dimensions
        shapes.append(tuple(s[drop:] if draw(st.booleans()) else s))
    return shapes


def _values(draw, shape, dtype, domain):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lo, hi = domain[0], domain[1]
    if dtype is D.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype is D.int64:
        a = rng.integers(int(np.floor(lo)) - 3, int(np.ceil(hi)) + 4, size=shape)
        if len(domain) > 2 or lo > 0:  # divisors, logs: keep away from 0
            a[a == 0] = 1
        return np.asarray(a, np.int64)
    a = np.asarray(rng.uniform(lo, hi, size=shape))
    if len(domain) > 2:
        a *= rng.choice([-1.0, 1.0], size=shape)
    if draw(st.integers(0, 4)) == 0 and a.size:  # special values in about one case in five
        flat = a.reshape(-1)
        idx = rng.integers(0, flat.size, size=max(1, flat.size // 4))
        flat[idx] = rng.choice(SPECIAL, size=idx.size)
    return a.astype(dtype.np)


def _noncontig(a, draw):
    """The same values in a non-contiguous layout (a strided slice of a bigger array)."""
    if a.ndim == 0 or not draw(st.booleans()):
        return a
    big = np.empty(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
    view = big[..., ::2]
    view[...] = a
    return view


@st.composite
def _case(draw):
    entry = draw(st.sampled_from(ENTRIES))
    dtypes = [d for d in entry.dtypes if d in DTYPES]
    dtype = draw(st.sampled_from(dtypes))
    family = _family(entry)
    if family in ("unary", "binary"):
        kw = entry.spec.samples.keywords
        doms = [kw.get("domain", (-2.0, 2.0))]
        if family == "binary":
            doms.append(kw.get("other_domain", (0.5, 2.0, "signed")))
        shapes = draw(_shapes(len(doms)))
        arrays = [_noncontig(_values(draw, s, dtype, dom), draw)
                  for s, dom in zip(shapes, doms, strict=True)]
        extra = {k: v for k, v in kw.items() if k not in ("domain", "other_domain", "scalar")}
        sample = SampleInput(arrays[0], tuple(arrays[1:]), extra, "fuzz")
    else:
        try:
            samples = entry.spec.samples(np.random.default_rng(draw(st.integers(0, 99))), dtype)
        except Exception:  # the op has no samples at this dtype
            hypothesis.assume(False)
        hypothesis.assume(samples)
        s = draw(st.sampled_from(samples))
        sample = _map(s, lambda t: _noncontig(np.array(t._data, copy=True), draw))
    form = draw(st.sampled_from(["function", "method", "inplace", "out"]))
    return entry, dtype, sample, form


def _map(obj, f):
    if isinstance(obj, (Tensor, np.ndarray)):
        return f(obj)
    if isinstance(obj, SampleInput):
        return SampleInput(_map(obj.input, f), _map(obj.args, f), _map(obj.kwargs, f), obj.name)
    if isinstance(obj, tuple):
        return tuple(_map(o, f) for o in obj)
    if isinstance(obj, list):
        return [_map(o, f) for o in obj]
    if isinstance(obj, dict):
        return {k: _map(v, f) for k, v in obj.items()}
    return obj


# ------------------------------------------------------------------------------- running
def _tensors(lib, sample, grad):
    def conv(a):
        t = (ember.from_numpy(np.array(a, copy=True)) if lib is ember
             else torch.from_numpy(np.array(a, copy=True)))
        if a.strides != np.ascontiguousarray(a).strides and a.ndim:
            # keep the layout: the same strided view of a bigger tensor, in both libraries
            big = np.repeat(np.array(a), 2, axis=-1)
            t = (ember.from_numpy(big) if lib is ember else torch.from_numpy(big))[..., ::2]
        if grad and t.is_floating_point():
            t = t.detach().requires_grad_()
        return t
    return _map(sample, conv)


def _run(lib, entry, sample, form):
    fn = entry.fn if lib is ember else _torch_fn(entry)
    x, args, kwargs = sample.input, sample.args, dict(sample.kwargs)
    if form == "method":
        return getattr(x, entry.name.split(".")[-1])(*args, **kwargs)
    if form == "inplace":
        return getattr(x, entry.name.split(".")[-1] + "_")(*args, **kwargs)
    if form == "out":
        ref = fn(x, *args, **kwargs)
        if not isinstance(ref, (Tensor, torch.Tensor)):
            raise _NoForm()
        out = lib.empty(0, dtype=ref.dtype)
        res = fn(x, *args, **kwargs, out=out)
        assert res is out
        return out
    return fn(x, *args, **kwargs)


class _NoForm(Exception):
    """This op has no such calling form (in either library): not a comparison."""


def _outcome(lib, entry, sample, form, grad=False):
    ts = _tensors(lib, sample, grad)
    if form in ("method", "inplace") and not isinstance(ts.input, (Tensor, torch.Tensor)):
        raise _NoForm()
    if form in ("method", "inplace") and not hasattr(ts.input, entry.name.split(".")[-1]
                                                     + ("_" if form == "inplace" else "")):
        raise _NoForm()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ts, _run(lib, entry, ts, form), None
        except _NoForm:
            raise
        except Exception as e:  # compared by type with the other library
            return ts, None, e


def _arrays(x):
    if isinstance(x, (tuple, list)):
        return [a for v in x for a in _arrays(v)]
    if isinstance(x, Tensor):
        return [x.detach().numpy()]
    if isinstance(x, torch.Tensor):
        return [x.detach().float().numpy() if x.dtype == torch.bfloat16 else x.detach().numpy()]
    if isinstance(x, (bool, int, float, np.generic)):
        return [np.asarray(x)]
    return []


def _tol(dtype):
    return (1e-5, 1e-6) if dtype is D.float64 else (1e-3, 1e-4)


def _compare(entry, dtype, sample, form):
    """None when ember and torch agree, else a short description of the difference."""
    try:
        ets, eres, eerr = _outcome(ember, entry, sample, form)
        tts, tres, terr = _outcome(torch, entry, sample, form)
    except _NoForm:
        return None
    if form == "out" and isinstance(terr, TypeError) and eerr is None:
        return None  # torch has no out= for this op; ember accepting one is an extension
    if terr is not None or eerr is not None:
        if terr is None:
            return f"ember raises {type(eerr).__name__}, torch returns"
        if eerr is None:
            return f"ember returns, torch raises {type(terr).__name__}"
        if not isinstance(eerr, type(terr)):
            return f"exception type {type(eerr).__name__} vs torch {type(terr).__name__}"
        return None
    got, want = _arrays(eres), _arrays(tres)
    if form == "inplace":
        got, want = _arrays(ets.input), _arrays(tts.input)
    if len(got) != len(want):
        return f"{len(got)} outputs vs torch {len(want)}"
    rtol, atol = _tol(dtype)
    for g, w in zip(got, want, strict=True):
        if g.shape != w.shape:
            return f"shape {g.shape} vs torch {w.shape}"
        if g.dtype != w.dtype:
            return f"dtype {g.dtype} vs torch {w.dtype}"
        if g.dtype.kind in "fc":
            if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
                return "values differ"
        elif not np.array_equal(g, w):
            return "values differ"
    if dtype is D.float64 and form == "function" and entry.differentiable:
        return _compare_grads(entry, sample)
    return None


def _compare_grads(entry, sample):
    grads, errors = [], []
    for lib in (ember, torch):
        ts, res, err = _outcome(lib, entry, sample, "function", grad=True)
        leaves = [t for t in _leaves(ts) if t.requires_grad]
        outs = [o for o in (res if isinstance(res, (tuple, list)) else (res,))
                if isinstance(o, (Tensor, torch.Tensor)) and o.requires_grad]
        if err is not None or not leaves or not outs:
            return None
        loss = sum((o * o).sum() for o in outs if o.numel())
        if not isinstance(loss, (Tensor, torch.Tensor)) or not loss.requires_grad:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                g = lib.autograd.grad(loss, leaves, allow_unused=True)
            except Exception as e:
                errors.append(e)
                continue
        grads.append([None if x is None else x.detach().numpy() for x in g])
    if errors:
        if len(errors) == 1:
            return f"backward raises {type(errors[0]).__name__} in only one library"
        if type(errors[0]) is not type(errors[1]):
            return (f"backward exception {type(errors[0]).__name__} vs torch "
                    f"{type(errors[1]).__name__}")
        return None
    for g, w in zip(*grads, strict=True):
        if (g is None) != (w is None):
            if not np.all((w if g is None else g) == 0):
                return "gradient missing in one library"
        elif g is not None and not np.allclose(g, w, rtol=1e-5, atol=1e-6, equal_nan=True):
            return "gradients differ"
    return None


def _leaves(obj):
    found = []
    _map(obj, lambda t: found.append(t) or t)
    return found


# ------------------------------------------------------------------------------- the test
FINDINGS: list = []
COMPARED: list = []


# derandomize: the default run draws the same cases in every process (the seed decorator alone
# still let cases differ between pytest-xdist workers); EMBER_FUZZ_SEED explores other seeds
@hypothesis.settings(max_examples=EXAMPLES, deadline=None, database=None,
                     derandomize="EMBER_FUZZ_SEED" not in os.environ,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.seed(SEED)
@hypothesis.given(_case())
def _fuzz(case):
    entry, dtype, sample, form = case
    what = _compare(entry, dtype, sample, form)
    COMPARED.append(entry.name)
    if what is not None and (entry.name, what) not in KNOWN:
        FINDINGS.append((entry.name, dtype.name if hasattr(dtype, "name") else str(dtype), form,
                         what, sample))


def test_fuzz_ember_against_torch():
    FINDINGS.clear()
    _fuzz()
    summary = sorted({(n, d, f, w) for n, d, f, w, _ in FINDINGS})
    assert not summary, "ember and torch differ:\n" + "\n".join(map(str, summary))


def test_fuzz_draws_every_family():
    """The op pool the fuzzer draws from covers elementwise, reduction and indexing ops."""
    names = {e.name for e in ENTRIES}
    assert {"add", "exp", "sum", "gather", "matmul", "where"} <= names
    assert functools.reduce(lambda n, e: n + (_family(e) != "samples"), ENTRIES, 0) > 50


# ------------------------------------------------------------------------------- regressions
# one test per class of difference the fuzzer found


def test_lgamma_of_minus_infinity_is_plus_infinity():
    x = ember.tensor([-np.inf, -0.5, 0.5, np.inf])
    want = torch.lgamma(torch.tensor([-np.inf, -0.5, 0.5, np.inf])).numpy()
    np.testing.assert_allclose(ember.lgamma(x).numpy(), want, rtol=1e-6)
    assert ember.lgamma(ember.tensor(-np.inf)).item() == np.inf


@pytest.mark.parametrize("name", ["sign", "sgn"])
def test_sign_of_nan_is_zero_like_torch(name):
    a = np.array([-1.5, np.nan, 0.0, -0.0, 2.0, np.inf])
    want = getattr(torch, name)(torch.tensor(a)).numpy()
    np.testing.assert_array_equal(getattr(ember, name)(ember.tensor(a)).numpy(), want)
    x = ember.tensor(a.astype(np.float32))
    getattr(x, name + "_")()
    np.testing.assert_array_equal(x.numpy(), want.astype(np.float32))


def test_not_implemented_derivative_raises_not_implemented_error():
    for lib in (ember, torch):
        a = lib.tensor([1.5], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([0.5], dtype=lib.float64)
        with pytest.raises(NotImplementedError, match="derivative for 'igammac: input'"):
            lib.igammac(a, x).sum().backward()
