"""The per-op fast paths of the dispatch (issue 21: per-op overhead, generation): each one must
give what the general path gives, and hand every case it does not cover to that path (errors,
dtype promotion, NumPy integer arguments, gradients)."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from ember.ops._kernels.pointwise import broadcast_binary


def _t(*shape, dtype=np.float64, seed=0):
    return ember.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


# ------------------------------------------------------------------------------------ cat
def test_cat_same_layout_values_and_negative_dim():
    a, b = _t(1, 4, 3, 2), _t(1, 4, 1, 2, seed=1)
    out = ember.cat([a, b], dim=-2)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([a.numpy(), b.numpy()], axis=2))
    assert out.dtype is ember.float64


def test_cat_falls_back_for_promotion_empty_and_bad_shapes():
    a = _t(2, 3, dtype=np.float32)
    i = ember.ones(1, 3, dtype=ember.int64)
    mixed = ember.cat([a, i])  # dtypes differ: promoted by the general path
    assert mixed.dtype is ember.float32 and mixed.shape == (3, 3)
    np.testing.assert_array_equal(mixed.numpy()[2], np.ones(3, np.float32))
    # torch's legacy rule: a 1-D empty tensor is skipped whatever the others' shapes
    assert ember.cat([ember.empty(0), a]).shape == (2, 3)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        ember.cat([a, _t(2, 4, dtype=np.float32)])
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.cat([a, a], dim=2)
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        ember.cat([ember.tensor(1.0), ember.tensor(2.0)])
    assert ember.cat([a, a], dim=np.int64(1)).shape == (2, 6)  # a NumPy dim: general path


def test_cat_fast_path_gradient_and_out():
    a = _t(2, 3).requires_grad_()
    b = _t(2, 1, seed=1).requires_grad_()
    assert gradcheck(lambda x, y: ember.cat([x, y], dim=1), (a, b))
    out = ember.empty(0)
    res = ember.cat([a.detach(), b.detach()], 1, out=out)
    assert res is out and out.shape == (2, 4)


def _heads(t, seed):
    """k of (1, t, 3 * 8) split into 2 heads of 4: a (1, 2, t, 4) view whose heads interleave
    in memory, as a transformer's key/value cache starts out."""
    qkv = _t(1, t, 24, seed=seed)
    return qkv.view(1, t, 3, 2, 4).permute(2, 0, 3, 1, 4).unbind(0)[1]


@pytest.mark.parametrize("grad", [False, True])
def test_cat_result_is_contiguous_as_torchs(grad):
    # NOTE [The layout of cat's result]: torch's strides for these inputs (torch 2.13):
    # cat of two interleaved-head views along the sequence -> (2*5*4, 5*4, 4, 1), and of
    # transposed matrices -> (3, 1); NumPy's concatenate kept the inputs' axis order
    k0, k1 = _heads(4, 0), _heads(1, 1)
    pairs = [([k0, k1], 2, (40, 20, 4, 1)),
             ([_t(3, 2).t(), _t(3, 2, seed=1).t()], 0, (3, 1)),
             ([_t(2, 3), _t(2, 1, seed=1)], 1, (4, 1))]
    for ts, dim, strides in pairs:
        ts = [t.detach().requires_grad_(grad) for t in ts]
        out = ember.cat(ts, dim=dim)
        assert out.stride() == strides and out.is_contiguous()
        np.testing.assert_array_equal(out.detach().numpy(),
                                      np.concatenate([t.detach().numpy() for t in ts], dim))
        assert (out.grad_fn is not None) == grad
    # the next step's cat of the contiguous cache and one more row stays contiguous
    grown = ember.cat([ember.cat([k0, k1], dim=2), _heads(1, 2)], dim=2)
    assert grown.stride() == (48, 24, 4, 1)


# ------------------------------------------------------------------------------- getitem
@pytest.mark.parametrize("key", [(slice(None), -1), 0, (None, slice(1, 3)), Ellipsis, (),
                                 (0, Ellipsis, None), slice(-2, None), (slice(None, 2), 1, 2)])
def test_getitem_plain_keys_match_numpy(key):
    x = _t(3, 4, 5)
    got = x[key]
    want = x.numpy()[key]
    np.testing.assert_array_equal(got.numpy(), want)
    assert got.shape == np.shape(want)
    assert got._base is x  # a view, sharing the version counter
    x.add_(1)
    np.testing.assert_array_equal(got.numpy(), x.numpy()[key])


def test_getitem_other_keys_take_the_general_path():
    x = _t(3, 4)
    assert x[True].shape == (1, 3, 4)  # a bool adds a dim (not an int)
    np.testing.assert_array_equal(x[np.int64(1)].numpy(), x.numpy()[1])
    np.testing.assert_array_equal(x[::2].numpy(), x.numpy()[::2])
    np.testing.assert_array_equal(x[:, ember.tensor(2)].numpy(), x.numpy()[:, 2])
    np.testing.assert_array_equal(x[[0, 2]].numpy(), x.numpy()[[0, 2]])
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(IndexError, match="out of bounds"):
        x[:, 7]


def test_getitem_plain_key_gradient():
    x = _t(3, 4).requires_grad_()
    assert gradcheck(lambda t: t[:, -1], (x,))
    x[1:, 0].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[:, 0], [0.0, 1.0, 1.0])


