"""Sorting and order statistics (ember/ops/sorting.py) against NumPy, finite differences and
(when installed) torch."""
from __future__ import annotations

import collections
import itertools

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

NAN = float("nan")


def _t(a, grad=False):
    return ember.tensor(np.asarray(a), requires_grad=grad)


def _close(got, want, **kw):
    np.testing.assert_allclose(np.asarray(got.detach().numpy()), want, **kw)


def _stable_desc(a, axis):
    """Reference stable descending order: by value (NaN largest), ties by position."""
    n = a.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(a, axis), axis=axis, kind="stable"), axis)


# ----------------------------------------------------------------------------- sort
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_stable_numpy(rng, dim, descending):
    a = rng.integers(0, 4, (5, 6)).astype(np.float64)
    a[1, 2] = a[3, 0] = NAN
    res = ember.sort(_t(a), dim, descending)
    idx = _stable_desc(a, dim) if descending else np.argsort(a, axis=dim, kind="stable")
    np.testing.assert_array_equal(res.indices.numpy(), idx)
    _close(res.values, np.take_along_axis(a, idx, dim))
    assert res.indices.dtype == ember.int64
    np.testing.assert_array_equal(ember.argsort(_t(a), dim, descending).numpy(), idx)


def test_sort_nan_goes_last_ascending_first_descending():
    x = _t([2.0, NAN, 1.0, 2.0])
    assert ember.sort(x).indices.tolist() == [2, 0, 3, 1]
    assert ember.sort(x, descending=True).indices.tolist() == [1, 0, 3, 2]


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_low_precision_nan_orders_last(dtype):
    x = ember.tensor([3.0, NAN, 2.0, 1.0]).to(dtype)
    assert ember.sort(x).indices.tolist() == [3, 2, 0, 1]
    assert np.isnan(float(ember.median(x).item()))
    assert ember.median(x, 0).indices.item() == 1
    assert float(ember.nanmedian(x).item()) == 2.0
    assert ember.cummax(x, 0).indices.tolist() == [0, 1, 1, 1]


