"""The six Table 1 workloads and GPT-S (examples/models/table1.py) at reduced size: one step's
forward and backward in ember matches PyTorch on the same weights and data (loss, every
parameter gradient, batch-norm running statistics; float32, float64 for the BN networks).
The benchmark compares speed; this checks that it compares the same arithmetic."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from examples.models.table1 import (  # noqa: E402
    WORKLOADS,
    _gpt_module,
    adamw_param_groups,
    gpt_generate,
)

pytestmark = pytest.mark.parity


def _images(rng, batch, size):
    x = rng.standard_normal((batch, 3, size, size)).astype(np.float32)
    return (x,), rng.integers(0, 10, batch).astype(np.int64)


def _gnmt_data(rng, src_len=5, tgt_len=4, batch=2):
    src = rng.integers(0, 2000, (src_len, batch)).astype(np.int64)
    tgt_in = rng.integers(0, 2000, (tgt_len, batch)).astype(np.int64)
    return (src, tgt_in), rng.integers(0, 2000, (tgt_len, batch)).astype(np.int64)


def _ncf_data(rng, batch=16):
    u = rng.integers(0, 10000, batch).astype(np.int64)
    i = rng.integers(0, 10000, batch).astype(np.int64)
    return (u, i), rng.integers(0, 2, batch).astype(np.float32)


# Batch 2. AlexNet's and VGG's classifiers fix the input size. ResNet-50 and MobileNetV2 end in
# a global pool, but at 32x32 their last stages are 1x1 maps: batch norm over two numbers is
# ill-conditioned (in float64 the two libraries already differ by 1e-4 after three such blocks),
# so they get 64x64 (2x2 last maps, eight values per channel).
DATA = {
    "alexnet": lambda rng: _images(rng, 2, 64),
    "vgg19": lambda rng: _images(rng, 2, 32),
    "resnet50": lambda rng: _images(rng, 2, 64),
    "mobilenet_v2": lambda rng: _images(rng, 2, 64),
    "gnmt": _gnmt_data,
    "ncf": _ncf_data,
    "gpts": lambda rng: _gpt_data(rng),
}


def _gpt_data(rng, batch=2, length=16):
    tokens = rng.integers(0, 1024, (batch, length + 1)).astype(np.int64)
    return (tokens[:, :-1],), tokens[:, 1:]


# Networks with batch norm compare in float64. At batch 2 they are ill-conditioned in float32
# (every BN divides by the spread of a few numbers): torch's own float32 gradients of ResNet-50
# differ from its float64 ones by 10% of their scale, and some MobileNetV2 bias gradients that
# are exactly 0 in exact arithmetic (a BN follows) come out as rounding noise. In float64 both
# libraries agree to ~1e-12, a far stronger check than a loose float32 tolerance.
FLOAT64 = {"resnet50", "mobilenet_v2"}


def _build(lib, name):
    lib.manual_seed(0)
    model, _, _, loss_fn, _ = WORKLOADS[name](lib)
    if name in FLOAT64:
        model.double()
    model.train()
    for m in model.modules():  # dropout masks cannot match across libraries; BN stays in train
        if isinstance(m, lib.nn.Dropout):
            m.eval()
    return model, loss_fn


def _step(lib, model, loss_fn, inputs, target):
    model.zero_grad()
    out = model(*[lib.from_numpy(a.copy()) for a in inputs])
    loss = loss_fn(out, lib.from_numpy(target.copy()))
    loss.backward()
    return loss


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_table1_model_step_matches_torch(name):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    t_model, t_loss_fn = _build(torch, name)
    e_model, e_loss_fn = _build(ember, name)
    state = {k: v.detach().numpy().copy() for k, v in t_model.state_dict().items()}
    e_model.load_state_dict({k: ember.from_numpy(v) for k, v in state.items()})

    inputs, target = DATA[name](np.random.default_rng(1))
    dtype = ember.float64 if name in FLOAT64 else ember.float32
    rtol, atol = (1e-9, 1e-11) if name in FLOAT64 else (1e-4, 1e-5)
    if name in FLOAT64:
        inputs = tuple(a.astype(np.float64) for a in inputs)
    t_loss = _step(torch, t_model, t_loss_fn, inputs, target)
    e_loss = _step(ember, e_model, e_loss_fn, inputs, target)

    np.testing.assert_allclose(e_loss.item(), t_loss.item(), rtol=rtol, atol=atol)
    t_params = dict(t_model.named_parameters())
    e_params = dict(e_model.named_parameters())
    assert sorted(e_params) == sorted(t_params)
    for key, tp in t_params.items():
        ep = e_params[key]
        assert ep.grad is not None, f"{name}: no gradient for {key}"
        assert ep.grad.dtype == dtype
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"{name}: gradient of {key}")
    # the batch-norm running statistics were updated the same way
    t_buffers = dict(t_model.named_buffers())
    for key, eb in e_model.named_buffers():
        np.testing.assert_allclose(eb.numpy(), t_buffers[key].numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"{name}: buffer {key}")


def _copy_into(t_model, e_model):
    state = {k: v.detach().numpy().copy() for k, v in t_model.state_dict().items()}
    e_model.load_state_dict({k: ember.from_numpy(v) for k, v in state.items()})


def test_gpts_parameter_count_and_tied_head():
    model, opt, batches, _, items = WORKLOADS["gpts"](ember)
    assert sum(p.numel() for p in model.parameters()) == 3_454_464
    assert model.head.weight is model.tok.weight
    assert items == 1024 and len(batches) == 4
    x, y = batches[0]
    assert tuple(x.shape) == (8, 128) and tuple(y.shape) == (8, 128)
    np.testing.assert_array_equal(x.numpy()[:, 1:], y.numpy()[:, :-1])
    decayed, plain = opt.param_groups
    assert decayed["weight_decay"] == 0.1 and plain["weight_decay"] == 0.0
    assert all(p.dim() == 2 for p in decayed["params"])
    assert all(p.dim() == 1 for p in plain["params"])
    # 2 embeddings + 4 blocks x 4 Linear weights; the tied head is the token embedding
    assert len(decayed["params"]) == 18
    assert opt.defaults["betas"] == (0.9, 0.95) and opt.defaults["lr"] == 3e-4


def test_gpts_tied_weight_gradient_is_the_sum_of_both_uses():
    model, _ = _build(ember, "gpts")
    (idx,), target = _gpt_data(np.random.default_rng(2))
    loss = WORKLOADS["gpts"](ember)[3](model(ember.from_numpy(idx)), ember.from_numpy(target))
    emb = ember.autograd.grad(loss, [model.tok.weight])[0].numpy()
    # the head's share alone: gradient of the loss w.r.t. a detached copy used only as the head
    w = model.tok.weight
    model.head.weight = ember.nn.Parameter(w.detach().clone())
    loss2 = WORKLOADS["gpts"](ember)[3](model(ember.from_numpy(idx)), ember.from_numpy(target))
    g_emb, g_head = ember.autograd.grad(loss2, [w, model.head.weight])
    np.testing.assert_allclose(emb, g_emb.numpy() + g_head.numpy(), rtol=1e-5, atol=1e-7)
    assert np.abs(g_head.numpy()).sum() > 0 and np.abs(g_emb.numpy()).sum() > 0


def test_gpts_adamw_step_matches_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    # float64: Adam divides by sqrt(v) + eps, so for gradients near eps the float32 rounding of
    # the gradient moves the update by ~1% of lr, more than the weight decay (lr * 0.1 * w)
    # this test must see. In float64 both libraries agree to ~1e-12.
    t_model, t_loss_fn = _build(torch, "gpts")
    e_model, e_loss_fn = _build(ember, "gpts")
    t_model.double()
    e_model.double()
    _copy_into(t_model, e_model)
    t_opt = torch.optim.AdamW(adamw_param_groups(t_model, 0.1), lr=3e-4, betas=(0.9, 0.95),
                              eps=1e-8)
    e_opt = ember.optim.AdamW(adamw_param_groups(e_model, 0.1), lr=3e-4, betas=(0.9, 0.95),
                              eps=1e-8)
    rng = np.random.default_rng(3)
    for _ in range(2):  # the second step uses non-trivial moments and bias corrections
        inputs, target = _gpt_data(rng)
        t_loss = _step(torch, t_model, t_loss_fn, inputs, target)
        e_loss = _step(ember, e_model, e_loss_fn, inputs, target)
        np.testing.assert_allclose(e_loss.item(), t_loss.item(), rtol=1e-10)
        t_opt.step()
        e_opt.step()
    t_params = dict(t_model.named_parameters())
    for key, ep in e_model.named_parameters():
        np.testing.assert_allclose(ep.detach().numpy(), t_params[key].detach().numpy(),
                                   rtol=1e-9, atol=1e-12, err_msg=f"gpts: parameter {key}")
        t_state, e_state = t_opt.state[t_params[key]], e_opt.state[ep]
        for moment in ("exp_avg", "exp_avg_sq"):
            want = t_state[moment].numpy()
            np.testing.assert_allclose(e_state[moment].numpy(), want, rtol=1e-8,
                                       atol=1e-10 * np.abs(want).max(),
                                       err_msg=f"gpts: {moment} of {key}")


def _gpt_pair(torch):
    torch.manual_seed(0)
    t_model = _gpt_module(torch)().eval()
    e_model = _gpt_module(ember)().eval()
    _copy_into(t_model, e_model)
    return t_model, e_model


def test_gpts_generation_matches_torch_with_and_without_cache():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    t_model, e_model = _gpt_pair(torch)
    prompt = np.random.default_rng(4).integers(0, 1024, (1, 16)).astype(np.int64)
    got = {}
    for lib, model in ((torch, t_model), (ember, e_model)):
        for use_cache in (True, False):
            with lib.no_grad():
                out = gpt_generate(lib, model, lib.from_numpy(prompt.copy()), 12, use_cache)
            got[lib.__name__, use_cache] = out.numpy()
    want = got["torch", True]
    assert want.shape == (1, 28)
    np.testing.assert_array_equal(want[:, :16], prompt)
    np.testing.assert_array_equal(got["torch", False], want)  # the oracle agrees with itself
    np.testing.assert_array_equal(got["ember", True], want)
    np.testing.assert_array_equal(got["ember", False], want)


def test_gpts_cache_logits_match_full_forward():
    # the chunked path too: several new tokens after a cache need a causal mask aligned to the
    # end of the keys (torch's is_causal aligns it to the start)
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    t_model, e_model = _gpt_pair(torch)
    idx = np.random.default_rng(5).integers(0, 1024, (2, 10)).astype(np.int64)
    with torch.no_grad():
        want = t_model(torch.from_numpy(idx.copy())).numpy()
    with ember.no_grad():
        full = e_model(ember.from_numpy(idx.copy())).numpy()
        first, cache = e_model(ember.from_numpy(idx[:, :4].copy()), [])
        rest, cache = e_model(ember.from_numpy(idx[:, 4:9].copy()), cache)
        last, cache = e_model(ember.from_numpy(idx[:, 9:].copy()), cache)
    np.testing.assert_allclose(full, want, rtol=1e-4, atol=1e-5)
    chunked = np.concatenate([first.numpy(), rest.numpy(), last.numpy()], axis=1)
    np.testing.assert_allclose(chunked, want, rtol=1e-4, atol=1e-5)
    assert len(cache) == 4 and tuple(cache[0][0].shape) == (2, 4, 10, 64)
    with pytest.raises(ValueError, match="exceed the context of 128"):
        e_model(ember.zeros(1, 119, dtype=ember.int64), cache)
