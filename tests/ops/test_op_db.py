"""The generic op suite: every op with samples in the op database (ember.testing.op_db) runs
forward-vs-NumPy for each claimed dtype, gradcheck / gradgradcheck in float64, function vs method
vs in-place agreement, out=, non-contiguous inputs, error inputs and torch parity.

Parametrized by op name (and dtype), so a failure reads ``test_gradcheck[logsumexp]``.
"""
from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

import ember
from ember import _dtype as D
from ember._tensor import Tensor, _make
from ember.autograd import gradcheck, gradgradcheck
from ember.ops.registry import FUNCTIONS, OPS
from ember.testing import assert_close, default_tolerances
from ember.testing._op_table import NOT_IN_TABLE
from ember.testing._samples import (
    OP_TABLE,
    UNREGISTERED,
    SampleInput,
    call,
    map_tensors,
    op_db,
    tensors_of,
)

DB = {e.name: e for e in op_db()}
SAMPLED = sorted(DB)
# ops whose floating output dtype is not the input's by definition
_OWN_OUTPUT_DTYPE = {"float_power"}


def _floats(entry):
    return [d for d in entry.dtypes if d.is_floating_point]


def _differentiable(name):
    e = DB[name]
    return e.differentiable and D.float64 in e.dtypes


GRAD_OPS = [n for n in SAMPLED if _differentiable(n)]
# every differentiable op, once-differentiable ones expected to fail (strict: a fix shows)
GRADGRAD_CASES = [pytest.param(n, marks=pytest.mark.xfail(
    strict=True, reason=DB[n].spec.once_differentiable)) if not DB[n].gradgrad
    else n for n in GRAD_OPS]


def _main_dtypes(entry):
    """The dtypes the method/in-place/out= tests run in: float32 and int64 when claimed."""
    picked = [d for d in (D.float32, D.int64) if d in entry.dtypes]
    return picked or list(entry.dtypes[:1])


def _samples(name, dtype):
    seed = zlib.crc32(f"{name}-{dtype.name}".encode())  # different per op, stable per run
    return DB[name].samples(np.random.default_rng(seed), dtype)


def _grad_samples(name):
    """float64 samples for gradient checks (the table's grad_samples when it has them)."""
    spec = DB[name].spec
    seed = zlib.crc32(f"{name}-grad".encode())
    return (spec.grad_samples or spec.samples)(np.random.default_rng(seed), D.float64)


def _ids(cases):
    return [f"{n}-{d.name}" for n, d in cases]


FORWARD_CASES = [(n, d) for n in SAMPLED for d in DB[n].dtypes]
MAIN_CASES = [(n, d) for n in SAMPLED for d in _main_dtypes(DB[n])]


# ---------------------------------------------------------------------------------------------
# helpers


def _as_arrays(sample, upcast):
    """The sample with tensors as ndarrays (floats as float64 when upcast) for the reference."""
    def conv(t):
        a = t._data
        if upcast and t.is_floating_point():
            return a.astype(np.float64)
        return np.array(a, copy=True)
    return map_tensors(sample, conv)


def _run_ref(ref, sample, upcast):
    s = _as_arrays(sample, upcast)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ref(s.input, *s.args, **s.kwargs)


def _outputs(res):
    """An op result as a flat list of tensors (tuples / namedtuples / lists flattened)."""
    if isinstance(res, Tensor):
        return [res]
    return [t for r in res for t in _outputs(r)]


# Low-precision results of composite ops round every intermediate (torch computes them in
# float32 internally), so with O(1) sample values an absolute slack of about one ulp is needed
_LOW_PRECISION = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2)}


def _tol(entry, *dtypes):
    for d in dtypes:
        if d.name in entry.spec.tol:
            return entry.spec.tol[d.name]
    rtol, atol = default_tolerances(*dtypes)
    for d in dtypes:
        r, a = _LOW_PRECISION.get(d.name, (0, 0))
        rtol, atol = max(rtol, r), max(atol, a)
    return rtol, atol


def _where(name, sample, dtype=None):
    return f"{name} on sample {sample.name!r}" + (f" in {dtype.name}" if dtype else "")