def test_sort_noncontiguous_int_bool_0d_empty(rng):
    a = rng.integers(-5, 5, (4, 6))
    for x, ref in ((_t(a).t(), a.T), (_t(a)[::2, ::3], a[::2, ::3])):
        _close(ember.sort(x, 0).values, np.sort(ref, 0, kind="stable"))
    b = ember.sort(_t(np.array([True, False, True])))
    assert b.values.tolist() == [False, True, True] and b.indices.tolist() == [1, 0, 2]
    s = ember.sort(ember.tensor(5.0))
    assert s.values.item() == 5.0 and s.indices.item() == 0 and s.indices.shape == ()
    e = ember.sort(ember.zeros(1, 0), 0)
    assert e.values.shape == e.indices.shape == (1, 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.sort(ember.zeros(2, 3), 2)


def test_sort_out_and_method(rng):
    a = rng.standard_normal((3, 4))
    vals, idx = ember.empty(0), ember.empty(0, dtype=ember.int64)
    res = ember.sort(_t(a), 1, out=(vals, idx))
    assert res.values is vals and res.indices is idx
    _close(vals, np.sort(a, 1))
    _close(_t(a).sort(0, True).values, -np.sort(-a, 0))
    _close(ember.msort(_t(a)), np.sort(a, 0))
    _close(_t(a).msort(), np.sort(a, 0))


# ----------------------------------------------------------------------------- topk / kth
@pytest.mark.parametrize("k", [0, 1, 3, 5])
def test_topk(rng, k):
    a = rng.standard_normal((5, 4))
    big = ember.topk(_t(a), k, dim=0)
    _close(big.values, -np.sort(-a, 0)[:k])
    np.testing.assert_array_equal(np.take_along_axis(a, big.indices.numpy(), 0),
                                  big.values.numpy())
    small = _t(a).topk(k, -1 if k <= 4 else 0, largest=False)
    ref_dim = -1 if k <= 4 else 0
    _close(small.values, np.take(np.sort(a, ref_dim), np.arange(k), axis=ref_dim))


def test_topk_kthvalue_errors_and_0d():
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        ember.topk(ember.arange(3.0), 4)
    with pytest.raises(RuntimeError, match="selected number k out of range"):
        ember.kthvalue(ember.arange(3.0), 4)
    with pytest.raises(RuntimeError, match="selected number k out of range"):
        ember.kthvalue(ember.arange(3.0), 0)
    t = ember.topk(ember.tensor(5.0), 1)
    assert t.values.item() == 5.0 and t.indices.item() == 0
    assert ember.kthvalue(ember.tensor(3.0), 1).values.item() == 3.0


@pytest.mark.parametrize("k", [1, 2, 4])
def test_kthvalue_matches_partition(rng, k):
    a = rng.standard_normal((3, 4))
    res = ember.kthvalue(_t(a), k, 1, keepdim=True)
    _close(res.values, np.sort(a, 1)[:, k - 1:k])
    assert res.values.shape == res.indices.shape == (3, 1)
    _close(ember.kthvalue(_t(a).t(), k, 0).values, np.sort(a, 1)[:, k - 1])


# ----------------------------------------------------------------------------- median / mode
def test_median_lower_median_and_nan(rng):
    a = rng.standard_normal(6)
    assert ember.median(_t(a)).item() == np.sort(a)[2]  # lower of the two middle values
    assert np.isnan(ember.median(_t([3.0, NAN, 1.0])).item())
    assert ember.nanmedian(_t([3.0, NAN, 1.0, 2.0])).item() == 2.0
    assert np.isnan(ember.nanmedian(_t([NAN, NAN])).item())
    assert np.isnan(ember.median(ember.zeros(0)).item())


def test_median_dim_values_and_indices(rng):
    a = rng.standard_normal((4, 5))
    for d in (0, 1, -1):
        res = ember.median(_t(a), d)
        n = a.shape[d]
        _close(res.values, np.take(np.sort(a, d), (n - 1) // 2, axis=d))
        got = np.take_along_axis(a, np.expand_dims(res.indices.numpy(), d), d).squeeze(d)
        _close(res.values, got)
    res = ember.median(_t([[3.0, NAN, 1.0, NAN, 2.0]]), 1, keepdim=True)
    assert np.isnan(res.values.item()) and res.indices.item() == 1  # first NaN
    res = ember.nanmedian(_t([[3.0, NAN, 1.0, NAN, 2.0], [NAN] * 5]), 1)
    assert res.values[0].item() == 2.0 and res.indices.tolist() == [4, 0]
    assert np.isnan(res.values[1].item())
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        ember.median(ember.zeros(0, 3), 0)
    assert ember.median(ember.zeros(0, 3), 1).values.shape == (0,)
    assert ember.median(ember.tensor(3.0), 0, keepdim=True).values.item() == 3.0


def test_median_full_reduction_splits_gradient_among_ties():
    x = ember.tensor([1.0, 2.0, 2.0, 3.0], requires_grad=True)
    ember.median(x).backward()
    _close(x.grad, [0.0, 0.5, 0.5, 0.0])
    y = ember.tensor([1.0, 2.0, 2.0, 3.0], requires_grad=True)
    ember.median(y, 0).values.backward()
    _close(y.grad, [0.0, 1.0, 0.0, 0.0])


def test_mode_smallest_most_frequent_last_index(rng):
    a = rng.integers(0, 4, (6, 9))
    for d in (0, 1):
        res = ember.mode(_t(a), d)
        moved = np.moveaxis(a, d, 0)
        for j in range(moved.shape[1]):
            col = moved[:, j].tolist()
            counts = collections.Counter(col)
            best = min(v for v, c in counts.items() if c == max(counts.values()))
            assert res.values[j].item() == best
            assert res.indices[j].item() == len(col) - 1 - col[::-1].index(best)
    with pytest.raises(IndexError, match="mode\\(\\): Expected reduction dim 1"):
        ember.mode(ember.zeros(2, 0), 1)


# ----------------------------------------------------------------------------- quantile
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (None, True), (1, True), (0, False),
                                         (-1, False)])
def test_quantile_matches_numpy(rng, interpolation, dim, keepdim):
    a = rng.standard_normal((4, 6))
    q = np.array([0.0, 0.1, 0.5, 0.75, 1.0])
    got = ember.quantile(_t(a), _t(q), dim, keepdim, interpolation=interpolation)
    _close(got, np.quantile(a, q, axis=dim, keepdims=keepdim, method=interpolation), rtol=1e-12)
    got = ember.quantile(_t(a), 0.3, dim, keepdim, interpolation=interpolation)
    _close(got, np.quantile(a, 0.3, axis=dim, keepdims=keepdim, method=interpolation))
    b = a.copy()
    b[1, 2] = b[3, 3] = NAN
    got = ember.nanquantile(_t(b), _t(q), dim, keepdim, interpolation=interpolation)
    _close(got, np.nanquantile(b, q, axis=dim, keepdims=keepdim, method=interpolation))


def test_quantile_nan_rows_and_noncontiguous(rng):
    x = _t([[1.0, NAN, 2.0], [1.0, 2.0, 4.0]])
    got = ember.quantile(x, 0.5, dim=1)
    assert np.isnan(got[0].item()) and got[1].item() == 2.0
    assert ember.nanquantile(x, 0.5, dim=1).tolist() == [1.5, 2.0]
    a = rng.standard_normal((5, 4))
    _close(ember.quantile(_t(a).t(), 0.4, 1), np.quantile(a.T, 0.4, axis=1))
    _close(ember.quantile(_t(a)[::2], 0.4, 0), np.quantile(a[::2], 0.4, axis=0))
    assert ember.quantile(ember.tensor(3.0), 0.5).item() == 3.0


def test_quantile_errors():
    x = ember.tensor([0.0, 1.0, 2.0])
    with pytest.raises(RuntimeError, match="must be non-empty"):
        ember.quantile(ember.zeros(0), 0.5)
    with pytest.raises(RuntimeError, match="either float or double dtype"):
        ember.quantile(ember.tensor([1, 2]), 0.5)
    with pytest.raises(RuntimeError, match="q must be in the range \\[0, 1\\] but got 1.5"):
        ember.quantile(x, 1.5)
    with pytest.raises(RuntimeError, match="same dtype as the input"):
        ember.quantile(x, ember.tensor([0.5], dtype=ember.float64))
    with pytest.raises(RuntimeError, match="scalar or 1D tensor"):
        ember.quantile(x, ember.tensor([[0.5]]))
    with pytest.raises(RuntimeError, match="interpolation must be one of"):
        ember.quantile(x, 0.5, interpolation="foo")


# ----------------------------------------------------------------------------- unique
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_unique_matches_numpy(rng, dim):
    a = rng.integers(0, 3, (6, 3))
    vals, inv, counts = ember.unique(_t(a), return_inverse=True, return_counts=True, dim=dim)
    rv, ri, rc = np.unique(a, return_inverse=True, return_counts=True, axis=dim)
    np.testing.assert_array_equal(vals.numpy(), rv)
    np.testing.assert_array_equal(counts.numpy(), rc)
    np.testing.assert_array_equal(inv.numpy(), ri.reshape(a.shape) if dim is None else
                                  ri.reshape(-1))
    assert isinstance(ember.unique(_t(a)), ember.Tensor)
    assert ember.unique(ember.tensor(5)).tolist() == [5]
    assert ember.unique(ember.zeros(0)).shape == (0,)
    assert _t(a).unique().tolist() == sorted(set(a.ravel().tolist()))


def test_unique_consecutive():
    seq = [1, 1, 2, 2, 3, 1, 1, 2]
    vals, inv, counts = ember.unique_consecutive(ember.tensor(seq), return_inverse=True,
                                                 return_counts=True)
    groups = [(k, len(list(g))) for k, g in itertools.groupby(seq)]
    assert vals.tolist() == [k for k, _ in groups]
    assert counts.tolist() == [n for _, n in groups]
    assert [vals.tolist()[i] for i in inv.tolist()] == seq
    m = ember.tensor([[1, 1], [1, 1], [2, 3], [1, 1]])
    vals, counts = ember.unique_consecutive(m, dim=0, return_counts=True)
    assert vals.tolist() == [[1, 1], [2, 3], [1, 1]] and counts.tolist() == [2, 1, 1]


# ----------------------------------------------------------------------------- cummax / cummin
def _cum_ref(a, better):
    """Running extreme and the latest index attaining it; NaN beats everything, and each
    later NaN takes the index (torch's rule)."""
    vals, idx = np.empty_like(a), np.empty(a.shape, np.int64)
    best, bi = a[0], 0
    for i, v in enumerate(a):
        if np.isnan(v):
            best, bi = v, i
        elif np.isnan(best):
            pass
        elif better(v, best) or v == best:
            best, bi = v, i
        vals[i], idx[i] = best, bi
    return vals, idx


@pytest.mark.parametrize("name,better", [("cummax", np.greater), ("cummin", np.less)])
def test_cummax_cummin(rng, name, better):
    a = rng.integers(0, 4, (3, 8)).astype(np.float64)
    a[1, 4] = a[1, 6] = a[2, 4] = NAN
    for d in (0, 1):
        res = getattr(ember, name)(_t(a), d)
        moved = np.moveaxis(a, d, -1)
        ref = [_cum_ref(row, better) for row in moved.reshape(-1, moved.shape[-1])]
        rv = np.moveaxis(np.stack([r[0] for r in ref]).reshape(moved.shape), -1, d)
        ri = np.moveaxis(np.stack([r[1] for r in ref]).reshape(moved.shape), -1, d)
        _close(res.values, rv)
        np.testing.assert_array_equal(res.indices.numpy(), ri)
    ints = getattr(ember, name)(_t(a[0].astype(np.int64)), 0)
    assert ints.values.dtype == ember.int64
    z = getattr(ember, name)(ember.tensor(2.0), 0)
    assert z.values.item() == 2.0 and z.indices.item() == 0


@pytest.mark.parity
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_nan_indices_match_torch(name):
    torch = pytest.importorskip("torch")
    for row in ([1, 3, 3, 2, NAN, 5, NAN], [NAN, 1, NAN, 2], [1, NAN, NAN, 0], [2, 2, 1, 2]):
        want = getattr(torch, name)(torch.tensor(row), 0)
        got = getattr(ember, name)(ember.tensor(row), 0)
        assert got.indices.tolist() == want.indices.tolist(), row
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())


