"""Transformer encoder / decoder layers, stacks and the full Transformer against torch."""
import numpy as np
import pytest

import ember
from ember.nn.modules import transformer as T


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _close(a, b, tol=1e-9):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _load(ours, ref):
    ours.load_state_dict({k: ember.tensor(v.detach().numpy())
                          for k, v in ref.state_dict().items()})


def _run(rng, ours, ref, arrays, kw_e, kw_t):
    """Forward and the gradients of inputs and parameters (train mode: torch's fast path off)."""
    torch = _torch()
    eins = [ember.tensor(a, requires_grad=True) for a in arrays]
    tins = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, ty = ours(*eins, **kw_e), ref(*tins, **kw_t)
    _close(y, ty)
    g = rng.standard_normal(tuple(ty.shape))
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    for a, b in zip(eins, tins):
        _close(a.grad, b.grad)
    for name, p in ref.named_parameters():
        _close(ours.get_parameter(name).grad, p.grad)


def _masks(rng, batch, length):
    torch = _torch()
    causal = np.triu(np.ones((length, length), dtype=bool), k=1)  # True: may not attend
    kpm = np.zeros((batch, length), dtype=bool)
    kpm[1, -2:] = True
    return (dict(src_mask=ember.tensor(causal), src_key_padding_mask=ember.tensor(kpm)),
            dict(src_mask=torch.tensor(causal), src_key_padding_mask=torch.tensor(kpm)))


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(), dict(norm_first=True, activation="gelu"),
                                dict(batch_first=True, activation="callable")])
def test_encoder_layer_matches_torch(rng, kw):
    torch = _torch()
    kw = dict(kw)
    bf = kw.get("batch_first", False)
    if kw.get("activation") == "callable":
        kw_e = dict(kw, activation=lambda x: x.tanh())
        kw_t = dict(kw, activation=torch.tanh)
    else:
        kw_e = kw_t = kw
    ref = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **kw_t).double()
    ours = T.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **kw_e, dtype=ember.float64)
    _load(ours, ref)
    x = rng.standard_normal((3, 5, 8) if bf else (5, 3, 8))
    me, mt = _masks(rng, 3, 5)
    _run(rng, ours, ref, [x], me, mt)


@pytest.mark.parity
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_torch(rng, norm_first):
    torch = _torch()
    ref = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0,
                                           norm_first=norm_first).double()
    ours = T.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first,
                                     dtype=ember.float64)
    _load(ours, ref)
    tgt, mem = rng.standard_normal((4, 2, 8)), rng.standard_normal((6, 2, 8))
    mask = T.Transformer.generate_square_subsequent_mask(4, dtype=ember.float64)
    mkpm = np.zeros((2, 6), dtype=bool)
    mkpm[0, -1] = True
    _run(rng, ours, ref, [tgt, mem],
         dict(tgt_mask=mask, memory_key_padding_mask=ember.tensor(mkpm)),
         dict(tgt_mask=torch.tensor(mask.numpy()), memory_key_padding_mask=torch.tensor(mkpm)))


@pytest.mark.parity
def test_encoder_and_decoder_stacks_match_torch(rng):
    torch = _torch()
    ref = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
                                      2, norm=torch.nn.LayerNorm(8), enable_nested_tensor=False)
    ref = ref.double()
    ours = T.TransformerEncoder(T.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                          dtype=ember.float64), 2,
                                norm=ember.nn.LayerNorm(8, dtype=ember.float64))
    _load(ours, ref)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in ref.named_parameters()]
    _run(rng, ours, ref, [rng.standard_normal((5, 2, 8))], {}, {})
    dref = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0),
                                       2).double()
    dours = T.TransformerDecoder(T.TransformerDecoderLayer(8, 2, 16, dropout=0.0,
                                                           dtype=ember.float64), 2)
    _load(dours, dref)
    _run(rng, dours, dref, [rng.standard_normal((3, 2, 8)), rng.standard_normal((5, 2, 8))],
         {}, {})


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_matches_torch(rng, batch_first):
    torch = _torch()
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
              dim_feedforward=16, dropout=0.0, batch_first=batch_first)
    ref = torch.nn.Transformer(**kw).double()
    ours = T.Transformer(**kw, dtype=ember.float64)
    _load(ours, ref)
    src = rng.standard_normal((2, 5, 8) if batch_first else (5, 2, 8))
    tgt = rng.standard_normal((2, 4, 8) if batch_first else (4, 2, 8))
    mask = T.Transformer.generate_square_subsequent_mask(4, dtype=ember.float64)
    _close(mask, torch.nn.Transformer.generate_square_subsequent_mask(4))
    _run(rng, ours, ref, [src, tgt], dict(tgt_mask=mask),
         dict(tgt_mask=torch.tensor(mask.numpy())))


def test_transformer_default_init_and_eval_determinism():
    model = T.Transformer(8, 2, 1, 1, 16)  # dropout 0.1
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    assert np.abs(w).max() <= np.sqrt(6 / (8 + 16))  # xavier_uniform_ on every matrix
    src, tgt = ember.randn(5, 2, 8), ember.randn(3, 2, 8)
    model.eval()
    a, b = model(src, tgt), model(src, tgt)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    model.train()
    assert not np.allclose(model(src, tgt).detach().numpy(), a.detach().numpy())


def test_transformer_errors():
    model = T.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="batch number of src and tgt must be equal"):
        model(ember.randn(5, 2, 8), ember.randn(3, 3, 8))
    with pytest.raises(RuntimeError, match="feature number of src and tgt must be equal to "
                                           "d_model=8"):
        model(ember.randn(5, 2, 8), ember.randn(3, 2, 6))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        T.TransformerEncoderLayer(8, 2, activation="tanh")
    layer = T.TransformerEncoderLayer(8, 2, 16)
    with pytest.raises(RuntimeError, match="2D attn_mask"):
        layer(ember.randn(5, 2, 8), src_mask=ember.zeros(4, 4))