def _contiguous_leaves(sample):
    """(template, leaves): float tensors replaced by contiguous float64 leaves needing grad."""
    leaves = []

    def leaf(t):
        if not t.is_floating_point():
            return t
        x = _make(np.array(t._data, dtype=np.float64, order="C")).requires_grad_()
        leaves.append(x)
        return x

    return map_tensors(sample, leaf), leaves


def _grad_fn(name, fn):
    """fn as the gradient checks call it: ops that read one triangle of a symmetric input
    (cholesky, eigh) get it symmetrized, so that every entry's perturbation counts."""
    if DB[name].spec.grad_wrapper is not None:
        return DB[name].spec.grad_wrapper(fn)
    if not DB[name].spec.hermitian:
        return fn

    def symmetrized(A, *args, **kwargs):
        return fn((A + A.transpose(-2, -1)) / 2, *args, **kwargs)

    return symmetrized


def _as_function(fn, template, leaves):
    """fn(*leaves) -> op output, re-inserting the given tensors into the sample."""
    ids = {id(x): i for i, x in enumerate(leaves)}

    def f(*xs):
        return call(fn, map_tensors(template, lambda t: xs[ids[id(t)]] if id(t) in ids else t))

    return f


def _noncontig(t):
    """The same values in memory where the last dim is strided (every other element)."""
    a = t._data
    if a.ndim == 0:
        return t
    buf = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    buf[..., ::2] = a
    nt = _make(buf[..., ::2])
    return nt.requires_grad_() if t.requires_grad else nt


# ---------------------------------------------------------------------------------------------
# coverage of the database itself


def test_every_registered_op_has_a_table_line():
    missing = sorted(n for n in OPS if n not in OP_TABLE and n not in NOT_IN_TABLE)
    assert not missing, f"registered ops without a line in ember/testing/_op_table.py: {missing}"
    stale = sorted(n for n in NOT_IN_TABLE if n in OP_TABLE or n not in OPS)
    assert not stale, f"NOT_IN_TABLE names ops that have a line or are not registered: {stale}"
    assert all(reason.strip() for reason in NOT_IN_TABLE.values())


def test_every_table_line_names_a_public_op():
    stale = sorted(n for n in OP_TABLE if n not in OPS and n not in UNREGISTERED)
    assert not stale, f"OP_TABLE lines for ops that are not registered: {stale}"
    assert all(n in FUNCTIONS for n in UNREGISTERED)


def test_op_db_leaves_the_registry_alone():
    before = {n: vars(info).copy() for n, info in OPS.items()}
    op_db()
    assert {n: vars(info) for n, info in OPS.items()} == before


@pytest.mark.parametrize("name,dtype", FORWARD_CASES, ids=_ids(FORWARD_CASES))
def test_samples_exist_for_every_claimed_dtype(name, dtype):
    assert _samples(name, dtype), f"{name}: no samples in {dtype.name}, which it claims"


@pytest.mark.parametrize("name", [n for n in SAMPLED if DB[n].spec.edge])
def test_samples_cover_0d_empty_noncontiguous(name):
    entry = DB[name]
    ts = [t for s in _samples(name, entry.dtypes[-1]) for t in tensors_of(s)]
    assert any(t.ndim == 0 for t in ts), f"{name}: no 0-d sample"
    assert any(t.numel() == 0 for t in ts), f"{name}: no empty sample"
    if entry.spec.noncontig:
        assert any(not t.is_contiguous() for t in ts), f"{name}: no non-contiguous sample"


# ---------------------------------------------------------------------------------------------
# forward


@pytest.mark.parametrize("name,dtype", FORWARD_CASES, ids=_ids(FORWARD_CASES))
def test_forward_matches_reference(name, dtype):
    entry = DB[name]
    for s in _samples(name, dtype):
        got = call(entry.fn, s)
        expected = _run_ref(entry.ref, s, upcast=dtype.is_floating_point and entry.spec.upcast)
        outs = _outputs(got)
        exp = _arrays(expected)
        assert len(outs) == len(exp), f"{_where(name, s, dtype)}: {len(outs)} outputs, " \
                                      f"expected {len(exp)}"
        for o, e in zip(outs, exp):
            rtol, atol = _tol(entry, o.dtype, dtype) if o.is_floating_point() or \
                o.is_complex() else (0, 0)
            assert_close(o, e, rtol=rtol, atol=atol, equal_nan=True, check_dtype=False,
                         msg=_where(name, s, dtype))
            if dtype.is_floating_point and o.is_floating_point() and \
                    name not in _OWN_OUTPUT_DTYPE and _all_same_dtype(s, dtype):
                assert o.dtype == dtype, f"{_where(name, s, dtype)}: output dtype {o.dtype}"


