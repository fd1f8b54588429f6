"""F.multi_head_attention_forward with static_k / static_v: values and gradients against
torch 2.13, gradcheck in float64, and torch's shape errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from ember.testing import assert_close

L, S, N, E, H = 3, 5, 2, 4, 2


def _arrays(rng, static_len=7):
    shapes = dict(q=(L, N, E), k=(S, N, E), v=(S, N, E), w=(3 * E, E), b=(3 * E,), wo=(E, E),
                  bo=(E,), sk=(N * H, static_len, E // H), sv=(N * H, static_len, E // H))
    return {name: rng.standard_normal(shape) for name, shape in shapes.items()}


def _run(lib, a, *, static=("sk", "sv"), add_zero_attn=False, kpm=None, bias=None):
    t = {name: lib.tensor(value, requires_grad=True) for name, value in a.items()}
    bias_k, bias_v = (lib.tensor(bias), lib.tensor(bias)) if bias is not None else (None, None)
    out, weights = lib.nn.functional.multi_head_attention_forward(
        t["q"], t["k"], t["v"], E, H, t["w"], t["b"], bias_k, bias_v, add_zero_attn, 0.0,
        t["wo"], t["bo"], static_k=t["sk"] if "sk" in static else None,
        static_v=t["sv"] if "sv" in static else None,
        key_padding_mask=None if kpm is None else lib.tensor(kpm))
    (out.sum() + (weights * weights).sum()).backward()
    grads = [t[n].grad for n in ("q", "w", "sk", "sv") if t[n].grad is not None]
    return [out.detach().numpy(), weights.detach().numpy()] + [g.numpy() for g in grads]


@pytest.mark.parity
@pytest.mark.parametrize("static", [("sk", "sv"), ("sk",), ("sv",)])
@pytest.mark.parametrize("add_zero_attn", [False, True])
def test_static_kv_matches_torch(static, add_zero_attn):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    # a static key or value alone must match the other's length: S
    a = _arrays(np.random.default_rng(0), static_len=7 if len(static) == 2 else S)
    kpm = np.zeros((N, 7 if len(static) == 2 else S), bool)
    kpm[0, -1] = True
    ours = _run(ember, a, static=static, add_zero_attn=add_zero_attn, kpm=kpm)
    theirs = _run(torch, a, static=static, add_zero_attn=add_zero_attn, kpm=kpm)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs, strict=True):
        assert_close(o, t)


def test_static_kv_gradcheck():
    a = _arrays(np.random.default_rng(1))
    sk = ember.tensor(a["sk"], requires_grad=True)
    sv = ember.tensor(a["sv"], requires_grad=True)
    q = ember.tensor(a["q"], requires_grad=True)
    fixed = {n: ember.tensor(a[n]) for n in ("k", "v", "w", "b", "wo", "bo")}

    def f(q_, sk_, sv_):
        out, _ = ember.nn.functional.multi_head_attention_forward(
            q_, fixed["k"], fixed["v"], E, H, fixed["w"], fixed["b"], None, None, False, 0.0,
            fixed["wo"], fixed["bo"], static_k=sk_, static_v=sv_)
        return out

    assert gradcheck(f, (q, sk, sv))


def test_static_kv_errors():
    a = _arrays(np.random.default_rng(2))
    a["sk"] = a["sk"][:, :, :1]
    with pytest.raises(RuntimeError, match=r"expecting static_k of shape \(4, S, 2\)"):
        _run(ember, a)
    a = _arrays(np.random.default_rng(2))
    with pytest.raises(AssertionError, match="bias cannot be added to static key"):
        _run(ember, a, bias=np.ones((1, 1, E)))
