"""Top-level numeric helpers (ember/ops/numeric.py, ember/_info.py) against torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

torch = pytest.importorskip("torch")


def _same(ours, ref, rtol=1e-6):
    if isinstance(ref, torch.Tensor):
        assert tuple(ours.shape) == tuple(ref.shape)
        np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=rtol,
                                   atol=1e-9)
    else:
        assert ours == ref


def _both(a):
    return ember.tensor(a), torch.tensor(a)


@pytest.mark.parity
@pytest.mark.parametrize("a, b, kw", [
    ([1.0, 2.0, math.inf, math.nan, -math.inf], [1.0 + 1e-9, 2.1, math.inf, math.nan, math.inf],
     {}),
    ([1.0, math.nan], [1.0, math.nan], {"equal_nan": True}),
    ([[1.0, 2.0]], [1.05, 2.0], {"rtol": 0.1, "atol": 0.0}),
])
def test_isclose_allclose_match_torch(a, b, kw):
    (ea, ta), (eb, tb) = _both(a), _both(b)
    assert ember.isclose(ea, eb, **kw).tolist() == torch.isclose(ta, tb, **kw).tolist()
    assert ember.allclose(ea, eb, **kw) == torch.allclose(ta, tb, **kw)
    assert ea.isclose(eb, **kw).tolist() == ta.isclose(tb, **kw).tolist()


@pytest.mark.parametrize("kw, name", [({"rtol": -1.0}, "rtol"), ({"atol": -0.5}, "atol")])
def test_isclose_refuses_a_negative_tolerance(kw, name):
    for fn in (ember.isclose, ember.allclose):
        with pytest.raises(RuntimeError, match=f"isclose: {name} must be greater than or equal "
                                               "to zero, but got -"):
            fn(ember.ones(2), ember.ones(2), **kw)
    with pytest.raises(RuntimeError, match=f"{name} must be greater than or equal to zero"):
        torch.isclose(torch.ones(2), torch.ones(2), **kw)


def test_equal_and_is_same_size():
    a = ember.tensor([1, 2])
    assert ember.equal(a, ember.tensor([1, 2])) and not ember.equal(a, ember.tensor([1, 3]))
    assert not ember.equal(a, ember.tensor([[1, 2]]))
    assert ember.is_same_size(a, ember.zeros(2)) and not a.is_same_size(ember.zeros(3))
    with pytest.raises(TypeError, match="equal\\(\\): argument 'other' must be Tensor"):
        ember.equal(a, [1, 2])


@pytest.mark.parity
@pytest.mark.parametrize("n, dim", [(1, -1), (2, 0), (3, 1)])
def test_diff_matches_torch(n, dim):
    a = np.random.default_rng(0).standard_normal((4, 5))
    (e, t) = _both(a)
    pe, pt = _both(a[:1] if dim == 0 else a[:, :1])
    _same(ember.diff(e, n, dim), torch.diff(t, n, dim))
    _same(e.diff(n=n, dim=dim, prepend=pe), t.diff(n=n, dim=dim, prepend=pt))


def test_diff_gradient():
    x = ember.tensor(np.arange(6.0) ** 2, requires_grad=True)
    assert gradcheck(lambda v: ember.diff(v, 2), (x,))


@pytest.mark.parity
def test_trapezoid_family_matches_torch():
    y = np.random.default_rng(1).standard_normal((3, 6))
    x = np.sort(np.random.default_rng(2).uniform(0, 3, 6))
    (ey, ty), (ex, tx) = _both(y), _both(x)
    _same(ember.trapezoid(ey), torch.trapezoid(ty))
    _same(ember.trapezoid(ey, ex), torch.trapezoid(ty, tx))
    _same(ember.trapezoid(ey, dx=0.5, dim=0), torch.trapezoid(ty, dx=0.5, dim=0))
    _same(ember.trapz(ey, ex), torch.trapz(ty, tx))
    _same(ember.cumulative_trapezoid(ey, ex), torch.cumulative_trapezoid(ty, tx))
    _same(ember.cumulative_trapezoid(ey, dx=2.0), torch.cumulative_trapezoid(ty, dx=2.0))


@pytest.mark.parity
def test_cov_and_corrcoef_match_torch():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 8))
    fw = rng.integers(1, 4, 8)
    aw = rng.uniform(0.1, 1.0, 8)
    (e, t) = _both(a)
    _same(ember.cov(e), torch.cov(t))
    _same(ember.cov(e, correction=0), torch.cov(t, correction=0))
    _same(ember.cov(e, fweights=ember.tensor(fw), aweights=ember.tensor(aw)),
          torch.cov(t, fweights=torch.tensor(fw), aweights=torch.tensor(aw)))
    _same(ember.cov(e[0]), torch.cov(t[0]))
    _same(ember.corrcoef(e), torch.corrcoef(t))
    x = ember.tensor(a, requires_grad=True)
    assert gradcheck(lambda v: ember.cov(v), (x,))


@pytest.mark.parity
def test_logaddexp_matches_torch_including_infinities():
    a = [-math.inf, math.inf, 1.0, -1000.0, 3.0]
    b = [-math.inf, math.inf, 2.0, -1000.0, -math.inf]
    (ea, ta), (eb, tb) = _both(a), _both(b)
    _same(ember.logaddexp(ea, eb), torch.logaddexp(ta, tb))
    _same(ember.logaddexp2(ea, eb), torch.logaddexp2(ta, tb))
    x = ember.tensor([0.3, -1.0], requires_grad=True)
    y = ember.tensor([1.3, 2.0], requires_grad=True)
    assert gradcheck(ember.logaddexp, (x.double().detach().requires_grad_(),
                                       y.double().detach().requires_grad_()))


@pytest.mark.parity
def test_integer_and_float_helpers_match_torch():
    (ea, ta), (eb, tb) = _both([12, 18, -7, 0]), _both([8, 27, 21, 5])
    _same(ember.gcd(ea, eb), torch.gcd(ta, tb))
    _same(ember.lcm(ea, eb), torch.lcm(ta, tb))
    with pytest.raises(RuntimeError, match="not implemented for"):
        ember.gcd(ember.tensor([1.0]), ember.tensor([2.0]))
    x = [-1.5, 0.0, 2.0, 0.0]
    (ex, tx), (ev, tv) = _both(x), _both([0.5, 0.25, 0.5, 0.75])
    _same(ember.heaviside(ex, ev), torch.heaviside(tx, tv))
    m, e = ember.frexp(ember.tensor([0.0, 3.0, -10.5, 1e-3]))
    tm, te = torch.frexp(torch.tensor([0.0, 3.0, -10.5, 1e-3]))
    _same(m, tm)
    assert e.dtype == ember.int32 and e.tolist() == te.tolist()
    _same(ember.ldexp(ember.tensor([1.0, 3.0]), ember.tensor([2, -1])),
          torch.ldexp(torch.tensor([1.0, 3.0]), torch.tensor([2, -1])))
    _same(ember.nextafter(ember.tensor([1.0]), ember.tensor([2.0])),
          torch.nextafter(torch.tensor([1.0]), torch.tensor([2.0])))
    _same(ember.rsub(ember.tensor([1.0, 2.0]), 5.0, alpha=2),
          torch.rsub(torch.tensor([1.0, 2.0]), 5.0, alpha=2))
    _same(ember.vdot(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0])),
          torch.vdot(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])))
    with pytest.raises(RuntimeError, match="bool tensor is not supported"):
        ember.positive(ember.tensor([True]))


@pytest.mark.parity
def test_aminmax_renorm_histogram_match_torch():
    a = np.random.default_rng(4).standard_normal((3, 4))
    e, t = _both(a)
    lo, hi = ember.aminmax(e)
    tlo, thi = torch.aminmax(t)
    _same(lo, tlo)
    _same(hi, thi)
    lo, hi = ember.aminmax(e, dim=1, keepdim=True)
    tlo, thi = torch.aminmax(t, dim=1, keepdim=True)
    _same(lo, tlo)
    _same(hi, thi)
    _same(ember.renorm(e, 2, 0, 1.0), torch.renorm(t, 2, 0, 1.0), rtol=1e-5)
    h, edges = ember.histogram(e, bins=5)
    th, tedges = torch.histogram(t, bins=5)
    _same(h, th)
    _same(edges, tedges)


@pytest.mark.parity
def test_isin_unravel_combinations_splits_match_torch():
    (ea, ta), (eb, tb) = _both([1, 2, 3, 4]), _both([2, 4, 6])
    assert ember.isin(ea, eb).tolist() == torch.isin(ta, tb).tolist()
    assert ember.isin(ea, eb, invert=True).tolist() == torch.isin(ta, tb, invert=True).tolist()
    got = ember.unravel_index(ember.tensor([4, 5, -1]), (2, 3))
    ref = torch.unravel_index(torch.tensor([4, 5, -1]), (2, 3))
    assert [g.tolist() for g in got] == [r.tolist() for r in ref]
    with pytest.raises(ValueError, match="must be in range"):
        ember.unravel_index(ember.tensor([6]), (2, 3))
    for r, rep in [(2, False), (3, False), (2, True), (0, False)]:
        _same(ember.combinations(ember.tensor([1, 2, 3]), r, rep),
              torch.combinations(torch.tensor([1, 2, 3]), r, rep))
    x = np.arange(24.0).reshape(2, 4, 3)
    e, t = _both(x)
    for name, arg in [("hsplit", 2), ("vsplit", [1]), ("dsplit", 3)]:
        ours, ref = getattr(ember, name)(e, arg), getattr(torch, name)(t, arg)
        assert len(ours) == len(ref)
        for o, r in zip(ours, ref, strict=True):
            _same(o, r)
    with pytest.raises(RuntimeError, match="not divisible"):
        ember.hsplit(e, 3)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window", "kaiser_window"])
@pytest.mark.parametrize("n, periodic", [(0, True), (1, True), (7, True), (8, False)])
def test_windows_match_torch(name, n, periodic):
    ours = getattr(ember, name)(n, periodic, dtype=ember.float64)
    ref = getattr(torch, name)(n, periodic, dtype=torch.float64)
    _same(ours, ref, rtol=1e-10)


def test_finfo_iinfo_match_torch():
    for e, t in [(ember.float32, torch.float32), (ember.float64, torch.float64),
                 (ember.float16, torch.float16), (ember.bfloat16, torch.bfloat16)]:
        ours, ref = ember.finfo(e), torch.finfo(t)
        for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
            assert getattr(ours, field) == getattr(ref, field), (e, field)
    assert ember.finfo().eps == torch.finfo().eps
    for e, t in [(ember.int8, torch.int8), (ember.int64, torch.int64),
                 (ember.uint8, torch.uint8)]:
        ours, ref = ember.iinfo(e), torch.iinfo(t)
        assert (ours.bits, ours.min, ours.max) == (ref.bits, ref.min, ref.max)
    with pytest.raises(TypeError, match="finfo\\(\\): dtype must be a floating point type"):
        ember.finfo(ember.int32)
    with pytest.raises(TypeError, match="iinfo\\(\\): dtype must be an integer type"):
        ember.iinfo(ember.float32)


def test_constants_predicates_and_inplace_functions():
    assert ember.pi == math.pi and ember.e == math.e and ember.inf == math.inf
    assert math.isnan(ember.nan) and ember.newaxis is None
    t = ember.tensor([0.0, 1.0])
    assert ember.exp_(t) is t and t.tolist() == [1.0, math.e] or np.allclose(
        t.numpy(), [1.0, math.e])
    assert ember.fill(t, 2.0).tolist() == [2.0, 2.0] and t.tolist() != [2.0, 2.0]
    assert ember.zero_(t) is t and t.tolist() == [0.0, 0.0]
    assert not ember.is_complex(t) and ember.is_signed(t) and not ember.is_signed(
        ember.tensor([1], dtype=ember.uint8))
    assert ember.is_nonzero(ember.tensor([3])) and ember.get_device(t) == -1
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        ember.is_nonzero(ember.tensor([1, 2]))


def test_frombuffer_shares_memory():
    buf = bytearray(np.arange(4, dtype=np.float32).tobytes())
    t = ember.frombuffer(buf, dtype=ember.float32, count=3, offset=4)
    assert t.tolist() == [1.0, 2.0, 3.0]
    np.frombuffer(buf, dtype=np.float32)[1] = 9.0
    assert t[0].item() == 9.0


def test_set_printoptions_and_default_device():
    try:
        ember.set_printoptions(precision=2)
        assert repr(ember.tensor([1.23456])) == "tensor([1.23])"
        ember.set_printoptions(sci_mode=True)
        assert "e+00" in repr(ember.tensor([1.5]))
    finally:
        ember.set_printoptions(profile="default")
    assert repr(ember.tensor([1.23456])) == "tensor([1.2346])"
    ember.set_default_device("cpu")
    assert str(ember.get_default_device()) == "cpu"
    with pytest.raises(RuntimeError, match="CPU only"):
        ember.set_default_device("cuda")
    assert repr(ember.channels_last) == "ember.channels_last"


def test_chain_matmul_matches_product():
    a, b, c = (ember.randn(3, 4), ember.randn(4, 5), ember.randn(5, 2))
    np.testing.assert_allclose(ember.chain_matmul(a, b, c).numpy(), (a @ b @ c).numpy(),
                               rtol=1e-5)


@pytest.mark.parity
@pytest.mark.parametrize("kw", [{}, {"n": 2}, {"dim": 0}, {"n": 3, "dim": 1}])
def test_diff_of_bool_is_xor_as_torch(kw):
    a = np.array([[True, False, False, True], [True, True, False, False],
                  [False, True, True, True]])
    got, want = ember.diff(ember.tensor(a), **kw), torch.diff(torch.tensor(a), **kw)
    assert got.dtype == ember.bool and got.tolist() == want.tolist()
    pre = np.array([[True], [False], [True]])
    got = ember.diff(ember.tensor(a), prepend=ember.tensor(pre))
    assert got.tolist() == torch.diff(torch.tensor(a), prepend=torch.tensor(pre)).tolist()


def test_diff_refuses_a_prepend_or_append_of_another_ndim():
    x = ember.zeros(0, 4)
    with pytest.raises(RuntimeError, match="diff expects prepend or append to be the same "
                                           "dimension as input; got 1 dims for an input of 2"):
        ember.diff(x, append=ember.zeros(0))
    with pytest.raises(RuntimeError, match="same dimension as input"):
        torch.diff(torch.zeros(0, 4), append=torch.zeros(0))
    # a 0-d one is expanded along dim (ember only; see docs/DEVIATIONS.md)
    assert ember.diff(ember.tensor([1.0, 3.0]), prepend=ember.tensor(0.0)).tolist() == [1.0, 2.0]


def test_clamp_with_bounds_that_do_not_broadcast_is_a_runtime_error():
    for x in (ember.tensor([[1.0, 2.0, 3.0]]), ember.tensor([[True, False, True]])):
        with pytest.raises(RuntimeError, match=r"clamp: the shapes \[1, 3\] and \[4\] and \[1\] "
                                               "do not broadcast"):
            ember.clamp(x, ember.tensor([-0.5, 0.0, 0.2, 1.0]), ember.tensor([0.5]))
    with pytest.raises(RuntimeError, match="must match the size"):
        torch.clamp(torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([-0.5, 0.0, 0.2, 1.0]))


def test_nextafter_gradient_is_identity_in_input_except_where_equal():
    # d nextafter(x, y)/dx = 1 (one ulp away), 0 where x == y (the result is y); nothing for y
    x = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64, requires_grad=True)
    y = ember.tensor([0.0, 2.0, np.nan], dtype=ember.float64, requires_grad=True)
    out = ember.nextafter(x, y)
    assert out.grad_fn is not None
    out.backward(ember.tensor([5.0, np.inf, 7.0], dtype=ember.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 0.0, 7.0])
    np.testing.assert_array_equal(y.grad.numpy(), [0.0, 0.0, 0.0])
    assert gradcheck(lambda a: ember.nextafter(a, ember.zeros((), dtype=ember.float64)),
                     (ember.tensor([0.5, -2.0], dtype=ember.float64, requires_grad=True),))


def test_out_beside_an_input_that_requires_grad():
    # torch refuses out= for an op it differentiates (nextafter); floor_divide has no derivative
    # in torch, which writes out= and marks it as requiring grad (ember: the result's history)
    x = ember.tensor([1.5, 2.0], dtype=ember.float64, requires_grad=True)
    two = ember.tensor([2.0, 2.0], dtype=ember.float64)
    with pytest.raises(RuntimeError, match=r"nextafter\(\): functions with out=.*requires grad"):
        ember.nextafter(x, two, out=ember.empty(0, dtype=ember.float64))
    out = ember.empty(0, dtype=ember.float64)
    ember.floor_divide(x, two, out=out)
    assert out.requires_grad and out.tolist() == [0.0, 1.0]
    with pytest.raises(RuntimeError, match=r"floor_divide\(\): functions with out=.*requires"):
        ember.floor_divide(x.detach(), two, out=ember.empty(0, dtype=ember.float64,
                                                             requires_grad=True))


def test_printoptions_edgeitems_zero_and_complex_line_width():
    """torch's layout: edgeitems=0 shows a summarised vector as [...] and names every size;
    a complex element takes re + im + 3 characters of the line (", " and "j")."""
    try:
        ember.set_printoptions(threshold=4, edgeitems=0)
        assert repr(ember.arange(10.0)) == "tensor([...], size=(10,))"
        assert repr(ember.ones(2, 3)) == "tensor([...], size=(2, 3))"
        assert repr(ember.tensor([1.0, 2.0])) == "tensor([1., 2.], size=(2,))"
    finally:
        ember.set_printoptions(profile="default")
    z = ember.tensor([1.2346 - 0.6173j, -20.5 + 10.25j, 0.003 - 0.0015j] + [4 - 2j] * 4)
    with ember._tensor_str.printoptions(sci_mode=False):
        assert repr(z).split("\n")[0].count("j") == 4   # 4 per line at width 80 (not 3)


def test_tensor_str_printoptions_context_and_print_opts():
    with ember._tensor_str.printoptions(precision=1, sci_mode=True):
        assert ember._tensor_str.get_printoptions()["precision"] == 1
        assert repr(ember.tensor([1.25])) == "tensor([1.2e+00])"
    assert ember._tensor_str.get_printoptions() == {
        "precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
    try:
        ember._tensor_str.PRINT_OPTS.threshold = 3
        assert repr(ember.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    finally:
        ember.set_printoptions(profile="default")
    with pytest.raises(AttributeError, match="PRINT_OPTS has no option 'width'"):
        ember._tensor_str.PRINT_OPTS.width = 3


def test_sparse_coo_repr_is_torchs_layout():
    """The indices' and values' bodies carry no dtype of their own (the outer suffix names a
    non-default one), an empty part shows its size, and size starts a new line."""
    t = ember.tensor([[0.0, 1.5], [2.0, 0.0]], dtype=ember.float64).to_sparse()
    assert repr(t) == ("tensor(indices=tensor([[0, 1],\n"
                       "                       [1, 0]]),\n"
                       "       values=tensor([1.5000, 2.0000]),\n"
                       "       size=(2, 2), nnz=2, dtype=ember.float64, layout=ember.sparse_coo)")
    empty = ember.sparse_coo_tensor(ember.zeros(2, 0, dtype=ember.int64), ember.zeros(0), (2, 3))
    assert repr(empty) == ("tensor(indices=tensor([], size=(2, 0)),\n"
                           "       values=tensor([], size=(0,)),\n"
                           "       size=(2, 3), nnz=0, layout=ember.sparse_coo)")