def _arrays(x):
    if isinstance(x, (tuple, list)):
        return [a for v in x for a in _arrays(v)]
    return [np.asarray(x)]


def _all_same_dtype(sample, dtype):
    return all(t.dtype == dtype or not t.is_floating_point() for t in tensors_of(sample))


# ---------------------------------------------------------------------------------------------
# gradients


@pytest.mark.parametrize("name", GRAD_OPS)
def test_gradcheck(name):
    entry = DB[name]
    for s in _grad_samples(name):
        template, leaves = _contiguous_leaves(s)
        if not leaves:
            continue
        f = _as_function(_grad_fn(name, entry.fn), template, leaves)
        assert gradcheck(f, leaves), _where(name, s)


@pytest.mark.parametrize("name", GRADGRAD_CASES)
def test_gradgradcheck(name):
    entry = DB[name]
    for s in _grad_samples(name):
        template, leaves = _contiguous_leaves(s)
        if not leaves or any(t.numel() == 0 for t in leaves):
            continue
        f = _float_outputs(_as_function(_grad_fn(name, entry.fn), template, leaves))
        assert gradgradcheck(f, leaves), _where(name, s)


def _float_outputs(f):
    # gradgradcheck differentiates every output it is given; (values, indices) results keep
    # the values
    def g(*xs):
        return tuple(o for o in _outputs(f(*xs)) if o.is_floating_point())
    return g


# ---------------------------------------------------------------------------------------------
# method, in-place, out=


@pytest.mark.parametrize("name,dtype", [(n, d) for n, d in MAIN_CASES if DB[n].method],
                         ids=_ids([(n, d) for n, d in MAIN_CASES if DB[n].method]))
def test_method_matches_function(name, dtype):
    entry = DB[name]
    for s in _samples(name, dtype):
        if not isinstance(s.input, Tensor):
            continue
        expected = call(entry.fn, s)
        got = getattr(s.input, name)(*s.args, **s.kwargs)
        assert_close(got, expected, rtol=0, atol=0, equal_nan=True, msg=_where(name, s))


INPLACE_CASES = [(n, d) for n, d in MAIN_CASES if DB[n].inplace]


@pytest.mark.parametrize("name,dtype", INPLACE_CASES, ids=_ids(INPLACE_CASES))
def test_inplace_matches_function_and_bumps_version(name, dtype):
    entry = DB[name]
    for s in _samples(name, dtype):
        if not isinstance(s.input, Tensor):
            continue
        expected = call(entry.fn, s)
        x = _make(s.input._data.copy(order="K"))  # keeps the sample's strides
        before = x._data.copy()
        v0 = x._version
        fits = tuple(expected.shape) == tuple(x.shape) and D.can_cast(expected.dtype, x.dtype)
        if not fits:  # broadcasting the input or narrowing the dtype cannot happen in place
            with pytest.raises(RuntimeError):
                getattr(x, name + "_")(*s.args, **s.kwargs)
            np.testing.assert_array_equal(x._data, before)
            continue
        res = getattr(x, name + "_")(*s.args, **s.kwargs)
        assert res is x, _where(name, s)
        assert x._version > v0, f"{_where(name, s)}: in-place did not bump _version"
        assert_close(x, expected.to(x.dtype), rtol=0, atol=0, equal_nan=True,
                     msg=_where(name, s))


OUT_CASES = [(n, d) for n, d in MAIN_CASES
             if (n in OPS or n in ("cat", "stack")) and DB[n].spec.out]


