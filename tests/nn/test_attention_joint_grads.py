"""Fused attention's backward writes dq, dk, dv as pieces of one buffer when q, k, v are pieces
of one projection, and unbind / split's backward then returns that buffer without a copy
(NOTE [Gradients of q, k, v as pieces of one buffer] in ember/ops/_kernels/attention.py).
Values against torch for the pieces taken as a transformer takes them, in another order, twice,
overlapping or partly unused - where the shortcut must not apply."""

import numpy as np
import pytest

import ember
from ember.ops import views
from ember.ops._kernels import attention as katt
from ember.testing import assert_close

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


@pytest.fixture
def shortcuts(monkeypatch):
    """Counts of (pieces allocated jointly, joins found already in place)."""
    seen = {"pieces": 0, "joined": 0}
    pieces, joined = katt._pieces_like, views._joined_already

    def count_pieces(*args):
        r = pieces(*args)
        seen["pieces"] += r is not None
        return r

    def count_joined(*args):
        r = joined(*args)
        seen["joined"] += r is not None
        return r

    monkeypatch.setattr(katt, "_pieces_like", count_pieces)
    monkeypatch.setattr(views, "_joined_already", count_joined)
    return seen


def _run(lib, a, take, grad, is_causal=True):
    """x.grad for attention over pieces of x chosen by ``take(lib, x)`` -> (q, k, v)."""
    x = lib.tensor(a, requires_grad=True)
    out = lib.nn.functional.scaled_dot_product_attention(*take(lib, x), is_causal=is_causal)
    out.backward(lib.tensor(grad))
    return out.detach().numpy(), x.grad.numpy()


def _heads(lib, x, b=2, t=70, h=2, e=8):
    return x.view(b, t, 3, h, e).permute(2, 0, 3, 1, 4).unbind(0)


@pytest.mark.parametrize("t", [5, 70])  # without and with causal tiles
@pytest.mark.parametrize("is_causal", [False, True])
def test_transformer_pieces_take_the_shortcut(rng, shortcuts, t, is_causal):
    a = rng.standard_normal((2, t, 3 * 2 * 8)).astype(np.float32)
    grad = rng.standard_normal((2, 2, t, 8)).astype(np.float32)

    def take(lib, x):
        return _heads(lib, x, t=t)

    ours, ref = _run(ember, a, take, grad, is_causal), _run(torch, a, take, grad, is_causal)
    assert shortcuts == {"pieces": 1, "joined": 1}
    for x, y in zip(ours, ref, strict=True):
        assert_close(x, y, rtol=1e-4, atol=1e-5)


def test_pieces_in_another_order(rng, shortcuts):
    a = rng.standard_normal((2, 70, 48)).astype(np.float64)
    grad = rng.standard_normal((2, 2, 70, 8))

    def take(lib, x):
        q, k, v = _heads(lib, x)
        return v, q, k

    ours, ref = _run(ember, a, take, grad), _run(torch, a, take, grad)
    assert shortcuts == {"pieces": 1, "joined": 1}
    for x, y in zip(ours, ref, strict=True):
        assert_close(x, y)


def test_chunks_of_the_last_dim(rng, shortcuts):
    # split (not unbind) pieces, 3-D (B, T, E) attention without heads
    a = rng.standard_normal((3, 9, 12))
    grad = rng.standard_normal((3, 9, 4))

    def take(lib, x):
        return x.chunk(3, dim=-1)

    ours, ref = _run(ember, a, take, grad), _run(torch, a, take, grad)
    assert shortcuts == {"pieces": 1, "joined": 1}
    for x, y in zip(ours, ref, strict=True):
        assert_close(x, y)


@pytest.mark.parametrize("which", ["same piece twice", "overlapping", "one unused"])
def test_no_shortcut_where_pieces_do_not_tile_the_buffer(rng, shortcuts, which):
    a = rng.standard_normal((2, 5, 9))
    grad = rng.standard_normal((2, 5, 3))

    def take(lib, x):
        if which == "overlapping":  # offsets 0, 1, 2 elements: the views would overlap
            return x[..., 0:3], x[..., 1:4], x[..., 2:5]
        q, k, v = x.chunk(3, dim=-1)
        return (q, q, v) if which == "same piece twice" else (q, k, k)

    ours, ref = _run(ember, a, take, grad), _run(torch, a, take, grad)
    assert shortcuts == {"pieces": 0, "joined": 0}
    for x, y in zip(ours, ref, strict=True):
        assert_close(x, y)


def test_gradcheck_through_the_shortcut(rng, shortcuts):
    x = ember.tensor(rng.standard_normal((1, 4, 3 * 2 * 2)), requires_grad=True)

    def fn(x):
        q, k, v = x.view(1, 4, 3, 2, 2).permute(2, 0, 3, 1, 4).unbind(0)
        return ember.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    assert ember.autograd.gradcheck(fn, (x,))
    assert shortcuts["joined"] >= 1
