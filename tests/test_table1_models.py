"""The six Table 1 workloads (examples/models/table1.py) at reduced size: one training step's
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

from examples.models.table1 import WORKLOADS  # noqa: E402

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
}


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
