"""Transform.sign as torch has it: monotone scalar transforms give +1/-1 (or a tensor of signs),
the rest raise NotImplementedError, and so does what needs a sign from them (the cdf and icdf
of a TransformedDistribution through a softmax-like transform: LogisticNormal)."""
from __future__ import annotations

import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _transforms(lib):
    T = lib.distributions.transforms
    return {
        "exp": T.ExpTransform(), "sigmoid": T.SigmoidTransform(), "tanh": T.TanhTransform(),
        "softplus": T.SoftplusTransform(), "affine_neg": T.AffineTransform(0.0, -2.0),
        "power": T.PowerTransform(lib.tensor(-1.5)), "inverse": T.ExpTransform().inv,
        "compose": T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, -3.0)]),
        "independent": T.IndependentTransform(T.SigmoidTransform(), 1),
        "softmax": T.SoftmaxTransform(), "stick_breaking": T.StickBreakingTransform(),
        "abs": T.AbsTransform(), "lower_cholesky": T.LowerCholeskyTransform(),
        "corr_cholesky": T.CorrCholeskyTransform(),
        "reshape": T.ReshapeTransform((4,), (2, 2)),
        "stack": T.StackTransform([T.ExpTransform(), T.ExpTransform()], 0),
        "cat": T.CatTransform([T.ExpTransform(), T.ExpTransform()], 0, [1, 1]),
        "compose_with_softmax": T.ComposeTransform([T.ExpTransform(), T.SoftmaxTransform()]),
    }


@pytest.mark.parametrize("name", sorted(_transforms(ember)))
def test_transform_sign_matches_torch(name):
    want_t = _transforms(torch)[name]
    got_t = _transforms(ember)[name]
    try:
        want = want_t.sign
    except NotImplementedError:
        with pytest.raises(NotImplementedError, match="sign"):
            got_t.sign
        return
    got = got_t.sign
    if isinstance(want, torch.Tensor):
        assert got.tolist() == want.tolist()
    else:
        assert got == want


def test_logistic_normal_cdf_raises_not_implemented_like_torch():
    x = [0.2, 0.3, 0.5]
    with pytest.raises(NotImplementedError):
        torch.distributions.LogisticNormal(torch.zeros(2), torch.ones(2)).cdf(torch.tensor(x))
    with pytest.raises(NotImplementedError):
        ember.distributions.LogisticNormal(ember.zeros(2), ember.ones(2)).cdf(ember.tensor(x))
    with pytest.raises(NotImplementedError):
        ember.distributions.LogisticNormal(ember.zeros(2), ember.ones(2)).icdf(
            ember.tensor(x))


def test_monotone_decreasing_transform_flips_the_cdf_like_torch():
    value = [0.1, 0.5, 2.0]
    for lib in (ember, torch):
        D, T = lib.distributions, lib.distributions.transforms
        dist = D.TransformedDistribution(D.Normal(0.0, 1.0), [T.AffineTransform(1.0, -2.0)])
        cdf = dist.cdf(lib.tensor(value))
        if lib is ember:
            got = cdf.tolist()
        else:
            want = cdf.tolist()
    assert got == pytest.approx(want, rel=1e-6)
