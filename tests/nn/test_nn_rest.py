"""The rest of torch.nn (issue 17): fractional max pooling, Gumbel-softmax, multi-label margin
loss, linear cross-entropy (reference and chunked), adaptive log-softmax, CrossMapLRN2d, lazy
instance norms, the deprecated Container / NLLLoss2d, factory_kwargs and the nn.utils helpers.
Values and gradients are compared with torch 2.13; gradients are also gradchecked in float64."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_close


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


# ---------------------------------------------------------------------------------------------
# fractional max pooling

POOL_CASES = [
    (2, (2, 3, 9, 8), (2, 3), dict(output_size=(4, 5))),
    (2, (2, 3, 9, 8), 2, dict(output_size=(8, 7))),            # output + kernel - 1 == input
    (2, (3, 7, 6), 3, dict(output_ratio=(0.5, 0.6))),          # unbatched
    (3, (2, 2, 7, 8, 9), (2, 3, 2), dict(output_size=(3, 4, 5))),
    (3, (2, 5, 6, 7), (1, 2, 3), dict(output_ratio=(0.6, 0.5, 0.5))),
]


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nd, shape, kernel, size", POOL_CASES)
def test_fractional_max_pool_matches_torch(rng, nd, shape, kernel, size, dtype):
    torch = _torch()
    x = rng.standard_normal(shape).astype(dtype)
    batch = shape[:2] if len(shape) == nd + 2 else (1, shape[0])
    u = rng.random(batch + (nd,)).astype(dtype)
    theirs = getattr(torch.nn.functional, f"fractional_max_pool{nd}d")
    ours = getattr(F, f"fractional_max_pool{nd}d")
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    ty, ti = theirs(tx, kernel, return_indices=True, _random_samples=torch.tensor(u), **size)
    ey, ei = ours(ex, kernel, return_indices=True, _random_samples=ember.tensor(u), **size)
    np.testing.assert_array_equal(ey.detach().numpy(), ty.detach().numpy())
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    weights = np.arange(1.0, ty.numel() + 1, dtype=dtype).reshape(ty.shape)
    (ty * torch.tensor(weights)).sum().backward()
    (ey * ember.tensor(weights)).sum().backward()
    assert_close(ex.grad, tx.grad.numpy())


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_gradcheck_and_gradgradcheck(rng, nd):
    shape = (2, 2, 6, 5) if nd == 2 else (1, 2, 5, 5, 5)
    x = ember.tensor(rng.standard_normal(shape), requires_grad=True)
    u = ember.tensor(rng.random((shape[0], 2, nd)))
    pool = getattr(F, f"fractional_max_pool{nd}d")

    def f(t):
        return pool(t, 2, output_size=3, _random_samples=u)

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_fractional_max_pool_random_windows_are_valid(rng):
    ember.manual_seed(3)
    x = ember.tensor(rng.standard_normal((2, 3, 11, 10)))
    y, idx = F.fractional_max_pool2d_with_indices(x, 3, output_ratio=0.5)
    assert tuple(y.shape) == (2, 3, 5, 5)
    flat = x.reshape(2, 3, -1).numpy()
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.reshape(2, 3, -1).numpy(), -1),
                                  y.reshape(2, 3, -1).numpy())


def test_fractional_max_pool_nan_wins_and_ties_take_the_first():
    x = ember.tensor([[[[1.0, 1.0], [0.0, float("nan")]]]])
    u = ember.full((1, 1, 2), 0.5, dtype=ember.float32)
    y, idx = F.fractional_max_pool2d(x, 2, output_size=1, return_indices=True,
                                     _random_samples=u)
    assert np.isnan(y.item()) and idx.item() == 3
    y, idx = F.fractional_max_pool2d(ember.ones(1, 1, 2, 2), 2, output_size=1,
                                     return_indices=True, _random_samples=u)
    assert idx.item() == 0


def test_fractional_max_pool_errors():
    x = ember.randn(1, 2, 7, 7)
    with pytest.raises(ValueError, match="either an output_size or an output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(RuntimeError, match="pool height 3 too large relative to input height 7"):
        F.fractional_max_pool2d(x, 3, output_size=6)
    with pytest.raises(RuntimeError, match="pool time 2 too large"):   # 3-D is strict
        F.fractional_max_pool3d(ember.randn(1, 1, 5, 6, 7), (2, 1, 2), output_size=(4, 5, 5))
    with pytest.raises(RuntimeError, match="same dtype|input's dtype"):
        F.fractional_max_pool2d(x, 2, output_size=3,
                                _random_samples=ember.rand(1, 2, 2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match=r"_random_samples of shape \(1, 2, 2\)"):
        F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=ember.rand(1, 2, 3))
    with pytest.raises(RuntimeError, match="expected 3-D .* or 4-D"):
        F.fractional_max_pool2d(ember.randn(7, 7), 2, output_size=3)
    with pytest.raises(ValueError, match="either an output size, or a pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
    with pytest.raises(ValueError, match=r"output_ratio must be between 0 and 1 \(got 1.5\)"):
        nn.FractionalMaxPool3d(2, output_ratio=1.5)


def test_fractional_max_pool_module_keeps_fixed_samples_in_state_dict():
    u = ember.tensor([[[0.25, 0.75]]])
    m = nn.FractionalMaxPool2d((2, 2), output_ratio=0.5, return_indices=True,
                               _random_samples=u)
    assert list(m.state_dict()) == ["_random_samples"]
    x = ember.randn(1, 1, 8, 8)
    y1, i1 = m(x)
    y2, i2 = m(x)
    np.testing.assert_array_equal(i1.numpy(), i2.numpy())
    assert m.kernel_size == (2, 2) and m.output_ratio == (0.5, 0.5) and m.output_size is None


# ---------------------------------------------------------------------------------------------
# gumbel_softmax


def test_gumbel_softmax_samples_follow_softmax_of_logits():
    ember.manual_seed(0)
    logits = ember.tensor([1.0, 0.0, -1.0, 2.0])
    draws = F.gumbel_softmax(logits.expand(20000, 4), tau=0.5, hard=True)
    counts = draws.sum(0).numpy()
    expected = 20000 * F.softmax(logits, 0).numpy()
    # chi-square with 3 degrees of freedom: 16.27 is its 0.999 quantile
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 16.27, (counts, expected)
    assert set(np.unique(draws.numpy())) == {0.0, 1.0}


def test_gumbel_softmax_soft_sums_to_one_and_tau_sharpens(rng):
    ember.manual_seed(1)
    x = ember.tensor(rng.standard_normal((500, 6)))
    soft = F.gumbel_softmax(x, tau=1.0)
    assert_close(soft.sum(-1), ember.ones(500, dtype=ember.float64))
    sharp = F.gumbel_softmax(x, tau=0.05)
    assert sharp.max(-1).values.mean().item() > soft.max(-1).values.mean().item()


def test_gumbel_softmax_hard_is_straight_through(rng):
    x = ember.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((3, 5)))
    ember.manual_seed(7)
    hard = F.gumbel_softmax(x, tau=0.7, hard=True, dim=1)
    (hard * w).sum().backward()
    ember.manual_seed(7)
    x2 = x.detach().requires_grad_()
    soft = F.gumbel_softmax(x2, tau=0.7, hard=False, dim=1)
    (soft * w).sum().backward()
    assert_close(x.grad, x2.grad)                          # gradient of the soft sample
    np.testing.assert_array_equal(hard.argmax(1).numpy(), soft.argmax(1).numpy())
    assert_close(hard.sum(1), ember.ones(3, dtype=ember.float64))


def test_gumbel_softmax_gradcheck_with_fixed_noise(rng):
    x = ember.tensor(rng.standard_normal((2, 4)), requires_grad=True)

    def f(t):
        ember.manual_seed(5)       # the same Gumbel noise for every evaluation
        return F.gumbel_softmax(t, tau=0.8, dim=0)

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_gumbel_softmax_edge_cases_and_errors():
    assert F.gumbel_softmax(ember.tensor(2.0), hard=True).item() == 1.0
    assert F.gumbel_softmax(ember.randn(3, 4).double()).dtype == ember.float64
    with pytest.warns(UserWarning, match="eps.*deprecated"):
        F.gumbel_softmax(ember.randn(2, 3), eps=1e-5)
    with pytest.raises(IndexError, match="out of range"):
        F.gumbel_softmax(ember.randn(3, 4), dim=3)
    with pytest.raises(RuntimeError, match="floating-point"):
        F.gumbel_softmax(ember.tensor([1, 2]))


# ---------------------------------------------------------------------------------------------
# multilabel_margin_loss


@pytest.mark.parity
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss_matches_torch(rng, reduction):
    torch = _torch()
    x = rng.standard_normal((4, 5))
    y = np.array([[3, 0, -1, 1, 2], [4, -1, 0, 0, 0], [0, 1, 2, 3, 4], [2, 2, -1, 1, 0]])
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    tl = torch.nn.functional.multilabel_margin_loss(tx, torch.tensor(y), reduction=reduction)
    el = F.multilabel_margin_loss(ex, ember.tensor(y), reduction=reduction)
    assert_close(el, tl.detach().numpy())
    tl.sum().backward()
    el.sum().backward()
    assert_close(ex.grad, tx.grad.numpy())


@pytest.mark.parity
def test_multilabel_margin_loss_unbatched_and_0d_match_torch():
    torch = _torch()
    x, y = [0.1, 0.2, 0.4, 0.8], [3, 0, -1, 1]
    assert_close(F.multilabel_margin_loss(ember.tensor(x), ember.tensor(y)),
                 torch.nn.functional.multilabel_margin_loss(torch.tensor(x),
                                                            torch.tensor(y)).numpy())
    assert F.multilabel_margin_loss(ember.tensor(0.5), ember.tensor(0)).item() == 0.0
    # a target listed twice counts twice; the hinge is 0 (and flat) exactly at margin 0
    assert F.multilabel_margin_loss(ember.tensor([[1.0, 2.0]]),
                                    ember.tensor([[1, 1]])).item() == 0.0


def test_multilabel_margin_loss_gradcheck(rng):
    x = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    y = ember.tensor([[3, 0, -1, 1], [1, -1, 0, 0], [0, 1, 2, 3]])
    assert gradcheck(lambda t: F.multilabel_margin_loss(t, y), (x,))
    assert gradgradcheck(lambda t: F.multilabel_margin_loss(t, y, reduction="none"), (x,))


def test_multilabel_margin_loss_errors():
    x = ember.randn(1, 4)
    with pytest.raises(RuntimeError, match=r"target values must lie in \[-1, 3\]"):
        F.multilabel_margin_loss(x, ember.tensor([[5, 0, -1, 1]]))
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multilabel_margin_loss(x, ember.tensor([[1, 0, -1]]))
    with pytest.raises(RuntimeError, match="non-empty vector or matrix"):
        F.multilabel_margin_loss(ember.zeros(2, 3, 4), ember.zeros(2, 3, 4, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="Long"):
        nn.MultiLabelMarginLoss()(x, ember.zeros(1, 4))


# ---------------------------------------------------------------------------------------------
# linear_cross_entropy


def _lce(lib, x, w, b, t, class_weight=None, **kw):
    X, W = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
    B = lib.tensor(b, requires_grad=True) if b is not None else None
    cw = lib.tensor(class_weight) if class_weight is not None else None
    loss = lib.nn.functional.linear_cross_entropy(X, W, lib.tensor(t), linear_bias=B, weight=cw,
                                                  **kw)
    loss.sum().backward()
    grads = [X.grad, W.grad] + ([B.grad] if B is not None else [])
    return [loss.detach().numpy()] + [g.numpy() for g in grads]


LCE_CASES = [
    dict(),
    dict(class_weight=True, label_smoothing=0.2),
    dict(reduction="sum", label_smoothing=0.3, ignore_index=2),
    dict(reduction="none"),
    dict(probabilities=True, class_weight=True, label_smoothing=0.1),
]


@pytest.mark.parity
@pytest.mark.parametrize("chunk", [None, 4, "auto"])
@pytest.mark.parametrize("case", LCE_CASES)
def test_linear_cross_entropy_matches_torch_reference(rng, case, chunk):
    torch = _torch()
    case = dict(case)
    n, c, d = 13, 7, 5
    x, w, b = rng.standard_normal((n, d)), rng.standard_normal((c, d)), rng.standard_normal(c)
    if case.pop("probabilities", False):
        t = rng.random((n, c))
        t /= t.sum(1, keepdims=True)
    else:
        t = rng.integers(0, c, n)
        t[3] = case.get("ignore_index", -100)
    cw = rng.random(c) if case.pop("class_weight", False) else None
    ref = _lce(torch, x, w, b, t, cw, **case)
    options = None
    if chunk is not None:
        options = nn.LinearCrossEntropyOptions(**(
            {"batch_chunk_size": chunk} if isinstance(chunk, int) else {}))
    ours = _lce(ember, x, w, b, t, cw, options=options, **case)
    for a, r in zip(ours, ref, strict=True):
        assert_close(a, r, rtol=1e-10, atol=1e-12)


@pytest.mark.parity
def test_linear_cross_entropy_k_dimensional_and_unbatched_match_torch(rng):
    torch = _torch()
    x, w, b = rng.standard_normal((3, 5)), rng.standard_normal((4, 2, 5)), rng.standard_normal(
        (4, 2))
    t = rng.integers(0, 4, (3, 2))
    for a, r in zip(_lce(ember, x, w, b, t), _lce(torch, x, w, b, t), strict=True):
        assert_close(a, r)
    with pytest.warns(UserWarning, match="reference path"):
        ours = _lce(ember, x, w, b, t, options=nn.LinearCrossEntropyOptions())
    assert_close(ours[0], _lce(torch, x, w, b, t)[0])
    x1, w1 = rng.standard_normal(5), rng.standard_normal((4, 5))
    for a, r in zip(_lce(ember, x1, w1, None, np.int64(2)), _lce(torch, x1, w1, None,
                                                                 np.int64(2)), strict=True):
        assert_close(a, r)


def test_linear_cross_entropy_gradcheck_both_paths(rng):
    x = ember.tensor(rng.standard_normal((6, 3)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    t = ember.tensor(rng.integers(0, 4, 6))
    opts = nn.LinearCrossEntropyOptions(batch_chunk_size=4)
    assert gradcheck(lambda a, b: F.linear_cross_entropy(a, b, t, label_smoothing=0.1), (x, w))
    assert gradgradcheck(lambda a, b: F.linear_cross_entropy(a, b, t), (x, w))
    assert gradcheck(lambda a, b: F.linear_cross_entropy(a, b, t, options=opts), (x, w))


def test_linear_cross_entropy_errors_and_options():
    x, w, t = ember.randn(2, 5), ember.randn(10, 5), ember.tensor([1, 2])
    with pytest.raises(RuntimeError, match="got 5 and 4, respectively"):
        F.linear_cross_entropy(x, w[:, :4], t)
    with pytest.raises(ValueError, match="invalid acc_policy: 'x'"):
        nn.LinearCrossEntropyOptions(acc_policy="x")
    with pytest.raises(ValueError, match="invalid chunking_method: 'bad'"):
        nn.LinearCrossEntropyOptions(chunking_method="bad")
    with pytest.raises(ValueError, match="batch_chunk_size must be positive int or None, got 0"):
        nn.LinearCrossEntropyOptions(batch_chunk_size=0)
    with pytest.raises(ValueError, match="disagree"):
        F.linear_cross_entropy(x, w, t, options=nn.LinearCrossEntropyOptions(
            batch_chunk_size=1, chunking_method="aspect_ratio:2"))
    assert nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:3").acc_policy == "auto"
    with pytest.raises(RuntimeError, match=r"expected weight shape to be \(10,\)"):
        nn.LinearCrossEntropyLoss(5, 10, weight=ember.ones(3))
    with pytest.raises(RuntimeError, match="label_smoothing to be in range"):
        nn.LinearCrossEntropyLoss(5, 10, label_smoothing=1.5)


@pytest.mark.parity
def test_linear_cross_entropy_loss_module_matches_torch(rng):
    torch = _torch()
    kw = dict(out_features=(4, 3), bias=True, label_smoothing=0.05)
    ours, theirs = nn.LinearCrossEntropyLoss(5, 10, **kw), torch.nn.LinearCrossEntropyLoss(
        5, 10, **kw)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    assert repr(ours) == repr(theirs)
    x, t = rng.standard_normal((2, 5)).astype(np.float32), rng.integers(0, 10, (2, 4, 3))
    assert_close(ours(ember.tensor(x), ember.tensor(t)),
                 theirs(torch.tensor(x), torch.tensor(t)).detach().numpy(), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# AdaptiveLogSoftmaxWithLoss


def _asm_pair(torch):
    ours = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True).double()
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0,
                                                 head_bias=True).double()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    return ours, theirs


@pytest.mark.parity
def test_adaptive_log_softmax_matches_torch(rng):
    torch = _torch()
    ours, theirs = _asm_pair(torch)
    x, y = rng.standard_normal((6, 8)), np.array([0, 4, 7, 9, 2, 5])
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, to = ours(ex, ember.tensor(y)), theirs(tx, torch.tensor(y))
    assert_close(eo.output, to.output.detach().numpy())
    assert_close(eo.loss, to.loss.detach().numpy())
    eo.loss.backward()
    to.loss.backward()
    assert_close(ex.grad, tx.grad.numpy())
    tparams = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p.grad, tparams[name].grad.numpy(), msg=name)
    assert_close(ours.log_prob(ex), theirs.log_prob(tx).detach().numpy())
    np.testing.assert_array_equal(ours.predict(ex).numpy(), theirs.predict(tx).numpy())
    assert_close(ours.log_prob(ex).exp().sum(1), ember.ones(6, dtype=ember.float64))
    one = ours(ex[0], ember.tensor(4))
    assert one.output.shape == () and one.loss.shape == ()
    assert_close(one.output, theirs(tx[0], torch.tensor(4)).output.detach().numpy())


def test_adaptive_log_softmax_gradcheck(rng):
    m = nn.AdaptiveLogSoftmaxWithLoss(6, 8, [2, 5], div_value=2.0).double()
    x = ember.tensor(rng.standard_normal((5, 6)), requires_grad=True)
    y = ember.tensor([0, 3, 7, 1, 5])
    assert gradcheck(lambda t: m(t, y).output, (x,))
    assert gradgradcheck(lambda t: m.log_prob(t), (x,))


def test_adaptive_log_softmax_errors():
    with pytest.raises(ValueError, match="unique, positive integers sorted"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])
    with pytest.raises(ValueError, match="unique, positive integers sorted"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10])
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6])
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\]"):
        m(ember.randn(4, 8), ember.tensor([0, 5, 9, 10]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        m(ember.randn(4, 8), ember.tensor([0, 5, 9]))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        m(ember.randn(2, 3, 8), ember.zeros(2, 3, dtype=ember.int64))


# ---------------------------------------------------------------------------------------------
# CrossMapLRN2d, lazy instance norms, deprecated names


@pytest.mark.parity
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 9])
def test_cross_map_lrn2d_forward_matches_torch(rng, size):
    torch = _torch()
    x = rng.standard_normal((2, 7, 3, 3))
    ours = nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=2)(ember.tensor(x))
    theirs = torch.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=2)(torch.tensor(x))
    assert_close(ours, theirs.numpy())
    assert repr(nn.CrossMapLRN2d(size)) == repr(torch.nn.CrossMapLRN2d(size))


def test_cross_map_lrn2d_gradient_is_exact(rng):
    x = ember.tensor(rng.standard_normal((1, 6, 2, 2)), requires_grad=True)
    layer = nn.CrossMapLRN2d(3, alpha=0.5, k=2)
    assert gradcheck(layer, (x,))
    assert gradgradcheck(layer, (x,))
    with pytest.raises(ValueError, match="Expected input to be 4D, got 3D instead"):
        layer(ember.randn(5, 4, 4))


@pytest.mark.parity
@pytest.mark.parametrize("name, shape", [("LazyInstanceNorm1d", (2, 3, 5)),
                                         ("LazyInstanceNorm2d", (2, 3, 4, 4)),
                                         ("LazyInstanceNorm3d", (2, 3, 2, 3, 3))])
def test_lazy_instance_norm_matches_torch(rng, name, shape):
    torch = _torch()
    ours, theirs = getattr(nn, name)(), getattr(torch.nn, name)()
    assert repr(ours) == repr(theirs)
    x = rng.standard_normal(shape).astype(np.float32)
    assert_close(ours(ember.tensor(x)), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                 atol=1e-5)
    assert type(ours).__name__ == type(theirs).__name__ == name.replace("Lazy", "")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert_close(ours.running_var, theirs.running_var.numpy(), rtol=1e-5, atol=1e-6)
    assert getattr(ember.nn.modules.instancenorm, name) is getattr(nn, name)


def test_container_and_nllloss2d_warn_and_work():
    with pytest.warns(FutureWarning, match="Container is deprecated"):
        c = nn.Container(proj=nn.Linear(2, 3))
    assert list(c.state_dict()) == ["proj.weight", "proj.bias"]
    with pytest.warns(FutureWarning, match="NLLLoss2d is deprecated"):
        loss = nn.NLLLoss2d(ignore_index=1)
    assert isinstance(loss, nn.NLLLoss) and loss.ignore_index == 1
    x = F.log_softmax(ember.randn(2, 3, 4, 4), 1)
    t = ember.randint(0, 3, (2, 4, 4))
    assert_close(loss(x, t), F.nll_loss(x, t, ignore_index=1))


@pytest.mark.parity
def test_factory_kwargs_matches_torch():
    torch = _torch()
    cases = [None, {"device": "cpu"}, {"factory_kwargs": {"dtype": 1}, "device": "cpu"},
             {"device": None, "dtype": None, "memory_format": None}]
    for case in cases:
        assert nn.factory_kwargs(case) == torch.nn.factory_kwargs(case)
    with pytest.raises(TypeError, match="unexpected kwargs"):
        nn.factory_kwargs({"foo": 1})
    with pytest.raises(TypeError, match="device specified twice"):
        nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"device": "cpu"}})


# ---------------------------------------------------------------------------------------------
# nn.utils


def test_convert_conv_weight_memory_format_keeps_values_and_parameters():
    net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.Sequential(nn.ConvTranspose2d(3, 2, 2)),
                        nn.Conv3d(1, 1, 1), nn.Linear(2, 2))
    before = {k: v.clone() for k, v in net.state_dict().items()}
    params = list(net.parameters())
    assert nn.utils.convert_conv2d_weight_memory_format(net, ember.channels_last) is net
    assert nn.utils.convert_conv3d_weight_memory_format(net, ember.channels_last_3d) is net
    assert all(a is b for a, b in zip(params, net.parameters(), strict=True))
    for k, v in net.state_dict().items():
        assert_close(v, before[k], rtol=0, atol=0)
    assert net[0].weight.is_contiguous(memory_format=ember.channels_last)


def test_skip_init_builds_the_module_with_requested_dtype():
    layer = nn.utils.skip_init(nn.Linear, 3, 4, bias=True, dtype=ember.float64)
    assert type(layer) is nn.Linear and tuple(layer.weight.shape) == (4, 3)
    assert layer.weight.dtype == ember.float64 and layer.weight.requires_grad
    assert layer.weight.grad_fn is None

    class NoDevice(nn.Module):
        pass

    with pytest.raises(RuntimeError, match="must support a 'device' arg"):
        nn.utils.skip_init(NoDevice)
    with pytest.raises(TypeError, match="must be a class"):
        nn.utils.skip_init(lambda: 1)


def test_skip_init_builds_on_meta_then_allocates_on_the_device():
    # as torch: the module is constructed on 'meta' (its initializers compute nothing), then
    # to_empty gives it storage on the requested device (the CPU unless device= says)
    seen = []

    class Recording(nn.Module):
        def __init__(self, n, device=None):
            super().__init__()
            self.w = nn.Parameter(ember.empty(n, device=device))
            self.register_buffer("b", ember.zeros(2, device=device))
            seen.append((self.w.device.type, self.b.device.type))

    m = nn.utils.skip_init(Recording, 3)
    assert seen == [("meta", "meta")]
    assert (m.w.device.type, m.b.device.type) == ("cpu", "cpu") and not m.w.is_meta
    assert m.w.shape == (3,) and m.w.requires_grad and isinstance(m.w, nn.Parameter)
    m.w.data.fill_(1.5)   # real storage
    assert m.w.sum().item() == 4.5
    assert nn.utils.skip_init(Recording, 2, device="meta").w.is_meta


def test_nothing_warns_at_import():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.FractionalMaxPool2d(2, output_size=3)
        nn.LinearCrossEntropyOptions()
