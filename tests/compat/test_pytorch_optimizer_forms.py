"""Gap classes kozistr/pytorch_optimizer's suite and nflows' tests found under the alias: the
``torch._foreach_*`` ops torch 2.13 has and ember lacked (rsqrt, clone, max, powsum, mm), the
Tensor class as ``.type()``'s argument, NumPy scalars as a Number argument of ``full``, a
one-element target of ``cosine_embedding_loss``, ``normalize`` of complex tensors and the
addmm family in bfloat16/float16 (one rounding, as torch). Each is checked against torch."""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _both(arrays):
    return [ember.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]


def _same(got, want, tol=1e-6):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)


# ---------------------------------------------------------------- foreach ops
def test_foreach_rsqrt_out_of_place_and_in_place(rng):
    arrays = [rng.uniform(0.5, 4, s) for s in ((3,), (2, 4), ())]
    e, t = _both(arrays)
    for g, w in zip(ember._foreach_rsqrt(e), torch._foreach_rsqrt(t)):
        _same(g, w)
    assert ember._foreach_rsqrt_(e) is e
    torch._foreach_rsqrt_(t)
    for g, w in zip(e, t):
        _same(g, w)


def test_foreach_clone_max_powsum_mm(rng):
    arrays = [rng.standard_normal(s) for s in ((3,), (2, 4), ())]
    e, t = _both(arrays)
    clones = ember._foreach_clone(e)
    assert all(c is not x and c._data is not x._data for c, x in zip(clones, e))
    for name, args in (("_foreach_clone", ()), ("_foreach_max", ()),
                       ("_foreach_powsum", ()), ("_foreach_powsum", (1,)),
                       ("_foreach_powsum", (3,))):
        for g, w in zip(getattr(ember, name)(e, *args), getattr(torch, name)(t, *args)):
            _same(g, w)
    ge = ember._foreach_powsum(e, 2, dtype=ember.float32)
    gt = torch._foreach_powsum(t, 2, dtype=torch.float32)
    for g, w in zip(ge, gt):
        _same(g, w)
    mats = [rng.standard_normal((2, 3)), rng.standard_normal((4, 2))]
    rhs = [rng.standard_normal((3, 5)), rng.standard_normal((2, 1))]
    (me, mt), (re_, rt) = _both(mats), _both(rhs)
    for g, w in zip(ember._foreach_mm(me, re_), torch._foreach_mm(mt, rt)):
        _same(g, w)


def test_foreach_max_of_an_empty_tensor_raises():
    with pytest.raises(RuntimeError, match="_foreach_max.*empty tensor"):
        torch._foreach_max([torch.ones(2), torch.ones(0)])
    with pytest.raises(RuntimeError, match="_foreach_max.*empty tensor"):
        ember._foreach_max([ember.ones(2), ember.ones(0)])


# ---------------------------------------------------------------- Tensor.type(Tensor)
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_type_of_the_tensor_class_is_the_default_type(default):
    ember.set_default_dtype(getattr(ember, default))
    torch.set_default_dtype(getattr(torch, default))
    try:
        for target in ("Tensor", "name"):
            e, t = ember.tensor([1, -2, 3]) < 0, torch.tensor([1, -2, 3]) < 0
            ge = e.type(ember.Tensor if target == "Tensor" else "torch.Tensor")
            gt = t.type(torch.Tensor if target == "Tensor" else "torch.Tensor")
            _same(ge, gt)
            assert str(ge.dtype) == f"ember.{default}"
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


def test_type_of_other_classes_and_objects_raises_like_torch():
    e, t = ember.ones(2), torch.ones(2)
    for cls_e, cls_t in ((ember.nn.Parameter, torch.nn.Parameter), (float, float)):
        with pytest.raises(ValueError, match="invalid type"):
            t.type(cls_t)
        with pytest.raises(ValueError, match=f"invalid type: '{cls_e.__name__}'"):
            e.type(cls_e)
    with pytest.raises(TypeError):
        t.type(3)
    with pytest.raises(TypeError, match="type\\(\\): argument 'dtype' must be"):
        e.type(3)


# ---------------------------------------------------------------- full(size, np scalar)
NUMPY_FILLS = [np.float64(1.5), np.float32(2.5), np.float16(-1), np.int32(3), np.uint8(7),
               np.int64(-4), np.complex128(1 - 2j), np.bool_(True)]


@pytest.mark.parametrize("value", NUMPY_FILLS, ids=lambda v: type(v).__name__)
def test_full_reads_a_numpy_scalar_as_a_python_number(value):
    # dtype from the scalar's kind (int64 / default float / default complex), not its width;
    # torch reads np.bool_ as a float here
    _same(ember.full([2, 3], value), torch.full([2, 3], value))


def test_full_numpy_scalar_follows_the_default_dtype():
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.full([2], np.float32(1)).dtype == ember.float64
    finally:
        ember.set_default_dtype(ember.float32)
    # tensor() keeps a NumPy scalar's own dtype (it is data, not a Number argument)
    assert ember.tensor(np.float64(1)).dtype == ember.float64


