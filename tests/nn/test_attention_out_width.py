"""F.multi_head_attention_forward whose output projection changes the width (CLIP's attention
pooling: separate q/k/v weights, one query, out_proj_weight of shape (OUT, E) with OUT != E):
values and gradients against torch 2.13, and gradcheck in float64."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from ember.testing import assert_close

S, N, E, H, OUT = 5, 2, 8, 2, 6


def _arrays(rng, batched=True):
    lead = (S, N) if batched else (S,)
    shapes = dict(x=lead + (E,), wq=(E, E), wk=(E, E), wv=(E, E), b=(3 * E,), wo=(OUT, E),
                  bo=(OUT,))
    return {name: rng.standard_normal(shape) for name, shape in shapes.items()}


def _call(F, t, need_weights):
    x = t["x"]
    return F.multi_head_attention_forward(
        query=x[:1], key=x, value=x, embed_dim_to_check=E, num_heads=H,
        q_proj_weight=t["wq"], k_proj_weight=t["wk"], v_proj_weight=t["wv"],
        in_proj_weight=None, in_proj_bias=t["b"], bias_k=None, bias_v=None,
        add_zero_attn=False, dropout_p=0.0, out_proj_weight=t["wo"], out_proj_bias=t["bo"],
        use_separate_proj_weight=True, training=True, need_weights=need_weights)


def _run(lib, a, need_weights):
    t = {name: lib.tensor(value, requires_grad=True) for name, value in a.items()}
    out, weights = _call(lib.nn.functional, t, need_weights)
    loss = (out * out).sum() + (0 if weights is None else weights.sum())
    loss.backward()
    found = [out.detach().numpy()] + ([] if weights is None else [weights.detach().numpy()])
    return found + [t[n].grad.numpy() for n in ("x", "wq", "wk", "wv", "b", "wo", "bo")]


@pytest.mark.parity
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("need_weights", [False, True])
def test_out_width_matches_torch(batched, need_weights):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    a = _arrays(np.random.default_rng(0), batched)
    ours = _run(ember, a, need_weights)
    theirs = _run(torch, a, need_weights)
    assert ours[0].shape == ((1, N, OUT) if batched else (1, OUT))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs, strict=True):
        assert_close(o, t)


def test_out_width_gradcheck():
    a = _arrays(np.random.default_rng(1))
    names = ("x", "wq", "wo")
    fixed = {n: ember.tensor(a[n]) for n in a if n not in names}

    def f(x, wq, wo):
        out, _ = _call(ember.nn.functional, dict(fixed, x=x, wq=wq, wo=wo), False)
        return out

    inputs = [ember.tensor(a[n], dtype=ember.float64, requires_grad=True) for n in names]
    assert gradcheck(f, inputs)
