"""scaled_dot_product_attention and MultiheadAttention."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from ember.nn import functional as F
from ember.nn.modules.attention import MultiheadAttention


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _close(a, b, tol=1e-10):
    a = a.detach().numpy() if isinstance(a, ember.Tensor) else a
    np.testing.assert_allclose(a, b.detach().numpy(), rtol=tol, atol=tol)


def _leaves(arrays):
    torch = _torch()
    return ([ember.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def _backward_both(rng, y, ty):
    torch = _torch()
    g = rng.standard_normal(tuple(ty.shape))
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["none", "bool", "float", "causal", "scale", "broadcast"])
def test_sdpa_matches_torch(rng, kind):
    torch = _torch()
    q, k, v = (rng.standard_normal(s) for s in ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 3)))
    kw = {}
    mask = tmask = None
    if kind == "bool":
        m = rng.random((5, 6)) > 0.4
        m[:, 0] = True  # no fully masked row
        mask, tmask = ember.tensor(m), torch.tensor(m)
    elif kind == "float":
        m = rng.standard_normal((2, 1, 5, 6))
        mask, tmask = ember.tensor(m), torch.tensor(m)
    elif kind == "broadcast":
        m = rng.random((2, 1, 1, 6)) > 0.3
        m[..., 0] = True
        mask, tmask = ember.tensor(m), torch.tensor(m)
    elif kind == "causal":
        kw = dict(is_causal=True)
    elif kind == "scale":
        kw = dict(scale=0.37)
    (eq, ek, ev), (tq, tk, tv) = _leaves([q, k, v])
    y = F.scaled_dot_product_attention(eq, ek, ev, attn_mask=mask, **kw)
    ty = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tmask, **kw)
    _close(y, ty)
    _backward_both(rng, y, ty)
    for a, b in ((eq, tq), (ek, tk), (ev, tv)):
        _close(a.grad, b.grad)


@pytest.mark.parity
def test_sdpa_grouped_query_attention_matches_torch(rng):
    torch = _torch()
    arrays = [rng.standard_normal(s) for s in ((2, 4, 5, 4), (2, 2, 6, 4), (2, 2, 6, 4))]
    (eq, ek, ev), (tq, tk, tv) = _leaves(arrays)
    y = F.scaled_dot_product_attention(eq, ek, ev, enable_gqa=True)
    ty = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True)
    _close(y, ty)
    _backward_both(rng, y, ty)
    _close(ek.grad, tk.grad)


def test_sdpa_gradcheck_and_dropout(rng):
    q, k, v = (ember.tensor(rng.standard_normal(s), requires_grad=True)
               for s in ((1, 2, 3), (1, 3, 3), (1, 3, 2)))
    mask = ember.tensor(np.array([[True, False, True], [True, True, False]]))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask), (q, k, v))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                     (q, k, v))
    x = ember.ones(1, 4, 8)
    dropped = F.scaled_dot_product_attention(x, x, x, dropout_p=0.5)
    # each output is a rescaled sum of a random subset of uniform weights times ones
    assert set(np.unique(np.round(dropped.numpy(), 6))) <= {0.0, 0.5, 1.0, 1.5, 2.0}


def test_sdpa_errors():
    q = ember.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="attn_mask of shape \\(4, 4\\) does not broadcast"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ember.ones(4, 4, dtype=ember.bool))
    with pytest.raises(RuntimeError, match="should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ember.ones(3, 3), is_causal=True)
    with pytest.raises(RuntimeError, match="same dtype"):
        F.scaled_dot_product_attention(q, q.double(), q)


def _twin_mha(**kw):
    torch = _torch()
    ref = torch.nn.MultiheadAttention(**kw).double()
    ours = MultiheadAttention(**kw, dtype=ember.float64)
    ours.load_state_dict({k: ember.tensor(v.detach().numpy())
                          for k, v in ref.state_dict().items()})
    return ours, ref


MHA_CASES = [
    (dict(embed_dim=8, num_heads=2), dict()),
    (dict(embed_dim=8, num_heads=2, batch_first=True), dict(need_weights=False)),
    (dict(embed_dim=8, num_heads=4, kdim=5, vdim=3), dict(average_attn_weights=False)),
    (dict(embed_dim=8, num_heads=2, add_bias_kv=True, add_zero_attn=True), dict()),
    (dict(embed_dim=8, num_heads=2, bias=False), dict()),
]


@pytest.mark.parity
@pytest.mark.parametrize("module_kw,call_kw", MHA_CASES)
@pytest.mark.parametrize("masks", ["none", "bool", "float"])
def test_multihead_attention_matches_torch(rng, module_kw, call_kw, masks):
    torch = _torch()
    ours, ref = _twin_mha(**module_kw)
    batch, tgt, src = 3, 4, 5
    e = module_kw["embed_dim"]
    kd, vd = module_kw.get("kdim", e), module_kw.get("vdim", e)
    bf = module_kw.get("batch_first", False)

    def shape(length, dim):
        return (batch, length, dim) if bf else (length, batch, dim)

    arrays = [rng.standard_normal(shape(tgt, e)), rng.standard_normal(shape(src, kd)),
              rng.standard_normal(shape(src, vd))]
    (eq, ek, ev), (tq, tk, tv) = _leaves(arrays)
    kw_e, kw_t = dict(call_kw), dict(call_kw)
    if masks == "bool":
        kpm = np.zeros((batch, src), dtype=bool)
        kpm[0, -2:] = True
        am = np.triu(np.ones((tgt, src), dtype=bool), k=2)
        kw_e.update(key_padding_mask=ember.tensor(kpm), attn_mask=ember.tensor(am))
        kw_t.update(key_padding_mask=torch.tensor(kpm), attn_mask=torch.tensor(am))
    elif masks == "float":
        am = rng.standard_normal((batch * module_kw["num_heads"], tgt, src))
        kpm = rng.standard_normal((batch, src))
        kw_e.update(key_padding_mask=ember.tensor(kpm), attn_mask=ember.tensor(am))
        kw_t.update(key_padding_mask=torch.tensor(kpm), attn_mask=torch.tensor(am))
    y, w = ours(eq, ek, ev, **kw_e)
    ty, tw = ref(tq, tk, tv, **kw_t)
    _close(y, ty)
    if tw is None:
        assert w is None
    else:
        _close(w, tw)
    _backward_both(rng, y, ty)
    for a, b in ((eq, tq), (ek, tk), (ev, tv)):
        _close(a.grad, b.grad)
    for name, p in ref.named_parameters():
        _close(ours.get_parameter(name).grad, p.grad)


@pytest.mark.parity
def test_multihead_attention_unbatched_and_state_dict_keys(rng):
    torch = _torch()
    ours, ref = _twin_mha(embed_dim=6, num_heads=3)
    assert list(ours.state_dict()) == list(ref.state_dict())
    x = rng.standard_normal((4, 6))
    y, w = ours(*([ember.tensor(x)] * 3))
    ty, tw = ref(*([torch.tensor(x)] * 3))
    _close(y, ty)
    _close(w, tw)
    sep, tsep = _twin_mha(embed_dim=6, num_heads=3, kdim=2, vdim=4)
    assert list(sep.state_dict()) == list(tsep.state_dict())


def test_multihead_attention_default_init():
    mha = MultiheadAttention(16, 4)
    w = mha.in_proj_weight.detach().numpy()
    bound = np.sqrt(6 / (16 + 48))  # xavier_uniform_ on the (3E, E) matrix
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert not mha.in_proj_bias.detach().numpy().any()
    assert not mha.out_proj.bias.detach().numpy().any()


def test_multihead_attention_dropout_only_in_training():
    mha = MultiheadAttention(4, 2, dropout=0.9)
    x = ember.randn(3, 2, 4)
    mha.eval()
    a, b = mha(x, x, x)[1], mha(x, x, x)[1]
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy())
    np.testing.assert_allclose(a.detach().numpy().sum(-1), 1.0, rtol=1e-5)
    mha.train()
    assert not np.allclose(mha(x, x, x)[1].detach().numpy().sum(-1), 1.0)


def test_multihead_attention_mask_shape_errors():
    mha = MultiheadAttention(4, 2)
    q = ember.randn(3, 2, 4)  # (L, N, E)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is \(3, 4\), but "
                                           r"should be \(3, 3\)"):
        mha(q, q, q, attn_mask=ember.zeros(3, 4))
    with pytest.raises(RuntimeError, match=r"3D attn_mask .* should be \(4, 3, 3\)"):
        mha(q, q, q, attn_mask=ember.zeros(2, 3, 3))
    with pytest.raises(RuntimeError, match=r"expected key_padding_mask of shape \(2, 3\)"):
        mha(q, q, q, key_padding_mask=ember.zeros(3, 2, dtype=ember.bool))
    with pytest.raises(RuntimeError, match="was expecting embedding dimension of 4"):
        mha(ember.randn(3, 2, 5), q, q)
    with pytest.raises(AssertionError, match="divisible by num_heads"):
        MultiheadAttention(5, 2)