@pytest.mark.parametrize("name,dtype", OUT_CASES, ids=_ids(OUT_CASES))
def test_out_argument(name, dtype):
    entry = DB[name]
    for s in _samples(name, dtype):
        expected = call(entry.fn, s)
        if isinstance(expected, Tensor):
            out = ember.empty(0, dtype=expected.dtype)  # empty out= tensors are resized
            assert call(entry.fn, s, out=out) is out, _where(name, s)
            assert_close(out, expected, rtol=0, atol=0, equal_nan=True, msg=_where(name, s))
            full = ember.zeros(tuple(expected.shape), dtype=expected.dtype)
            v0 = full._version
            call(entry.fn, s, out=full)
            assert full._version > v0, f"{_where(name, s)}: out= did not bump _version"
            assert_close(full, expected, rtol=0, atol=0, equal_nan=True, msg=_where(name, s))


@pytest.mark.parametrize("name", ["max", "min"])
def test_out_argument_values_indices(name):
    x = ember.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    outs = (ember.empty(0), ember.empty(0, dtype=ember.int64))
    res = getattr(ember, name)(x, 1, out=outs)
    assert res.values is outs[0] and res.indices is outs[1]
    assert_close(tuple(outs), tuple(getattr(ember, name)(x, 1)))


def test_out_rejects_inputs_that_require_grad():
    a = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="add.*out=.*requires grad"):
        ember.add(a, a, out=ember.empty(0))


# ---------------------------------------------------------------------------------------------
# non-contiguous inputs


NONCONTIG_CASES = [(n, d) for n, d in MAIN_CASES if DB[n].spec.noncontig]


@pytest.mark.parametrize("name,dtype", NONCONTIG_CASES, ids=_ids(NONCONTIG_CASES))
def test_noncontiguous_inputs_match_contiguous(name, dtype):
    entry = DB[name]
    for s in _samples(name, dtype):
        nc = map_tensors(s, _noncontig)
        # BLAS may order a dot product differently for strided operands: 1 ulp is allowed
        assert_close(call(entry.fn, nc), call(entry.fn, s), equal_nan=True, msg=_where(name, s))


@pytest.mark.parametrize("name", [n for n in GRAD_OPS if DB[n].spec.noncontig])
def test_noncontiguous_grad_matches_contiguous(name):
    entry = DB[name]
    for s in _grad_samples(name):
        template, leaves = _contiguous_leaves(s)
        if not leaves:
            continue
        nleaves = [_noncontig(x) for x in leaves]
        grads = []
        for xs in (leaves, nleaves):
            f = _as_function(_grad_fn(name, entry.fn), template, leaves)
            outs = [o for o in _outputs(f(*xs)) if o.requires_grad]
            if not outs:
                break
            total = sum((o * (1.0 + ember.arange(o.numel(), dtype=ember.float64).reshape(
                o.shape))).sum() for o in outs)
            grads.append(ember.autograd.grad(total, xs, allow_unused=True))
        if len(grads) == 2:
            for g, ng in zip(*grads):
                if g is None:
                    assert ng is None
                else:
                    assert_close(ng, g, rtol=1e-12, atol=1e-12, msg=_where(name, s))


# ---------------------------------------------------------------------------------------------
# bad input


ERROR_OPS = [n for n in SAMPLED if DB[n].spec.errors is not None]


@pytest.mark.parametrize("name", ERROR_OPS)
def test_error_inputs(name):
    entry = DB[name]
    for e in entry.spec.errors(np.random.default_rng(0), _main_dtypes(entry)[0]):
        with pytest.raises(e.error_type, match=e.match):
            call(entry.fn, e.sample)


# ---------------------------------------------------------------------------------------------
# parity with torch


def _torch_fn(torch, name):
    path = DB[name].spec.torch_name or name
    obj = torch
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _to_torch(torch, obj, requires_grad=False):
    def conv(t):
        a = np.array(t._data, copy=True)
        if t.dtype is D.bfloat16:
            return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
        x = torch.from_numpy(a)
        return x.requires_grad_() if requires_grad and x.is_floating_point() else x
    s = map_tensors(obj, conv)
    return s


