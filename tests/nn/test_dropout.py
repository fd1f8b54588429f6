"""Dropout layers: identity in eval, masks and scaling in training, gradients follow the
mask."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
from ember import nn

F = nn.functional


@pytest.mark.parametrize("layer,shape", [
    (nn.Dropout(0.3), (2, 3)), (nn.Dropout1d(0.3), (2, 3, 4)), (nn.Dropout2d(0.3), (2, 3, 4, 4)),
    (nn.Dropout3d(0.3), (2, 3, 2, 2, 2)), (nn.AlphaDropout(0.3), (5,)),
    (nn.FeatureAlphaDropout(0.3), (2, 3, 4))])
def test_eval_mode_is_exact_identity(layer, shape):
    x = ember.randn(*shape)
    layer.eval()
    assert layer(x) is x


def test_dropout_training_mask_scale_and_gradient():
    x = ember.ones(200, 50, requires_grad=True)
    y = F.dropout(x, 0.4, training=True)
    out = y.detach().numpy()
    kept = out != 0
    np.testing.assert_allclose(out[kept], 1 / 0.6, rtol=1e-6)
    assert abs(kept.mean() - 0.6) < 0.02
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), out)  # d/dx = mask / (1 - p)
    assert F.dropout(x, 0.0, training=True) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).detach().numpy(), np.zeros((200, 50)))


def test_dropout_reproducible_under_manual_seed():
    ember.manual_seed(5)
    a = F.dropout(ember.ones(100)).numpy().copy()
    ember.manual_seed(5)
    b = F.dropout(ember.ones(100)).numpy()
    np.testing.assert_array_equal(a, b)


def test_channel_dropout_zeroes_whole_channels():
    x = ember.ones(8, 16, 5, 5)
    y = F.dropout2d(x, 0.5, training=True).numpy()
    per_channel = y.reshape(8, 16, -1)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1))
    assert 0 < (per_channel == 0).all(-1).mean() < 1
    z = F.dropout1d(ember.ones(4, 6, 10), 0.5).numpy()
    assert np.all((z == 0).all(-1) | (z == 2.0).all(-1))
    unbatched = F.dropout1d(ember.ones(6, 10), 0.5).numpy()
    assert np.all((unbatched == 0).all(-1) | (unbatched == 2.0).all(-1))
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(ember.ones(2, 3, 4), 0.5)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(ember.ones(2, 3, 4, 5))


@pytest.mark.parametrize("fn,shape", [
    (F.dropout2d, (2, 3, 4, 5, 6)), (F.dropout2d, (2, 3, 2, 2, 2, 2)),
    (F.dropout3d, (2, 3, 2, 2, 2, 2)), (F.dropout2d, (6, 8)), (F.dropout3d, (2, 3, 4))])
def test_channel_dropout_on_deprecated_ranks_warns_and_drops_per_channel(fn, shape):
    # torch 2.13 takes these ranks with a deprecation warning (a 5-D input to dropout2d
    # included) and draws one mask entry per (dim 0, dim 1) pair over the remaining dims
    name = fn.__name__
    with pytest.warns(UserWarning, match=rf"{name}: Received a {len(shape)}-D input to {name}, "
                                         "which is deprecated"):
        y = fn(ember.ones(*shape), 0.5, training=True).numpy()
    per_channel = y.reshape(shape[0], shape[1], -1)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1))
    with pytest.warns(UserWarning, match="deprecated"):
        assert fn(ember.ones(*shape), 0.5, training=False).shape == shape


def test_alpha_dropout_keeps_selu_statistics():
    x = ember.randn(200000)
    y = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    _, counts = np.unique(y, return_counts=True)
    assert counts.max() > 0.15 * y.size  # dropped units all sit at one saturation value
    f = F.feature_alpha_dropout(ember.randn(4, 8, 3, 3), 0.5, training=True).numpy()
    flat = f.reshape(4, 8, -1)
    constant = np.isclose(flat, flat[..., :1]).all(-1)
    assert constant.any()


def test_inplace_dropout_and_bad_p():
    x = ember.ones(10, 10)
    out = F.dropout(x, 0.5, training=True, inplace=True)
    assert out is x and (x.numpy() == 0).any()
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.dropout(x, 1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(-0.1)


def test_module_train_eval_switch():
    drop = nn.Dropout(0.5)
    x = ember.ones(1000)
    assert (drop(x).numpy() == 0).any()
    drop.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(drop(x).numpy(), np.ones(1000))
    assert repr(drop) == "Dropout(p=0.5, inplace=False)"