# ----------------------------------------------------------------------------- bucketing
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_and_bucketize(rng, right):
    seq = np.sort(rng.integers(0, 10, (3, 8)), 1)
    v = rng.integers(0, 11, (3, 5))
    side = "right" if right else "left"
    got = ember.searchsorted(_t(seq), _t(v), right=right)
    want = np.stack([np.searchsorted(s, x, side=side) for s, x in zip(seq, v)])
    np.testing.assert_array_equal(got.numpy(), want)
    got = ember.searchsorted(_t(seq[0]), _t(v), side=side, out_int32=True)
    assert got.dtype == ember.int32
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(seq[0], v, side=side))
    got = ember.bucketize(_t(v), _t(seq[0]), right=right)
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(seq[0], v, side=side))
    assert ember.searchsorted(_t(seq[0]), 3).shape == ()
    assert ember.bucketize(3, _t(seq[0])).shape == ()


def test_searchsorted_sorter_and_errors():
    seq = ember.tensor([5.0, 3.0, 1.0])
    got = ember.searchsorted(seq, ember.tensor([3.0, 4.0]), sorter=ember.tensor([2, 1, 0]))
    assert got.tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="boundaries tensor should be 1 dimension"):
        ember.searchsorted(ember.zeros(2, 3), ember.zeros(2))
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        ember.searchsorted(seq, ember.zeros(1), side="left", right=True)
    with pytest.raises(RuntimeError, match="boundaries tensor must be 1 dimension"):
        ember.bucketize(ember.tensor([3]), ember.tensor([[1, 5]]))


