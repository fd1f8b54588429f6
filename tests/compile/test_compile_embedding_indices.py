"""Index arrays an op wrapper computes in NumPy from the call's data must not be captured by
ember.compile as constants (NOTE [Arrays computed outside the registry] in _dynamo/capture.py):
embedding_bag's looked-up indices and bag ids (1-D input with offsets, 2-D input, padding,
per-sample weights) and embedding's int32 indices. Replayed as constants they gave every later
batch the first batch's rows (DLRM trained to chance under run.py --compile)."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F


def _batches(rng, kind, n=4):
    for _ in range(n):
        if kind == "1d":
            yield (ember.tensor(rng.integers(0, 10, 7)), ember.tensor([0, 2, 2, 5]))
        else:
            yield (ember.tensor(rng.integers(0, 10, (3, 4))),)


@pytest.mark.parametrize("kind", ["1d", "2d"])
@pytest.mark.parametrize("kw", [dict(mode="sum"), dict(mode="mean"), dict(mode="max"),
                                dict(mode="sum", padding_idx=3), dict(mode="sum", psw=True)])
def test_compiled_embedding_bag_follows_each_batch(kind, kw):
    rng = np.random.default_rng(0)
    kw = dict(kw)
    use_psw = kw.pop("psw", False)
    w_eager = ember.randn(10, 3, requires_grad=True)
    w_comp = w_eager.detach().clone().requires_grad_()

    def bag(w, idx, offsets=None):
        psw = ember.linspace(0.5, 1.5, idx.numel()).reshape(idx.shape) if use_psw else None
        return F.embedding_bag(idx, w, offsets, per_sample_weights=psw, **kw)

    compiled = ember.compile(bag)
    for args in _batches(rng, kind):
        want = bag(w_eager, *args)
        got = compiled(w_comp, *args)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
        want.pow(2).sum().backward()
        got.pow(2).sum().backward()
    np.testing.assert_allclose(w_comp.grad.numpy(), w_eager.grad.numpy(), rtol=1e-5)


def test_compiled_embedding_with_int32_indices_follows_each_batch():
    rng = np.random.default_rng(1)
    w = ember.randn(10, 3, requires_grad=True)
    compiled = ember.compile(lambda i: F.embedding(i, w).sum(1))
    for _ in range(4):
        idx = ember.tensor(rng.integers(0, 10, (2, 5)), dtype=ember.int32)
        np.testing.assert_allclose(compiled(idx).detach().numpy(),
                                   F.embedding(idx, w).sum(1).detach().numpy(), rtol=1e-6)
    assert compiled.last_breaks == []  # the int64 conversion is an op: nothing breaks


def test_compiled_embedding_bag_module_trains_as_eager():
    ember.manual_seed(0)
    eager = ember.nn.EmbeddingBag(20, 4, mode="sum")
    comp = ember.nn.EmbeddingBag(20, 4, mode="sum")
    comp.load_state_dict(eager.state_dict())
    step = ember.compile(comp)
    opts = [ember.optim.SGD(m.parameters(), lr=0.1) for m in (eager, comp)]
    rng = np.random.default_rng(2)
    for _ in range(5):
        idx, off = ember.tensor(rng.integers(0, 20, 8)), ember.tensor([0, 3, 5])
        for fn, opt in ((eager, opts[0]), (step, opts[1])):
            opt.zero_grad()
            fn(idx, off).square().mean().backward()
            opt.step()
    np.testing.assert_allclose(comp.weight.detach().numpy(), eager.weight.detach().numpy(),
                               rtol=1e-6)
