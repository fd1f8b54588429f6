"""Loss functions vs torch in every reduction (values and gradients), cross-entropy options,
numerical stability, double backward, bad targets."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember.autograd import gradcheck, gradgradcheck

F = nn.functional
REDUCTIONS = ["none", "mean", "sum"]


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _compare(name, args, kwargs=None, diff=(0,), rtol=1e-6, atol=1e-8):
    """Run ``nn.<name>(**kwargs)`` on ember and torch with the same float64 args; compare the
    loss and the gradients of the args listed in ``diff``."""
    torch = _torch()
    kwargs = kwargs or {}
    ours_args, ref_args = [], []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            grad = i in diff
            ours_args.append(ember.tensor(a, requires_grad=grad))
            ref_args.append(torch.tensor(a, requires_grad=grad))
        else:
            ours_args.append(a)
            ref_args.append(a)
    conv = {k: (torch.from_numpy(v) if isinstance(v, np.ndarray) else v)
            for k, v in kwargs.items()}
    ours_kw = {k: (ember.tensor(v) if isinstance(v, np.ndarray) else v)
               for k, v in kwargs.items()}
    out = getattr(nn, name)(**ours_kw)(*ours_args)
    ref = getattr(torch.nn, name)(**conv)(*ref_args)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=rtol,
                               atol=atol, err_msg=name)
    g = np.cos(np.arange(max(ref.numel(), 1))).reshape(tuple(ref.shape))
    out.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    for i in diff:
        np.testing.assert_allclose(ours_args[i].grad.numpy(), ref_args[i].grad.numpy(),
                                   rtol=rtol, atol=atol, err_msg=f"{name} grad of arg {i}")


@pytest.fixture
def data(rng):
    return {
        "x": rng.standard_normal((4, 5)), "y": rng.standard_normal((4, 5)),
        "p": rng.uniform(0.05, 0.95, (4, 5)), "t": rng.uniform(0, 1, (4, 5)),
        "sign": rng.choice([-1.0, 1.0], 4), "idx": np.array([1, 0, 4, 2]),
        "v": rng.standard_normal(4), "w": rng.standard_normal(4),
    }


@pytest.mark.parity
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_elementwise_losses_match_torch(data, reduction):
    x, y, p, t = data["x"], data["y"], data["p"], data["t"]
    r = {"reduction": reduction}
    _compare("MSELoss", (x, y), r, diff=(0, 1))
    _compare("L1Loss", (x, y), r, diff=(0, 1))
    _compare("SmoothL1Loss", (x * 2, y), {**r, "beta": 0.5}, diff=(0, 1))
    _compare("SmoothL1Loss", (x * 2, y), {**r, "beta": 0.0})
    _compare("HuberLoss", (x * 2, y), {**r, "delta": 0.7}, diff=(0, 1))
    _compare("BCELoss", (p, t), r, diff=(0, 1))
    _compare("BCELoss", (p, t), {**r, "weight": np.abs(data["w"])[:, None] * np.ones(5)})
    _compare("BCEWithLogitsLoss", (x * 5, t), r, diff=(0, 1))
    _compare("BCEWithLogitsLoss", (x * 5, t), {**r, "pos_weight": np.linspace(0.5, 2, 5),
                                                "weight": np.linspace(1, 2, 5)})
    _compare("PoissonNLLLoss", (x, t * 3), r)
    _compare("PoissonNLLLoss", (p, t * 3), {**r, "log_input": False, "full": True})
    _compare("GaussianNLLLoss", (x, y, p), r, diff=(0, 1, 2))
    _compare("GaussianNLLLoss", (x, y, p[:, :1]), {**r, "full": True}, diff=(0, 2))
    _compare("MultiLabelSoftMarginLoss", (x, (t > 0.5) * 1.0), r)
    _compare("SoftMarginLoss", (x, np.sign(y)), r)
    _compare("HingeEmbeddingLoss", (data["v"], data["sign"]), {**r, "margin": 0.5})
    _compare("MarginRankingLoss", (data["v"], data["w"], data["sign"]), {**r, "margin": 0.1},
             diff=(0, 1))
    _compare("CosineEmbeddingLoss", (x, y, data["sign"]), {**r, "margin": 0.2}, diff=(0, 1))
    _compare("TripletMarginLoss", (x, y, p), {**r, "margin": 2.0}, diff=(0, 1, 2))
    _compare("TripletMarginLoss", (x, y, p), {**r, "p": 1.0, "swap": True}, diff=(0, 1, 2))
    _compare("MultiMarginLoss", (x, data["idx"]), {**r, "p": 2, "margin": 0.5})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # 'mean' KL reduction warning
        logp = np.log(p / p.sum(1, keepdims=True))
        _compare("KLDivLoss", (logp, t / t.sum(1, keepdims=True)), r, diff=(0, 1))
        _compare("KLDivLoss", (logp, logp[::-1].copy()), {**r, "log_target": True}, diff=(0, 1))


@pytest.mark.parity
def test_kl_batchmean_and_weighted_regression_match_torch(data):
    torch = _torch()
    x, y, t = data["x"], data["y"], data["t"]
    _compare("KLDivLoss", (x, t), {"reduction": "batchmean"})
    for name in ("mse_loss", "l1_loss", "huber_loss"):
        for reduction in REDUCTIONS:
            ours = getattr(F, name)(ember.tensor(x), ember.tensor(y), reduction=reduction,
                                    weight=ember.tensor(t))
            ref = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(y),
                                                     reduction=reduction,
                                                     weight=torch.tensor(t))
            np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-10, err_msg=name)


CE_CASES = [
    {}, {"label_smoothing": 0.2}, {"ignore_index": 4}, {"weight": "w"},
    {"weight": "w", "label_smoothing": 0.1, "ignore_index": 1},
]


@pytest.mark.parity
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", range(len(CE_CASES)))
def test_cross_entropy_and_nll_match_torch(rng, reduction, case):
    kw = dict(CE_CASES[case])
    if kw.get("weight") == "w":
        kw["weight"] = rng.uniform(0.5, 2.0, 5)
    kw["reduction"] = reduction
    x = rng.standard_normal((6, 5)) * 3
    target = np.array([0, 4, 1, 1, 3, 4])
    _compare("CrossEntropyLoss", (x, target), kw, rtol=1e-6)
    x3 = rng.standard_normal((2, 5, 3, 2))  # (N, C, d1, d2)
    t3 = rng.integers(0, 5, (2, 3, 2))
    _compare("CrossEntropyLoss", (x3, t3), kw, rtol=1e-6)
    if "label_smoothing" not in kw:
        logp = x - np.log(np.exp(x).sum(1, keepdims=True))
        _compare("NLLLoss", (logp, target), kw)
        _compare("NLLLoss", (x3, t3), kw)


@pytest.mark.parity
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probabilities_and_unbatched_match_torch(rng, reduction):
    x = rng.standard_normal((4, 3, 2))
    probs = rng.uniform(0, 1, (4, 3, 2))
    probs /= probs.sum(1, keepdims=True)
    _compare("CrossEntropyLoss", (x, probs), {"reduction": reduction}, diff=(0, 1))
    _compare("CrossEntropyLoss", (x, probs), {"reduction": reduction, "label_smoothing": 0.3,
                                              "weight": np.array([1.0, 2.0, 0.5])})
    _compare("CrossEntropyLoss", (rng.standard_normal(5), np.array(3)),
             {"reduction": reduction})


def test_cross_entropy_float32_kernel_close_to_float64(rng):
    x = rng.standard_normal((64, 10)) * 4
    t = rng.integers(0, 10, 64)
    a = ember.tensor(x.astype(np.float32), requires_grad=True)
    b = ember.tensor(x, requires_grad=True)
    F.cross_entropy(a, ember.tensor(t), label_smoothing=0.1).backward()
    F.cross_entropy(b, ember.tensor(t), label_smoothing=0.1).backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-7)


def test_cross_entropy_double_backward_uses_composite(rng):
    x = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    t = ember.tensor([0, 3, 2])
    w = ember.tensor([1.0, 2.0, 0.5, 1.5], dtype=ember.float64)
    for kw in ({}, {"label_smoothing": 0.2, "weight": w}, {"reduction": "none"},
               {"ignore_index": 3, "reduction": "sum"}):
        assert gradcheck(lambda z, kw=kw: F.cross_entropy(z, t, **kw), (x,))
        assert gradgradcheck(lambda z, kw=kw: F.cross_entropy(z, t, **kw), (x,))


def test_losses_gradgradcheck(rng):
    x = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    y = ember.tensor(rng.standard_normal((3, 4)))
    p = ember.tensor(rng.uniform(0.1, 0.9, (3, 4)), requires_grad=True)
    for fn in (lambda a: F.mse_loss(a, y), lambda a: F.binary_cross_entropy_with_logits(a, p),
               lambda a: F.nll_loss(F.log_softmax(a, 1), ember.tensor([0, 1, 2])),
               lambda a: F.smooth_l1_loss(a, y, beta=0.5)):
        assert gradgradcheck(fn, (x,))
    assert gradgradcheck(lambda a: F.binary_cross_entropy(a, y.sigmoid()), (p,))


def test_cross_entropy_stable_for_huge_logits():
    x = ember.tensor([[1e4, 0.0, -1e4], [0.0, 1e30, 0.0]], requires_grad=True)
    loss = F.cross_entropy(x, ember.tensor([0, 1]))
    assert loss.item() == 0.0
    loss.backward()
    assert np.isfinite(x.grad.numpy()).all()
    logits = ember.tensor([[-1e4, 1e4]], requires_grad=True)
    bce = F.binary_cross_entropy_with_logits(logits, ember.tensor([[1.0, 0.0]]))
    np.testing.assert_allclose(bce.item(), 1e4, rtol=1e-6)
    bce.backward()
    assert np.isfinite(logits.grad.numpy()).all()


def test_cross_entropy_all_ignored_mean_is_nan_like_torch():
    loss = F.cross_entropy(ember.randn(2, 3), ember.tensor([-100, -100]))
    assert np.isnan(loss.item())


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_kernel_edge_shapes_match_torch(rng, dtype, reduction):
    # the one-kernel nll_loss (NOTE [Negative log-likelihood in one kernel]): unbatched, an
    # empty batch, a non-contiguous input, ignored rows, float32 and float64
    torch = _torch()
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 0}
    # (leaf data, targets, whether the input is the leaf's transpose: a non-contiguous input)
    cases = [(rng.standard_normal(5), np.array(3), False),
             (rng.standard_normal((0, 5)), np.zeros(0, int), False),
             (rng.standard_normal((5, 7)), np.array([0, -100, 4, 4, 2, -100, 1]), True),
             (rng.standard_normal((3, 5, 4)), np.array([[0, 1, -100, 4]] * 3), False)]
    for x, t, transposed in cases:
        x = x.astype(dtype)
        a = ember.tensor(x, requires_grad=True)
        b = torch.tensor(x, requires_grad=True)
        la = F.nll_loss(a.t() if transposed else a, ember.tensor(t), reduction=reduction)
        lb = torch.nn.functional.nll_loss(b.t() if transposed else b, torch.tensor(t),
                                          reduction=reduction)
        assert la.dtype == a.dtype and tuple(la.shape) == tuple(lb.shape)
        np.testing.assert_allclose(la.detach().numpy(), lb.detach().numpy(), equal_nan=True,
                                   **tol)
        if x.size:
            g = rng.standard_normal(tuple(lb.shape)).astype(dtype)
            la.backward(ember.tensor(g))
            lb.backward(torch.tensor(g))
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol)


def test_nll_loss_double_backward_and_errors(rng):
    x = ember.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    t = ember.tensor([2, -100, 0, 1])
    w = ember.tensor([0.5, 2.0, 1.5], dtype=ember.float64)
    for kw in ({}, {"weight": w}, {"reduction": "sum"}, {"reduction": "none", "weight": w}):
        assert gradcheck(lambda z, kw=kw: F.nll_loss(z, t, **kw), (x,))
        assert gradgradcheck(lambda z, kw=kw: F.nll_loss(z, t, **kw), (x,))
    # the gradient is linear in the incoming one: its own backward is nll_loss of gg
    g = ember.tensor(rng.standard_normal(4), requires_grad=True)
    assert gradcheck(lambda z, g: ember.autograd.grad(F.nll_loss(z, t, reduction="none"), z, g,
                                                      create_graph=True)[0], (x, g))
    assert np.isnan(F.nll_loss(ember.randn(2, 3), ember.tensor([-100, -100])).item())
    with pytest.raises(IndexError, match=r"nll_loss: Target 3 is out of bounds.*\[0, 3\)"):
        F.nll_loss(ember.randn(2, 3), ember.tensor([0, 3]))
    with pytest.raises(ValueError, match="nll_loss: avg is not a valid value for reduction"):
        F.nll_loss(ember.randn(2, 3), ember.tensor([0, 1]), reduction="avg")
    # backward reads the targets: changing them in place first is an error, as in torch
    target = ember.tensor([0, 1])
    loss = F.nll_loss(ember.randn(2, 3, requires_grad=True), target)
    target.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    half = F.nll_loss(ember.randn(2, 3).half(), ember.tensor([0, 1]))  # the composed path
    assert half.dtype == ember.float16


# ----------------------------------------------------------------------------- CTC
@pytest.mark.parity
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_ctc_loss_matches_torch(rng, reduction):
    torch = _torch()
    logits = rng.standard_normal((8, 3, 5))
    targets = np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]])
    in_len, tgt_len = [8, 6, 7], [3, 2, 2]
    x = ember.tensor(logits, requires_grad=True)
    t = torch.tensor(logits, requires_grad=True)
    ours = F.ctc_loss(F.log_softmax(x, 2), ember.tensor(targets), in_len, tgt_len,
                      reduction=reduction)
    ref = torch.nn.functional.ctc_loss(t.log_softmax(2), torch.tensor(targets), in_len,
                                       tgt_len, reduction=reduction)
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-9)
    g = np.cos(np.arange(ref.numel())).reshape(tuple(ref.shape))
    ours.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    # gradients with respect to the logits agree (see F.ctc_loss's "Differs from torch")
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-7, atol=1e-10)


@pytest.mark.parity
def test_ctc_concatenated_targets_blank_and_zero_infinity_match_torch(rng):
    torch = _torch()
    lp = np.log(rng.dirichlet(np.ones(4), (5, 2)))
    flat, tgt_len = np.array([1, 2, 3, 3, 3, 1]), [2, 4]  # second: 4 labels (3, 3 repeat)
    for kw in ({"blank": 0}, {"blank": 0, "zero_infinity": True}):
        args = (flat, [5, 5], tgt_len)
        ours = F.ctc_loss(ember.tensor(lp), ember.tensor(args[0]), *args[1:], reduction="none",
                          **kw)
        ref = torch.nn.functional.ctc_loss(torch.tensor(lp), torch.tensor(args[0]),
                                           *args[1:], reduction="none", **kw)
        np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-9)
    # blank=3 with targets avoiding 3; unbatched (T, C) input
    ours = nn.CTCLoss(blank=3)(ember.tensor(lp[:, 0]), ember.tensor([1, 2]), [5], [2])
    ref = torch.nn.CTCLoss(blank=3)(torch.tensor(lp[:, 0]), torch.tensor([1, 2]), [5], [2])
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-9)


def test_ctc_gradcheck_wrt_log_probs(rng):
    lp = ember.tensor(rng.standard_normal((4, 2, 3)), requires_grad=True)
    tg = ember.tensor([[1, 2], [1, 1]])
    assert gradcheck(lambda z: F.ctc_loss(z, tg, [4, 4], [2, 2], reduction="sum"), (lp,))


# ----------------------------------------------------------------------------- bad input
def test_cross_entropy_common_case_agrees_with_general_path(rng):
    # (N, C) logits and N int64 indices take a shortcut past the checks: the same values and
    # gradients as the general path (which a float16-free but weighted call still takes), the
    # target guarded, and bad targets still refused
    x = rng.standard_normal((7, 5))
    t = np.array([0, 4, 1, -100, 3, 4, 2])
    for reduction in ("mean", "sum"):
        a = ember.tensor(x, requires_grad=True)
        b = ember.tensor(x, requires_grad=True)
        fast = F.cross_entropy(a, ember.tensor(t), reduction=reduction)
        general = F.cross_entropy(b, ember.tensor(t), weight=ember.ones(5, dtype=ember.float64),
                                  reduction=reduction)
        fast.backward()
        general.backward()
        np.testing.assert_allclose(fast.item(), general.item(), rtol=1e-12)
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-15)
    target = ember.tensor([0, 1])
    loss = F.cross_entropy(ember.randn(2, 3, requires_grad=True), target)
    target.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        F.cross_entropy(ember.randn(2, 3), ember.tensor([0, 3]))


def test_cross_entropy_bad_targets():
    x = ember.randn(3, 5)
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        F.cross_entropy(x, ember.tensor([0, 1, 5]))
    with pytest.raises(IndexError, match="Target -3 is out of bounds"):
        nn.CrossEntropyLoss()(x, ember.tensor([0, 1, -3]))
    with pytest.raises(RuntimeError, match=r"cross_entropy: expected target dtype to be Long.*"
                                           r"float32.*\(3, 5\).*got target of shape \(3,\)"):
        F.cross_entropy(x, ember.ones(3))
    with pytest.raises(RuntimeError, match="int32"):
        F.cross_entropy(x, ember.tensor([0, 1, 2], dtype=ember.int32))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                                         r"batch_size \(2\)"):
        F.cross_entropy(x, ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 3\], got \[2, 4\]"):
        F.cross_entropy(ember.randn(2, 5, 3), ember.zeros(2, 4, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 5"):
        F.cross_entropy(x, ember.tensor([0, 1, 2]), weight=ember.ones(4))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(x, ember.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(IndexError, match="nll_loss: Target 7 is out of bounds"):
        F.nll_loss(x, ember.tensor([0, 1, 7]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.cross_entropy(x, ember.tensor([0, 1, 2]), reduction="avg")


def test_other_losses_bad_targets():
    with pytest.raises(ValueError, match=r"binary_cross_entropy: Using a target size"):
        F.binary_cross_entropy(ember.rand(3), ember.rand(3, 1))
    with pytest.raises(RuntimeError, match="binary_cross_entropy: expected a floating-point "
                                           "target"):
        F.binary_cross_entropy(ember.rand(3), ember.tensor([0, 1, 1]))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(ember.tensor([1.5]), ember.tensor([1.0]))
    with pytest.raises(ValueError, match=r"Target size .* must be the same as input size"):
        F.binary_cross_entropy_with_logits(ember.rand(3), ember.rand(3, 1))
    with pytest.raises(RuntimeError, match=r"mse_loss: target of shape \(3, 4\) does not match"):
        F.mse_loss(ember.randn(3, 5), ember.randn(3, 4))
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(ember.randn(3, 5), ember.randn(5))
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(ember.randn(3, 2), ember.randn(3, 2), ember.ones(3, 3))
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(ember.randn(3, 2), ember.randn(3, 2), -ember.ones(3, 2))
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive"):
        F.huber_loss(ember.randn(3), ember.randn(3), delta=0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_loss(ember.randn(3, 4), ember.randn(3, 4), ember.randn(4))
    with pytest.raises(RuntimeError, match="cosine_embedding_loss: expected target of shape"):
        F.cosine_embedding_loss(ember.randn(3, 4), ember.randn(3, 4), ember.ones(2))
    with pytest.raises(RuntimeError, match="ctc_loss: target labels must be in"):
        F.ctc_loss(ember.randn(4, 1, 3), ember.tensor([[0, 1]]), [4], [2])
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.mse_loss(ember.randn(3), ember.randn(3), weight=ember.ones(2))


def test_legacy_size_average_reduce_flags():
    x, y = ember.randn(4), ember.randn(4)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        loss = nn.MSELoss(size_average=False)
    assert loss.reduction == "sum"
    np.testing.assert_allclose(loss(x, y).item(), F.mse_loss(x, y, reduction="sum").item())
    with pytest.warns(UserWarning):
        assert F.l1_loss(x, y, reduce=False).shape == ember.Size([4])


def test_loss_modules_batch_one_and_noncontiguous(rng):
    x = ember.tensor(rng.standard_normal((5, 1)))
    t = ember.tensor(rng.standard_normal((5, 3)))[:, 1:2]
    assert not t.is_contiguous()
    np.testing.assert_allclose(nn.MSELoss()(x, t).item(),
                               ((x.numpy() - t.numpy()) ** 2).mean(), rtol=1e-6)
    logits = ember.tensor(rng.standard_normal((5, 2))).t()[:1]  # (1, 5), one sample
    assert nn.CrossEntropyLoss()(logits, ember.tensor([3])).shape == ember.Size([])