# ---------------------------------------------------------------- cosine_embedding_loss
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cosine_embedding_loss_broadcasts_a_one_element_target(rng, reduction):
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    (ea, eb), (ta, tb) = _both([a, b])
    for target in ([1], [-1]):
        got = ember.nn.functional.cosine_embedding_loss(ea, eb, ember.tensor(target),
                                                        reduction=reduction)
        want = torch.nn.functional.cosine_embedding_loss(ta, tb, torch.tensor(target),
                                                         reduction=reduction)
        _same(got, want)


def test_cosine_embedding_loss_refuses_targets_that_do_not_broadcast(rng):
    a = ember.tensor(rng.standard_normal((4, 3)))
    with pytest.raises(RuntimeError, match="cosine_embedding_loss: expected target of shape"):
        ember.nn.functional.cosine_embedding_loss(a, a, ember.tensor([1, 1]))
    with pytest.raises(RuntimeError, match="cosine_embedding_loss: expected target of shape"):
        ember.nn.functional.cosine_embedding_loss(a, a, ember.tensor(1))


# ---------------------------------------------------------------- normalize(complex)
@pytest.mark.parametrize("p,dim", [(2.0, 0), (2.0, 1), (1.0, -1), (3.0, (0, 1))])
def test_normalize_complex_like_torch(rng, p, dim):
    z = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    (e,), (t,) = _both([z])
    _same(ember.nn.functional.normalize(e, p=p, dim=dim),
          torch.nn.functional.normalize(t, p=p, dim=dim), tol=1e-10)


def test_normalize_complex_gradient():
    z = ember.tensor([[1 + 2j, -0.5j], [3 - 1j, 0.25 + 0j]], dtype=ember.complex128,
                     requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda x: ember.nn.functional.normalize(x, dim=0), (z,))


# ---------------------------------------------------------------- addmm family, low precision
def _low_cases(rng):
    a, b = rng.standard_normal((5, 6)), rng.standard_normal((6, 4))
    c = rng.standard_normal((5, 4))
    ba, bb, bc = (rng.standard_normal((2, 5, 6)), rng.standard_normal((2, 6, 4)),
                  rng.standard_normal((2, 5, 4)))
    return {"addmm": (c, a, b), "baddbmm": (bc, ba, bb), "addbmm": (c, ba, bb)}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("op", ["addmm", "baddbmm", "addbmm"])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (-4.775, 2.0315), (0.0, 3.4445)])
def test_addmm_family_rounds_once_in_low_precision(rng, dtype, op, beta, alpha):
    args = _low_cases(rng)[op]
    e = [ember.tensor(x).to(getattr(ember, dtype)) for x in args]
    t = [torch.tensor(x).to(getattr(torch, dtype)) for x in args]
    got = getattr(ember, op)(*e, beta=beta, alpha=alpha)
    want = getattr(torch, op)(*t, beta=beta, alpha=alpha)
    # exactly torch's bits: beta * input + alpha * product formed in float32, rounded once
    assert got.dtype == e[0].dtype
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


def test_addmm_low_precision_out_and_gradient(rng):
    a = ember.tensor(rng.standard_normal((3, 4)), dtype=ember.bfloat16, requires_grad=True)
    b = ember.tensor(rng.standard_normal((4, 2)), dtype=ember.bfloat16, requires_grad=True)
    c = ember.zeros(3, 2, dtype=ember.bfloat16)
    out = ember.empty(3, 2, dtype=ember.bfloat16)
    ember.addmm(c, a.detach(), b.detach(), beta=0.0, alpha=2.0, out=out)
    np.testing.assert_array_equal(
        out.float().numpy(), ember.addmm(c, a, b, beta=0.0, alpha=2.0).detach().float().numpy())
    ember.addmm(c, a, b, alpha=2.0).sum().backward()
    assert a.grad.dtype == ember.bfloat16 and b.grad.dtype == ember.bfloat16
    np.testing.assert_allclose(a.grad.float().numpy(),
                               2 * b.detach().float().numpy().sum(1)[None].repeat(3, 0),
                               rtol=1e-2)


def test_newton_schulz_quintic_in_bfloat16_matches_torch():
    """Muon/Shampoo-style orthogonalisation: five steps of addmm in bfloat16 (the form of
    pytorch_optimizer's zero_power_via_newton_schulz_5) give torch's bits."""
    g = [[-1.5724165, 1.5850062], [-0.87536967, 0.31970903], [-0.18436244, -0.16805087]]
    results = []
    for lib in (ember, torch):
        x = lib.tensor(g).bfloat16().mT
        x = (x / x.norm(2, dim=(-2, -1), keepdim=True)).contiguous()
        a = lib.empty((2, 2), dtype=lib.bfloat16)
        b, c = lib.empty_like(a), lib.empty_like(x)
        for _ in range(5):
            lib.addmm(a, x, x.mT, beta=0.0, alpha=1.0, out=a)
            lib.addmm(a, a, a, beta=-4.7750, alpha=2.0315, out=b)
            lib.addmm(x, b, x, beta=3.4445, alpha=1.0, out=c)
            x, c = c, x
        results.append(x.float().numpy())
    np.testing.assert_array_equal(results[0], results[1])
