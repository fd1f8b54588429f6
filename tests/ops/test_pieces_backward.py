"""unbind / split / chunk as one op for all pieces (NOTE [Pieces of one tensor]): gradients
in float64 (also through permuted inputs and negative dims, pieces without a gradient, double
backward), the layout of the joined gradient, forward AD, vmap, grad_fn names vs torch."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
from ember.autograd import gradcheck, gradgradcheck
from ember.func import vmap


def _double(rng, *shape):
    return ember.tensor(rng.standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("pieces", [
    lambda t: t.unbind(0), lambda t: t.unbind(-1), lambda t: t.unbind(-2),
    lambda t: t.split(2, -1), lambda t: t.split([1, 2, 1], 1), lambda t: t.chunk(2, 0),
    lambda t: t.permute(2, 0, 1).unbind(0), lambda t: t.transpose(0, 2).split([3, 1], -2),
])
def test_pieces_gradcheck_and_double_backward(rng, pieces):
    x = _double(rng, 3, 4, 5)

    def fn(t):
        ps = pieces(t)
        # unequal weights, and the middle piece unused: its part of the gradient is zero
        return sum((i + 1) * p.sin() for i, p in enumerate(ps) if i != 1 or len(ps) < 3)
    assert gradcheck(lambda t: fn(t).sum(), (x,))
    assert gradgradcheck(lambda t: fn(t).sum(), (x,))


def test_unbind_piece_without_gradient_gets_zeros(rng):
    x = _double(rng, 3, 2)
    a, _, c = x.unbind(0)
    (a * 2 + c).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[2, 2], [0, 0], [1, 1]])


def test_unbind_gradient_keeps_the_input_layout(rng):
    # a transformer's q, k, v: the joined gradient is laid out as the (B, T, 3, H, E) view,
    # so the permute's gradient is C-contiguous and the view before it stays a view
    x = _double(rng, 2, 5, 24)
    y = x.view(2, 5, 3, 2, 4).permute(2, 0, 3, 1, 4)
    seen = []
    y.register_hook(seen.append)
    q, k, v = y.unbind(0)
    (q * k * v).sum().backward()
    g = seen[0].numpy()
    assert g.transpose(1, 3, 0, 2, 4).flags.c_contiguous
    qn, kn, vn = x.detach().numpy().reshape(2, 5, 3, 2, 4).transpose(2, 0, 3, 1, 4)
    expect = np.stack([kn * vn, qn * vn, qn * kn]).transpose(1, 3, 0, 2, 4).reshape(2, 5, 24)
    np.testing.assert_allclose(x.grad.numpy(), expect, rtol=1e-12)


def test_split_gradient_matches_concatenated_piece_gradients(rng):
    x = _double(rng, 4, 7)
    a, b, c = x.split([2, 4, 1], dim=-1)
    (a.exp().sum() + (b * b).sum() + 3 * c.sum()).backward()
    xn = x.detach().numpy()
    expect = np.concatenate([np.exp(xn[:, :2]), 2 * xn[:, 2:6], np.full((4, 1), 3.0)], axis=1)
    np.testing.assert_allclose(x.grad.numpy(), expect, rtol=1e-12)


def test_pieces_forward_ad_tangents(rng):
    with fwAD.dual_level():
        t = ember.arange(12.0).reshape(3, 4)
        p = fwAD.make_dual(ember.randn(3, 4), t)
        outs = p.unbind(1)
        np.testing.assert_array_equal(fwAD.unpack_dual(outs[1]).tangent.numpy(), [1, 5, 9])
        outs = p.split([3, 1], 1)
        np.testing.assert_array_equal(fwAD.unpack_dual(outs[1]).tangent.numpy(), [[3], [7], [11]])


def test_pieces_under_vmap():
    x = ember.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(vmap(lambda t: t.unbind(0)[1])(x).numpy(), x.numpy()[:, 1])
    np.testing.assert_array_equal(vmap(lambda t: t.split(2, 1)[1])(x).numpy(),
                                  x.numpy()[:, :, 2:])


def test_pieces_of_empty_dims():
    x = ember.zeros(3, 0, requires_grad=True)
    assert x.unbind(1) == ()
    (piece,) = x.split(2, 1)
    assert piece.shape == (3, 0)
    piece.sum().backward()
    assert x.grad.shape == (3, 0)


def test_in_place_on_a_piece_reaches_the_base(rng):
    # torch refuses in-place writes to outputs of multi-view ops; ember allows them and the
    # gradient goes through the write (docs/DEVIATIONS.md)
    x = _double(rng, 3, 4)
    y = x * 1
    a, b, c = y.unbind(0)
    b.mul_(3)
    (y.sum() + a.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[2] * 4, [3] * 4, [1] * 4])


@pytest.mark.parity
def test_pieces_grad_fn_names_and_gradients_match_torch(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((3, 4, 5))
    for name, fn in [("UnbindBackward0", lambda t: t.unbind(-1)),
                     ("SplitBackward0", lambda t: t.split(2, 1)),
                     ("SplitWithSizesBackward0", lambda t: t.split([1, 3], 1)),
                     ("SplitBackward0", lambda t: t.chunk(2, 0))]:
        ours, ref = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        po, pr = fn(ours), fn(ref)
        assert po[0].grad_fn.name() == pr[0].grad_fn.name() == name
        sum((i + 1) * p.tanh().sum() for i, p in enumerate(po)).backward()
        sum((i + 1) * p.tanh().sum() for i, p in enumerate(pr)).backward()
        np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=1e-12)