def test_histc_matches_numpy(rng):
    a = rng.standard_normal(200).astype(np.float32)
    got = ember.histc(_t(a), bins=7)
    assert got.dtype == ember.float32
    np.testing.assert_array_equal(got.numpy(), np.histogram(a, 7, (a.min(), a.max()))[0])
    got = ember.histc(_t(a), bins=5, min=-1, max=1)
    np.testing.assert_array_equal(got.numpy(), np.histogram(a, 5, (-1, 1))[0])
    assert ember.histc(ember.tensor([1.0, 2.0, 1.0, 4.0]), 4, 0, 3).tolist() == [0, 2, 1, 0]
    assert ember.histc(ember.tensor([2.0, 2.0]), 3).tolist() == [0, 2, 0]  # range [1, 3]
    with pytest.raises(NotImplementedError, match="histc"):
        ember.histc(ember.tensor([1, 2]))


def test_bincount(rng):
    a = rng.integers(0, 6, 30)
    w = rng.standard_normal(30)
    got = ember.bincount(_t(a))
    assert got.dtype == ember.int64
    np.testing.assert_array_equal(got.numpy(), np.bincount(a))
    _close(ember.bincount(_t(a), _t(w), minlength=9), np.bincount(a, w, 9))
    assert ember.bincount(_t(a), _t(w.astype(np.float32))).dtype == ember.float32
    assert ember.bincount(_t(a), _t(a)).dtype == ember.float64
    assert ember.bincount(ember.zeros(0, dtype=ember.int64), minlength=3).tolist() == [0, 0, 0]
    with pytest.raises(RuntimeError, match="1-d non-negative integral"):
        ember.bincount(ember.tensor([-1, 2]))
    with pytest.raises(RuntimeError, match="1-d non-negative integral"):
        ember.bincount(ember.tensor([[1, 2]]))
    with pytest.raises(RuntimeError, match="same length as input"):
        ember.bincount(ember.tensor([1, 2]), ember.tensor([1.0]))
    with pytest.raises(NotImplementedError):
        ember.bincount(ember.tensor([1.0]))


