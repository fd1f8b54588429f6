"""Keyword forms of registered ops (issue 16): every op of the op table whose public function
has named parameters (NOTE [Registered signatures] in ember/ops/registry.py) gives the same
result called with its arguments by keyword as positionally, as function and as method; a
representative set agrees with torch called the same way."""
from __future__ import annotations

import inspect
import zlib

import numpy as np
import pytest

import ember
from ember import _dtype as D
from ember._tensor import Tensor
from ember.testing._samples import op_db

_P = inspect.Parameter
DB = {e.name: e for e in op_db()}


def _named_params(fn):
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if not params or params[0].kind is not _P.POSITIONAL_OR_KEYWORD or any(
            p.kind is _P.VAR_POSITIONAL for p in params):
        return None
    return params


NAMED = sorted(n for n, e in DB.items() if _named_params(e.fn) is not None)


def _as_arrays(x):
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, (tuple, list)):
        return [_as_arrays(v) for v in x]
    return x


def _assert_same(a, b):
    a, b = _as_arrays(a), _as_arrays(b)
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y)
        return
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b or (a != a and b != b)


def _keyword_call(params, sample):
    """(positional args, keyword args) with every argument a named parameter can take given
    by keyword; None when the sample's arguments do not map onto the parameters."""
    positional = [sample.input, *sample.args]
    slots = [p for p in params if p.kind is _P.POSITIONAL_OR_KEYWORD]
    if len(positional) > len(slots):
        return None
    kwargs = {p.name: v for p, v in zip(slots, positional, strict=False)}
    if set(kwargs) & set(sample.kwargs):
        return None
    kwargs.update(sample.kwargs)
    return kwargs


def _samples(name):
    entry = DB[name]
    dt = D.float32 if D.float32 in entry.dtypes else entry.dtypes[0]
    seed = zlib.crc32(f"{name}-kw".encode())
    return entry.samples(np.random.default_rng(seed), dt)[:3]


# methods whose parameter names differ from the function's in torch (Tensor.split is torch's
# Python method split(split_size, dim); torch.split names it split_size_or_sections)
_METHOD_NAMES = {"split": {"split_size_or_sections": "split_size"}}


@pytest.mark.parametrize("name", NAMED)
def test_keyword_form_matches_positional(name):
    entry = DB[name]
    params = _named_params(entry.fn)
    checked = 0
    for s in _samples(name):
        kwargs = _keyword_call(params, s)
        if kwargs is None:
            continue
        ember.manual_seed(0)
        want = entry.fn(s.input, *s.args, **s.kwargs)
        ember.manual_seed(0)
        got = entry.fn(**kwargs)
        _assert_same(got, want)
        ember.manual_seed(0)
        first = params[0].name
        got = entry.fn(s.input, **{k: v for k, v in kwargs.items() if k != first})
        _assert_same(got, want)
        if entry.method and isinstance(s.input, Tensor):
            ember.manual_seed(0)
            meth = getattr(s.input, name.rsplit(".", 1)[-1])
            renamed = _METHOD_NAMES.get(name, {})
            got = meth(**{renamed.get(k, k): v for k, v in kwargs.items() if k != first})
            _assert_same(got, want)
        checked += 1
    assert checked, f"{name}: no sample maps onto its parameters {params}"


def test_most_registered_ops_have_named_parameters():
    # the generic (*args, out=None, **kwargs) wrapper is left only where the implementation
    # itself takes var-args
    assert len(NAMED) > 0.6 * len(DB), (len(NAMED), len(DB))


def test_keyword_binding_errors_name_the_op():
    t = ember.ones(2)
    with pytest.raises(TypeError, match="abs"):
        ember.abs(t, bogus=1)
    with pytest.raises(TypeError, match="add"):
        ember.add(t)
    with pytest.raises(TypeError, match=r"sum\(\) got an unexpected keyword argument 'axes'"):
        ember.sum(t, axes=0)
    with pytest.raises(TypeError, match="multiple values"):
        ember.add(t, t, input=t)


def test_numpy_aliases_and_out_still_work():
    x = ember.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ember.sum(x, axis=1)._data, [3.0, 12.0])
    np.testing.assert_array_equal(x.sum(axis=0, keepdims=True)._data, [[3.0, 5.0, 7.0]])
    np.testing.assert_array_equal(ember.sum(input=x, dim=0)._data, [3.0, 5.0, 7.0])
    out = ember.empty(2, 3)
    r = ember.add(input=x, other=x, alpha=2, out=out)
    assert r is out
    np.testing.assert_array_equal(out._data, 3 * x._data)
    y = x.clone()
    y.add_(other=x, alpha=-1)
    np.testing.assert_array_equal(y._data, np.zeros((2, 3)))


# ----------------------------------------------------------------------------- torch parity
_KW_CASES = [
    ("abs", {"input": "a"}),
    ("neg", {"input": "a"}),
    ("exp", {"input": "a"}),
    ("sigmoid", {"input": "a"}),
    ("add", {"input": "a", "other": "b", "alpha": 2}),
    ("sub", {"input": "a", "other": "b", "alpha": 0.5}),
    ("mul", {"input": "a", "other": "b"}),
    ("div", {"input": "a", "other": "b", "rounding_mode": "floor"}),
    ("maximum", {"input": "a", "other": "b"}),
    ("atan2", {"input": "a", "other": "b"}),
    ("matmul", {"input": "a", "other": "b"}),
    ("mm", {"input": "a", "mat2": "b"}),
    ("sum", {"input": "a", "dim": 1, "keepdim": True}),
    ("logsumexp", {"input": "a", "dim": 0}),
    ("clamp", {"input": "a", "min": -0.5, "max": 0.5}),
    ("lerp", {"input": "a", "end": "b", "weight": 0.25}),
    ("tril", {"input": "a", "diagonal": -1}),
    ("gather", {"input": "a", "dim": 1, "index": "i"}),
    ("index_select", {"input": "a", "dim": 0, "index": "j"}),
    ("xlogy", {"input": "p", "other": "b"}),
]


@pytest.mark.parity
@pytest.mark.parametrize("name,kwargs", _KW_CASES, ids=[c[0] for c in _KW_CASES])
def test_keyword_forms_match_torch(name, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    vals = {"a": rng.standard_normal((3, 3)), "b": rng.standard_normal((3, 3)) + 3.0,
            "p": rng.random((3, 3)), "i": rng.integers(0, 3, (3, 2)),
            "j": np.array([2, 0])}

    def make(lib, v):
        return lib.from_numpy(vals[v].copy()) if isinstance(v, str) and v in vals else v

    got = getattr(ember, name)(**{k: make(ember, v) for k, v in kwargs.items()})
    want = getattr(torch, name)(**{k: make(torch, v) for k, v in kwargs.items()})
    np.testing.assert_allclose(got._data, want.numpy(), rtol=1e-12, atol=1e-12)
    assert [p for p in inspect.signature(getattr(ember, name)).parameters][:len(kwargs)] == \
        list(kwargs)