PARITY_CASES = [(n, d) for n in SAMPLED for d in DB[n].dtypes
                if DB[n].spec.parity and d in (D.float32, D.float64, D.int64, D.bool_,
                                               D.float16, D.bfloat16)]


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's deprecation / dof warnings
@pytest.mark.parametrize("name,dtype", PARITY_CASES, ids=_ids(PARITY_CASES))
def test_parity_with_torch(name, dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    tfn = _torch_fn(torch, name)
    if tfn is None:
        pytest.skip(f"torch has no function {name}")
    entry = DB[name]
    compared = 0
    for s in _samples(name, dtype):
        ts = _to_torch(torch, s)
        try:
            expected = tfn(ts.input, *ts.args, **ts.kwargs)
        except (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError):
            continue  # torch rejects this sample (an ember extension is allowed)
        got = call(entry.fn, s)
        rtol, atol = _tol(entry, dtype)
        assert_close(got, _torch_result(expected), rtol=rtol, atol=atol, equal_nan=True,
                     msg=_where(name, s, dtype))
        compared += 1
    if not compared:
        pytest.skip(f"torch rejects every {dtype.name} sample of {name}")


def _torch_result(x):
    if isinstance(x, (tuple, list)):
        return tuple(_torch_result(v) for v in x)
    return x


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", [n for n in GRAD_OPS if DB[n].spec.parity])
def test_parity_grad_with_torch(name):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    tfn = _torch_fn(torch, name)
    if tfn is None:
        pytest.skip(f"torch has no function {name}")
    entry = DB[name]
    for s in _grad_samples(name):
        template, leaves = _contiguous_leaves(s)
        if not leaves:
            continue
        ts = _to_torch(torch, template, requires_grad=True)
        tleaves = [t for t in _torch_tensors(torch, ts) if t.requires_grad]
        try:
            texp = _grad_fn(name, tfn)(ts.input, *ts.args, **ts.kwargs)
        except (RuntimeError, TypeError, ValueError, IndexError):
            continue
        outs = [o for o in _outputs(call(_grad_fn(name, entry.fn), template))
                if o.requires_grad]
        touts = [o for o in _flat_torch(torch, texp) if o.requires_grad]
        if not outs:
            continue
        assert len(outs) == len(touts), _where(name, s)
        weights = [np.arange(1.0, o.numel() + 1).reshape(tuple(o.shape)) for o in outs]
        try:
            sum((o * torch.from_numpy(w)).sum() for o, w in zip(touts, weights)).backward()
        except RuntimeError:  # e.g. torch cannot differentiate scatter with src larger than index
            continue
        sum((o * _make(w)).sum() for o, w in zip(outs, weights)).backward()
        for x, tx in zip(leaves, tleaves):
            ours = x.grad if x.grad is not None else ember.zeros_like(x)
            theirs = tx.grad if tx.grad is not None else torch.zeros_like(tx)
            assert_close(ours, theirs, rtol=1e-7, atol=1e-7, equal_nan=True,
                         msg=_where(name, s) + " gradient")


def _torch_tensors(torch, sample):
    found = []

    def visit(o):
        if isinstance(o, torch.Tensor):
            found.append(o)
        elif isinstance(o, (tuple, list)):
            for v in o:
                visit(v)
        elif isinstance(o, dict):
            for v in o.values():
                visit(v)

    visit([sample.input, sample.args, sample.kwargs])
    return found


def _flat_torch(torch, x):
    if isinstance(x, torch.Tensor):
        return [x]
    return [t for v in x for t in _flat_torch(torch, v)]


@pytest.mark.parity
@pytest.mark.parametrize("name", ERROR_OPS)
def test_parity_error_types_with_torch(name):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    tfn = _torch_fn(torch, name)
    if tfn is None:
        pytest.skip(f"torch has no function {name}")
    entry = DB[name]
    for e in entry.spec.errors(np.random.default_rng(0), _main_dtypes(entry)[0]):
        ts = _to_torch(torch, e.sample)
        with pytest.raises(e.error_type):
            tfn(ts.input, *ts.args, **ts.kwargs)


def test_sample_input_repr_names_the_case():
    assert "broadcast" in repr(SampleInput(None, name="broadcast other"))


# ---------------------------------------------------------------------------------------------
# the public testing helpers themselves


def test_assert_close_default_tolerances_per_dtype():
    one = ember.ones(1)
    assert_close(one + 1e-6, one)  # float32: rtol 1.3e-6, atol 1e-5
    with pytest.raises(AssertionError, match="(?s)not close.*Mismatched elements: 1 / 1"):
        assert_close(one + 1e-4, one)
    d = ember.ones(1, dtype=ember.float64)
    with pytest.raises(AssertionError, match="Greatest absolute difference"):
        assert_close(d + 1e-6, d)
    with pytest.raises(AssertionError):
        assert_close(ember.tensor([1, 2]), ember.tensor([1, 3]))  # integers compare exactly
    assert_close(ember.ones(1, dtype=ember.bfloat16), ember.ones(1, dtype=ember.bfloat16) * 1.01)


def test_assert_close_checks_shape_dtype_nan_and_sequences():
    with pytest.raises(AssertionError, match=r"shapes differ: \[2\] vs \[3\]"):
        assert_close(ember.ones(2), ember.ones(3))
    with pytest.raises(AssertionError, match="dtypes differ: float32 vs float64"):
        assert_close(ember.ones(2), np.ones(2))
    assert_close(ember.ones(2), np.ones(2), check_dtype=False)
    nan = ember.tensor([float("nan")])
    with pytest.raises(AssertionError):
        assert_close(nan, nan)
    assert_close(nan, nan, equal_nan=True)
    assert_close((ember.ones(1), [ember.zeros(2)]), (ember.ones(1), [ember.zeros(2)]))
    with pytest.raises(AssertionError, match=r"at item \[1\]"):
        assert_close((ember.ones(1), ember.ones(1)), (ember.ones(1), ember.zeros(1)))
    with pytest.raises(ValueError, match="both 'rtol' and 'atol'"):
        assert_close(ember.ones(1), ember.ones(1), rtol=1e-3)


@pytest.mark.parity
@pytest.mark.parametrize("dtype,delta", [("float32", 2e-6), ("float32", 5e-5), ("float64", 5e-8),
                                         ("float64", 5e-7), ("float16", 5e-4),
                                         ("float16", 2e-3), ("bfloat16", 1e-2),
                                         ("bfloat16", 5e-2)])
def test_assert_close_agrees_with_torch_testing(dtype, delta):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    a = torch.tensor([1.0, 2.0], dtype=getattr(torch, dtype))
    b = a + delta
    try:
        torch.testing.assert_close(b, a)
        theirs = True
    except AssertionError:
        theirs = False
    try:
        assert_close(b, a)
        ours = True
    except AssertionError:
        ours = False
    assert ours == theirs


def test_make_tensor_ranges_dtypes_and_layout():
    from ember.testing import make_tensor
    f = make_tensor(2, 3, dtype=ember.float64, low=-1, high=1, seed=0)
    assert f.dtype == ember.float64 and tuple(f.shape) == (2, 3)
    assert (-1 <= f.numpy()).all() and (f.numpy() < 1).all()
    i = make_tensor((50,), dtype=ember.int8, seed=1)
    assert i.dtype == ember.int8 and i.numpy().min() >= -9 and i.numpy().max() <= 9
    u = make_tensor(50, dtype=ember.uint8, seed=1)
    assert u.numpy().min() >= 0
    b = make_tensor(10, dtype=ember.bool, seed=2)
    assert b.dtype == ember.bool
    nc = make_tensor(3, 4, dtype=ember.float32, noncontiguous=True, seed=3)
    assert not nc.is_contiguous() and tuple(nc.shape) == (3, 4)
    nz = make_tensor(200, dtype=ember.int64, low=-1, high=2, exclude_zero=True, seed=4)
    assert (nz.numpy() != 0).all()
    g = make_tensor(2, dtype=ember.float32, requires_grad=True, seed=5)
    assert g.requires_grad and g.is_leaf
    with pytest.raises(ValueError, match="requires_grad"):
        make_tensor(2, dtype=ember.int64, requires_grad=True)


def test_make_tensor_seeding():
    from ember.testing import make_tensor
    a = make_tensor(4, dtype=ember.float32, seed=7)
    b = make_tensor(4, dtype=ember.float32, seed=7)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    ember.manual_seed(1)
    c = make_tensor(4, dtype=ember.float32)  # no seed: ember's default generator
    ember.manual_seed(1)
    np.testing.assert_array_equal(make_tensor(4, dtype=ember.float32).numpy(), c.numpy())
