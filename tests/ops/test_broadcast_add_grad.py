"""Add's backward over a big broadcast gradient: both sums in one pass (NOTE [Broadcast add
gradients in one pass] in ember/ops/_kernels/reduce.py)."""
import numpy as np
import pytest

import ember
import ember.ops.elementwise as E
from ember.ops._kernels import reduce as R

# the one-pass sums run with the pool off (with it on, sum_to's parallel sums do: test_pooled.py)
pytestmark = pytest.mark.usefixtures("pool_off")


def _grads(a, b, g, fast):
    """Gradients of a + b for the upstream gradient g, with the one-pass sums on or off."""
    old = E._FAST_SUMS[0]
    E._FAST_SUMS[0] = fast
    try:
        ta = ember.tensor(a, requires_grad=True)
        tb = ember.tensor(b, requires_grad=True)
        (ta + tb).backward(ember.tensor(g))
        return ta.grad.numpy(), tb.grad.numpy()
    finally:
        E._FAST_SUMS[0] = old


# (a's shape, b's shape): both broadcast against each other (attention's q + k, either way
# round, with and without leading axes), one operand a row or a middle run
SHAPES = [((32, 20, 1, 256), (32, 1, 20, 256)),
          ((8, 1, 12, 64), (8, 9, 1, 64)),
          ((40, 1, 64), (1, 30, 64)),
          ((6, 5, 4, 8, 64), (64,)),
          ((7, 1, 1, 512), (7, 9, 10, 512)),
          ((300, 128), (1, 128))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_broadcast_add_grad_matches_numpy_sums_bit_for_bit(rng, sa, sb, dtype):
    a = rng.standard_normal(sa).astype(dtype)
    b = rng.standard_normal(sb).astype(dtype)
    g = rng.standard_normal(np.broadcast_shapes(sa, sb)).astype(dtype)
    assert R.sum_to_both(g, sa, sb) is not None  # the one-pass path applies
    ga, gb = _grads(a, b, g, fast=True)
    ref_a, ref_b = _grads(a, b, g, fast=False)
    assert ga.shape == sa and gb.shape == sb
    # the same order of additions as NumPy's reduction: equal, not just close
    np.testing.assert_array_equal(ga, ref_a)
    np.testing.assert_array_equal(gb, ref_b)


def test_sum_to_both_declines_what_it_does_not_cover(rng):
    g = rng.standard_normal((16, 20, 20, 128)).astype(np.float32)
    assert R.sum_to_both(g, g.shape, g.shape) is None  # nothing to reduce
    assert R.sum_to_both(g, (16, 20, 20, 1), g.shape) is None  # the last axis
    assert R.sum_to_both(g, (1, 20, 1, 128), g.shape) is None  # two separate runs
    assert R.sum_to_both(g[:, :, :, ::2], (16, 20, 1, 64), (16, 1, 20, 64)) is None  # strided
    assert R.sum_to_both(g.astype(np.float16), (16, 20, 1, 128), (16, 1, 20, 128)) is None
    assert R.sum_to_both(g[:1, :5].copy(), (1, 5, 1, 128), (1, 1, 20, 128)) is None  # small
    ga, gb = R.sum_to_both(g, (16, 20, 1, 128), (16, 1, 20, 128))
    np.testing.assert_array_equal(ga, g.sum(axis=2, keepdims=True))
    np.testing.assert_array_equal(gb, g.sum(axis=1, keepdims=True))


def test_broadcast_add_double_backward_keeps_the_graph(rng):
    # under create_graph the backward is recorded with ember ops (sum_to), not the kernel
    a = ember.tensor(rng.standard_normal((16, 20, 1, 128)), requires_grad=True)
    b = ember.tensor(rng.standard_normal((16, 1, 20, 128)), requires_grad=True)
    y = ((a + b) ** 2).sum()
    (ga,) = ember.autograd.grad(y, a, create_graph=True)
    (gga,) = ember.autograd.grad(ga.sum(), a)
    # d/da sum_s 2 (a + b_s) summed over a's elements: 2 * S per element
    np.testing.assert_allclose(gga.numpy(), np.full((16, 20, 1, 128), 40.0))


def test_broadcast_add_alpha_takes_the_general_path(rng):
    a = rng.standard_normal((16, 20, 1, 128)).astype(np.float32)
    b = rng.standard_normal((16, 1, 20, 128)).astype(np.float32)
    ta = ember.tensor(a, requires_grad=True)
    tb = ember.tensor(b, requires_grad=True)
    ember.add(ta, tb, alpha=2).sum().backward()
    np.testing.assert_allclose(ta.grad.numpy(), np.full(a.shape, 20.0))
    np.testing.assert_allclose(tb.grad.numpy(), np.full(b.shape, 40.0))  # alpha * T


@pytest.mark.parity
def test_attention_scores_grads_match_torch(rng):
    torch = pytest.importorskip("torch")
    q = rng.standard_normal((8, 6, 1, 64))
    k = rng.standard_normal((8, 1, 70, 64))
    bias = rng.standard_normal(64)
    v = rng.standard_normal(64)

    def run(lib):
        ts = [lib.tensor(x, requires_grad=True) for x in (q, k, bias, v)]
        e = lib.tanh(ts[0] + ts[1] + ts[2])
        lib.softmax(e @ ts[3], dim=-1).pow(2).sum().backward()
        return [t.grad.numpy() for t in ts]

    for ours, ref in zip(run(ember), run(torch), strict=True):
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parity
def test_gnmt_s_full_size_gradients_match_torch():
    """GNMT-S at its benchmark size (B=32, T=S=20, H=256: the attention scores' 3.3M elements
    take the one-pass sums and the one-pass matrix-vector backward): every parameter gradient
    of one step vs torch on the same weights and data."""
    torch = pytest.importorskip("torch")
    import os
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if root not in sys.path:
        sys.path.insert(0, root)
    from examples.models.table1 import WORKLOADS

    models = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        model, _, batches, loss_fn, _ = WORKLOADS["gnmt"](lib)
        models[lib.__name__] = (model, batches, loss_fn)
    t_model, t_batches, t_loss_fn = models["torch"]
    e_model, _, e_loss_fn = models["ember"]
    state = {k: v.detach().numpy().copy() for k, v in t_model.state_dict().items()}
    e_model.load_state_dict({k: ember.from_numpy(v) for k, v in state.items()})
    (src, tgt_in), tgt_out = t_batches[0]
    arrays = [a.numpy().copy() for a in (src, tgt_in, tgt_out)]
    losses = []
    for lib, model, loss_fn in ((torch, t_model, t_loss_fn), (ember, e_model, e_loss_fn)):
        out = model(lib.from_numpy(arrays[0]), lib.from_numpy(arrays[1]))
        loss = loss_fn(out, lib.from_numpy(arrays[2]))
        loss.backward()
        losses.append(loss.item())
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)
    t_params = dict(t_model.named_parameters())
    for key, ep in e_model.named_parameters():
        tg = t_params[key].grad.numpy()
        np.testing.assert_allclose(ep.grad.numpy(), tg, rtol=1e-3, atol=1e-3 * np.abs(tg).max(),
                                   err_msg=f"gradient of {key}")