def test_logcumsumexp_stable(rng):
    a = rng.standard_normal((3, 5)) * 300  # exp overflows float64 here
    for d in (0, 1, -1):
        _close(ember.logcumsumexp(_t(a), d), np.logaddexp.accumulate(a, axis=d), rtol=1e-12)
    _close(ember.logcumsumexp(_t(a).t(), 0), np.logaddexp.accumulate(a.T, axis=0))
    x = ember.tensor([-np.inf, -np.inf, 0.0], requires_grad=True)
    y = ember.logcumsumexp(x, 0)
    assert y.tolist()[:2] == [-np.inf, -np.inf] and y[2].item() == 0.0
    y[2].backward()
    _close(x.grad, [0.0, 0.0, 1.0])
    with pytest.raises(NotImplementedError):
        ember.logcumsumexp(ember.tensor([1, 2]), 0)


# ----------------------------------------------------------------------------- gradients
GRAD_CASES = {
    "sort": lambda x: ember.sort(x, 1, descending=True).values,
    "msort": lambda x: ember.msort(x),
    "topk": lambda x: ember.topk(x, 2, 0).values,
    "kthvalue": lambda x: ember.kthvalue(x, 2, 1).values,
    "median": lambda x: ember.median(x),
    "median_dim": lambda x: ember.median(x, 0).values,
    "nanmedian": lambda x: ember.nanmedian(x, 1, keepdim=True).values,
    "mode": lambda x: ember.mode(x, 1).values,
    "quantile": lambda x: ember.quantile(x, ember.tensor([0.2, 0.7], dtype=ember.float64), 1),
    "quantile_midpoint": lambda x: ember.quantile(x, 0.4, interpolation="midpoint"),
    "nanquantile": lambda x: ember.nanquantile(x, 0.4, 0, keepdim=True),
    "cummax": lambda x: ember.cummax(x, 1).values,
    "cummin": lambda x: ember.cummin(x, 0).values,
    "logcumsumexp": lambda x: ember.logcumsumexp(x, 1),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradcheck(rng, name):
    x = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(GRAD_CASES[name], (x,))


@pytest.mark.parametrize("name", ["sort", "quantile", "cummax", "logcumsumexp"])
def test_gradgradcheck(rng, name):
    x = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    assert gradgradcheck(GRAD_CASES[name], (x,))


def test_non_differentiable_outputs():
    x = ember.tensor([3.0, 1.0, 2.0], requires_grad=True)
    assert not ember.sort(x).indices.requires_grad
    assert not ember.argsort(x).requires_grad
    assert not ember.unique(x.detach()).requires_grad


# ----------------------------------------------------------------------------- torch parity
@pytest.mark.parity
def test_selection_ops_match_torch(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    a = rng.integers(0, 4, (4, 7)).astype(np.float64)
    a[1, 2] = NAN
    cases = [
        lambda m, x: m.sort(x, dim=1, descending=True, stable=True),
        lambda m, x: m.median(x, 1),
        lambda m, x: m.nanmedian(x, 0),
        lambda m, x: m.cummax(x, 1),
        lambda m, x: m.cummin(x, 0),
        lambda m, x: m.mode(x.nan_to_num(), 1),
        # torch breaks ties in kthvalue arbitrarily (quickselect): compare on distinct values
        lambda m, x: m.kthvalue(x.nan_to_num() + m.arange(7.0, dtype=x.dtype) / 10, 3, 1),
    ]
    for f in cases:
        xe, xt = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        re, rt = f(ember, xe), f(torch, xt)
        np.testing.assert_allclose(re.values.detach().numpy(), rt.values.detach().numpy())
        np.testing.assert_array_equal(re.indices.numpy(), rt.indices.numpy())
        w = rng.standard_normal(tuple(rt.values.shape))
        (re.values.nan_to_num() * ember.tensor(w)).sum().backward()
        (rt.values.nan_to_num() * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy())


@pytest.mark.parity
def test_quantile_and_lcse_match_torch(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    a = rng.standard_normal((4, 6)).astype(np.float32)
    for interp in ("linear", "nearest", "midpoint"):
        for q in (0.1, 1 / 6, 0.5, 0.9):
            got = ember.quantile(_t(a), q, 1, interpolation=interp).numpy()
            want = torch.quantile(torch.tensor(a), q, 1, interpolation=interp).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-6)
    b = rng.standard_normal((3, 5)) * 50
    xe, xt = ember.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
    ye, yt = ember.logcumsumexp(xe, 1), torch.logcumsumexp(xt, 1)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    w = rng.standard_normal((3, 5))
    (ye * ember.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    for x in (torch.tensor([1.0, 2.0, 1.0, 4.0]), torch.randn(50)):
        np.testing.assert_array_equal(ember.histc(_t(x.numpy()), 6).numpy(),
                                      torch.histc(x, 6).numpy())


# a bad dim or an empty reduced dim is the error torch reports before the dtype or k (the
# reduction sweep found these checks in the other order)
def test_kthvalue_of_an_empty_dim_is_an_index_error_whatever_k():
    for k in (0, 1, 9):
        with pytest.raises(IndexError, match=r"kthvalue\(\): Expected reduction dim 1 to have "
                                             r"non-zero size; got input of shape \[2, 0\]"):
            ember.kthvalue(ember.zeros(2, 0, dtype=ember.int64), k)
    with pytest.raises(RuntimeError, match="selected number k out of range"):
        ember.kthvalue(ember.zeros(2, 3), 4)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_of_bool_checks_the_dim_first(name):
    fn = getattr(ember, name)
    b = ember.tensor([[True, False, True]])
    with pytest.raises(IndexError, match="Dimension out of range"):
        fn(b, 5)
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'dim' must be int, not tuple"):
        fn(b, (0, 1))
    with pytest.raises(NotImplementedError, match=f"{name}: not implemented for bool"):
        fn(b, 1)


def test_unique_keeps_each_nan_apart():
    # NaN != NaN: torch (and NumPy's equal_nan=False) count every NaN as a value of its own
    values, inverse, counts = ember.unique(_t([2.0, NAN, 1.0, 1.0, NAN, 2.0]),
                                           return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(values.numpy(), [1.0, 2.0, NAN, NAN])
    assert inverse.tolist() == [1, 2, 0, 0, 3, 1]
    assert counts.tolist() == [2, 2, 1, 1]


@pytest.mark.parametrize("dim", [0, -1])
def test_unique_consecutive_of_an_empty_dim(dim):
    values, inverse, counts = ember.unique_consecutive(ember.zeros(0, dtype=ember.int64),
                                                       return_inverse=True,
                                                       return_counts=True, dim=dim)
    assert values.shape == inverse.shape == counts.shape == (0,)
    assert values.dtype == ember.int64 and counts.dtype == ember.int64
    assert ember.unique_consecutive(ember.zeros(0, 3), dim=0).shape == (0, 3)


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_with_nan_boundaries_bisects_as_torch(right):
    # torch's bisection moves right past a boundary b unless b >= v (b > v for right); a NaN
    # boundary fails every comparison, so values land past it (NumPy would stop before it)
    seq = ember.tensor([1.0, 2.0, NAN])
    got = ember.searchsorted(seq, ember.tensor([NAN, 1.5, 0.0, 2.0, 3.0]), right=right)
    assert got.tolist() == ([3, 1, 0, 3, 3] if right else [3, 1, 0, 1, 3])
    rows = ember.tensor([[1.0, 3.0, NAN], [0.0, NAN, NAN]])
    got = ember.searchsorted(rows, ember.tensor([[2.0, NAN], [0.0, 5.0]]), right=right)
    assert got.tolist() == [[1, 3], [3, 3]]
    # a NaN-free sequence keeps NumPy's search (a NaN value goes last)
    assert ember.searchsorted(ember.tensor([1.0, 2.0]), ember.tensor([NAN])).tolist() == [2]
