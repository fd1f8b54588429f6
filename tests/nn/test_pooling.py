"""Pooling: max (indices, ceil_mode, dilation), average, adaptive, unpooling, LP pooling."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn import functional as F
from ember.nn.modules import pooling as P


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _compare(rng, ours_fn, ref_fn, x, tol=1e-12):
    torch = _torch()
    ours, ref = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = ours_fn(ours), ref_fn(ref)
    if isinstance(ty, tuple):
        np.testing.assert_array_equal(y[1].numpy(), ty[1].numpy())  # indices
        y, ty = y[0], ty[0]
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    g = rng.standard_normal(tuple(ty.shape))
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=tol, atol=tol)


MAX2D = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
         dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
         dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1)),
         dict(kernel_size=3, stride=2, return_indices=True, ceil_mode=True)]


@pytest.mark.parity
@pytest.mark.parametrize("kw", MAX2D)
def test_max_pool2d_matches_torch(rng, kw):
    torch = _torch()
    x = rng.standard_normal((2, 3, 9, 8))
    _compare(rng, lambda t: F.max_pool2d(t, **kw),
             lambda t: torch.nn.functional.max_pool2d(t, **kw), x)


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                     return_indices=True),
                                dict(kernel_size=2, dilation=2, return_indices=True)])
def test_max_pool1d_matches_torch(rng, kw):
    torch = _torch()
    x = rng.standard_normal((2, 3, 10))
    _compare(rng, lambda t: F.max_pool1d(t, **kw),
             lambda t: torch.nn.functional.max_pool1d(t, **kw), x)


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                     count_include_pad=False),
                                dict(kernel_size=(3, 2), padding=(1, 0), divisor_override=4)])
def test_avg_pool2d_matches_torch(rng, kw):
    torch = _torch()
    x = rng.standard_normal((2, 3, 9, 8))
    _compare(rng, lambda t: F.avg_pool2d(t, **kw),
             lambda t: torch.nn.functional.avg_pool2d(t, **kw), x)


@pytest.mark.parity
def test_avg_pool1d_matches_torch(rng):
    torch = _torch()
    kw = dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
    _compare(rng, lambda t: F.avg_pool1d(t, **kw),
             lambda t: torch.nn.functional.avg_pool1d(t, **kw), rng.standard_normal((2, 3, 10)))


@pytest.mark.parity
@pytest.mark.parametrize("name,size,shape", [
    ("adaptive_avg_pool2d", (3, 4), (2, 3, 7, 9)), ("adaptive_avg_pool2d", (None, 2), (3, 7, 9)),
    ("adaptive_avg_pool1d", 4, (2, 3, 10)), ("adaptive_max_pool2d", (3, 4), (2, 3, 7, 9)),
    ("adaptive_max_pool1d", 3, (2, 3, 10))])
def test_adaptive_pools_match_torch(rng, name, size, shape):
    torch = _torch()
    x = rng.standard_normal(shape)
    _compare(rng, lambda t: getattr(F, name)(t, size),
             lambda t: getattr(torch.nn.functional, name)(t, size), x)
    if "max" in name:
        _compare(rng, lambda t: getattr(F, name)(t, size, return_indices=True),
                 lambda t: getattr(torch.nn.functional, name)(t, size, return_indices=True), x)


@pytest.mark.parity
def test_lp_pool_matches_torch(rng):
    torch = _torch()
    x = np.abs(rng.standard_normal((2, 3, 6, 6))) + 0.1
    _compare(rng, lambda t: F.lp_pool2d(t, 3, 2), lambda t: torch.nn.functional.lp_pool2d(t, 3, 2),
             x, tol=1e-10)
    _compare(rng, lambda t: F.lp_pool1d(t, 2, 3, 2),
             lambda t: torch.nn.functional.lp_pool1d(t, 2, 3, 2), x[0], tol=1e-10)


@pytest.mark.parity
def test_max_unpool_matches_torch(rng):
    torch = _torch()
    x = rng.standard_normal((2, 3, 7, 7))
    y, idx = F.max_pool2d(ember.tensor(x), 2, return_indices=True)
    ty, tidx = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    _compare(rng, lambda t: F.max_unpool2d(t, idx, 2, output_size=(7, 7)),
             lambda t: torch.nn.functional.max_unpool2d(t, tidx, 2, output_size=(7, 7)),
             y.numpy())
    x1 = rng.standard_normal((2, 3, 8))
    y1, i1 = F.max_pool1d(ember.tensor(x1), 2, return_indices=True)
    ty1, ti1 = torch.nn.functional.max_pool1d(torch.tensor(x1), 2, return_indices=True)
    _compare(rng, lambda t: F.max_unpool1d(t, i1, 2),
             lambda t: torch.nn.functional.max_unpool1d(t, ti1, 2), y1.numpy())


@pytest.mark.parity
@pytest.mark.parametrize("name,args,kw,shape", [
    ("MaxPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True), (2, 3, 8, 8)),
    ("MaxPool1d", (2,), dict(), (3, 8)),
    ("AvgPool2d", (3,), dict(stride=1, count_include_pad=False, padding=1), (2, 3, 5, 5)),
    ("AvgPool1d", (2,), dict(), (2, 3, 8)),
    ("AdaptiveAvgPool2d", ((1, 1),), dict(), (2, 3, 5, 5)),
    ("AdaptiveAvgPool1d", (3,), dict(), (2, 3, 8)),
    ("AdaptiveMaxPool2d", (2,), dict(), (2, 3, 5, 5)),
    ("AdaptiveMaxPool1d", (3,), dict(), (2, 3, 8)),
    ("LPPool2d", (2, 2), dict(), (2, 3, 4, 4)),
    ("LPPool1d", (2, 2), dict(), (2, 3, 4)),
])
def test_pool_modules_match_torch(rng, name, args, kw, shape):
    torch = _torch()
    ours, ref = getattr(P, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
    assert repr(ours) == repr(ref)
    x = np.abs(rng.standard_normal(shape)) + 0.1
    _compare(rng, ours, ref, x, tol=1e-10)


def test_max_pool_module_return_indices_round_trip_with_unpool():
    pool, unpool = P.MaxPool2d(2, return_indices=True), P.MaxUnpool2d(2)
    x = ember.randn(1, 2, 4, 4)
    y, idx = pool(x)
    assert idx.dtype == ember.int64
    back = unpool(y, idx)
    # every pooled maximum is back in its place and the rest is zero
    mask = back.numpy() != 0
    np.testing.assert_array_equal(back.numpy()[mask], x.numpy()[mask])
    assert mask.sum() == y.numel()


def test_max_pool2d_gradcheck_and_double_backward(rng):
    # distinct values so that the argmax is stable under finite differences
    x = ember.tensor(rng.permutation(50).reshape(1, 2, 5, 5) / 7.0, requires_grad=True)
    fn = lambda t: F.max_pool2d(t, 3, 2, 1, ceil_mode=True)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_avg_and_adaptive_pool_gradcheck(rng):
    x = ember.tensor(rng.standard_normal((1, 2, 5, 4)), requires_grad=True)
    assert gradcheck(lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True), (x,))
    assert gradgradcheck(lambda t: F.avg_pool2d(t, 2, 1, count_include_pad=False), (x,))
    assert gradcheck(lambda t: F.adaptive_avg_pool2d(t, (2, 3)), (x,))
    assert gradgradcheck(lambda t: F.adaptive_avg_pool2d(t, (3, 2)), (x,))
    x1 = ember.tensor(rng.standard_normal((2, 6)), requires_grad=True)
    assert gradcheck(lambda t: F.max_unpool1d(*F.max_pool1d(t, 2, return_indices=True), 2),
                     (x1,))


def test_pool_float32_and_noncontiguous(rng):
    x = ember.tensor(rng.standard_normal((2, 3, 6, 8)).astype(np.float32)).transpose(2, 3)
    y = F.max_pool2d(x, 2)
    assert y.dtype == ember.float32
    np.testing.assert_array_equal(y.numpy(), F.max_pool2d(x.contiguous(), 2).numpy())


def test_pool_errors():
    with pytest.raises(RuntimeError, match=r"max_pool2d: expected 3-D .* or 4-D"):
        F.max_pool2d(ember.randn(4, 4), 2)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(ember.randn(1, 1, 4, 4), 2, padding=2)
    with pytest.raises(RuntimeError, match="output size is too small"):
        F.avg_pool2d(ember.randn(1, 1, 2, 2), 3)
    with pytest.raises(RuntimeError, match="floating.point"):
        F.avg_pool2d(ember.ones(1, 1, 4, 4, dtype=ember.int64), 2)
    y, idx = F.max_pool2d(ember.randn(1, 1, 4, 4), 2, return_indices=True)
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool2d(y, idx * 100, 2)
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool2d(y, idx, 2, output_size=(9, 9))


def test_pools_on_empty_batch():
    x = ember.randn(0, 3, 4, 4, requires_grad=True)
    for fn in (lambda t: F.max_pool2d(t, 2), lambda t: F.avg_pool2d(t, 2),
               lambda t: F.adaptive_avg_pool2d(t, 3), lambda t: F.adaptive_max_pool2d(t, 3)):
        y = fn(x)
        assert y.shape[0] == 0 and y.shape[1] == 3
        y.sum().backward()
        assert tuple(x.grad.shape) == (0, 3, 4, 4)