# ------------------------------------------------------------------------------- views
def test_permute_fast_and_general_paths():
    x = _t(2, 3, 4)
    np.testing.assert_array_equal(x.permute(2, 0, 1).numpy(), x.numpy().transpose(2, 0, 1))
    np.testing.assert_array_equal(x.permute(-1, 0, -2).numpy(), x.numpy().transpose(2, 0, 1))
    np.testing.assert_array_equal(x.permute((np.int64(1), 0, 2)).numpy(),
                                  x.numpy().transpose(1, 0, 2))
    with pytest.raises(RuntimeError, match="duplicate dims"):
        x.permute(0, 0, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.permute(0, 1, 3)
    g = _t(2, 3, 4).requires_grad_()
    assert gradcheck(lambda t: t.permute(1, 2, 0), (g,))


def test_transpose_negative_and_out_of_range():
    x = _t(2, 3, 4)
    np.testing.assert_array_equal(x.transpose(-1, 0).numpy(), x.numpy().swapaxes(2, 0))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.transpose(0, 3)


def test_view_and_reshape_shapes():
    x = _t(2, 6)
    assert x.view(3, 4).shape == (3, 4)
    assert x.view(np.int64(4), 3).shape == (4, 3)  # NumPy ints converted
    assert x.reshape(-1, 2).shape == (6, 2)
    assert x.view(12, 0 + 1).shape == (12, 1)
    with pytest.raises(RuntimeError, match="invalid for input of size 12"):
        x.view(5, 2)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.view(-1, -1)
    with pytest.raises(RuntimeError, match="invalid shape dimension -2"):
        x.reshape(-2, 6)
    e = ember.empty(0, 3)
    assert e.view(3, 0).shape == (3, 0)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.t().view(12)


# ------------------------------------------------------------------------------- argmax
def test_argmax_dim_forms():
    x = _t(3, 5)
    np.testing.assert_array_equal(x.argmax(dim=-1).numpy(), x.numpy().argmax(-1))
    got = x.argmax(dim=0, keepdim=True)
    assert got.dtype is ember.int64 and got.shape == (1, 5)
    np.testing.assert_array_equal(x.argmin(np.int64(1)).numpy(), x.numpy().argmin(1))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.argmax(dim=2)
    assert ember.tensor(3.0).argmax(dim=0).item() == 0


# -------------------------------------------------------------------- broadcast binaries
def test_small_broadcast_add_takes_numpy_and_keeps_errors():
    a, b = np.ones((1, 1, 256), np.float32), np.ones((1, 256), np.float32)
    assert broadcast_binary("add", a, b) is None  # small output: NumPy's loop
    x, p = _t(1, 1, 256, dtype=np.float32), _t(1, 256, dtype=np.float32, seed=1)
    np.testing.assert_array_equal((x + p).numpy(), x.numpy() + p.numpy())
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        _t(2, 3) + _t(4, 3)


def test_large_row_broadcast_still_uses_the_kernel():
    a = np.random.default_rng(0).standard_normal((64, 1024)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((1024,)).astype(np.float32)
    out = broadcast_binary("add", a, b)
    assert out is not None
    np.testing.assert_array_equal(out, a + b)


# ------------------------------------------------------------------ nn decode-path checks
def test_embedding_index_checks_short_and_long_inputs():
    w = _t(10, 3)
    for idx in (np.array([[4]]), np.arange(40).reshape(4, 10) % 10):
        got = ember.nn.functional.embedding(ember.from_numpy(idx), w)
        np.testing.assert_array_equal(got.numpy(), w.numpy()[idx])
    for bad, shown in ((np.array([[10]]), "index 10"), (np.array([3, -1]), "index -1"),
                       (np.full(40, 12), "index 12"), (np.r_[np.arange(39) % 10, -1], "index -1")):
        with pytest.raises(IndexError, match=shown):
            ember.nn.functional.embedding(ember.from_numpy(bad), w)
    empty = ember.nn.functional.embedding(ember.empty(0, dtype=ember.int64), w)
    assert empty.shape == (0, 3)


@pytest.mark.parametrize("rows", [0, 1, 3, 200])
def test_layer_norm_rows_match_numpy(rows):
    x = _t(rows, 64)
    w, b = _t(64, seed=1), _t(64, seed=2)
    got = ember.nn.functional.layer_norm(x, (64,), w, b, 1e-5).numpy()
    a = x.numpy()
    want = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got, want * w.numpy() + b.numpy(), rtol=1e-10, atol=1e-12)


def test_linear_is_profiled_and_records_under_grad():
    from ember.profiler import profile
    x, w, b = _t(1, 1, 4), _t(3, 4, seed=1).requires_grad_(), _t(3, seed=2)
    with profile() as prof:
        y = ember.nn.functional.linear(x, w, b)
    assert "linear" in [e.name for e in prof.events]
    assert y.grad_fn is not None and y.grad_fn.name() == "LinearBackward0"
    with ember.no_grad():
        assert ember.nn.functional.linear(x, w, b).grad_fn is None
    assert gradcheck(lambda t: ember.nn.functional.linear(x, t, b), (w,))
