"""Op._run's argument handling (one and two arguments are unrolled, more take the loop): which
inputs record a gradient, ctx.needs_input_grad, and keyword parameters reaching forward, for
every subset of inputs that require grad; checked against torch."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import ember
from ember.autograd.function import Op


class _Probe(Op):
    """x * y * z (any number of inputs), recording what its ctx saw."""

    seen = []

    @staticmethod
    def forward(ctx, *arrays, scale=1.0):
        _Probe.seen.append(tuple(ctx.needs_input_grad))
        ctx.save_for_backward(*arrays)
        ctx.scale = scale
        return np.prod(np.stack(arrays), axis=0) * scale

    @staticmethod
    def backward(ctx, grad):
        saved = ctx.saved_tensors
        out = []
        for i in range(len(saved)):
            g = grad * ctx.scale
            for j, s in enumerate(saved):
                if j != i:
                    g = g * s
            out.append(g)
        return tuple(out)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("kw", [{}, {"scale": 2.0}])
def test_needs_input_grad_and_gradients_for_every_subset(rng, n, kw):
    values = [rng.standard_normal((2, 3)) for _ in range(n)]
    for mask in itertools.product([False, True], repeat=n):
        ts = [ember.tensor(v, requires_grad=m) for v, m in zip(values, mask, strict=True)]
        _Probe.seen.clear()
        out = _Probe.apply(*ts, **kw)
        scale = kw.get("scale", 1.0)
        np.testing.assert_allclose(out.detach().numpy(), np.prod(values, axis=0) * scale)
        assert out.requires_grad == any(mask)
        assert _Probe.seen == [mask if any(mask) else ()]
        if any(mask):
            out.sum().backward()
        for i, (t, m) in enumerate(zip(ts, mask, strict=True)):
            if not m:
                assert t.grad is None
                continue
            others = [values[j] for j in range(n) if j != i]
            want = np.prod(others, axis=0) * scale if others else np.full((2, 3), scale)
            np.testing.assert_allclose(t.grad.numpy(), want)


def test_no_grad_records_nothing_and_non_tensor_arguments_pass_through():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        y = _Probe.apply(x, x)
    assert not y.requires_grad and y.grad_fn is None
    z = _Probe.apply(x, np.full(2, 3.0))  # an array argument reaches forward as it is
    assert z.requires_grad and z.tolist() == [3.0, 3.0]
    z.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


@pytest.mark.parity
def test_builtin_ops_grads_per_subset_match_torch(rng):
    torch = pytest.importorskip("torch")
    a, b, c = (rng.standard_normal((3, 4)) for _ in range(3))
    cases = [(lambda x: x.exp().sum(), (a,)), (lambda x, y: (x * y).sum(), (a, b)),
             (lambda x, y: (x @ y.T).sum(), (a, b)),
             (lambda x, y, z: ember_or_torch_addcmul(x, y, z), (a, b, c))]
    for fn, vals in cases:
        for mask in itertools.product([False, True], repeat=len(vals)):
            if not any(mask):
                continue
            e = [ember.tensor(v, requires_grad=m) for v, m in zip(vals, mask, strict=True)]
            t = [torch.tensor(v, requires_grad=m) for v, m in zip(vals, mask, strict=True)]
            fn(*e).backward()
            fn(*t).backward()
            for ee, tt in zip(e, t, strict=True):
                assert (ee.grad is None) == (tt.grad is None)
                if ee.grad is not None:
                    np.testing.assert_allclose(ee.grad.numpy(), tt.grad.numpy(), rtol=1e-6)


def ember_or_torch_addcmul(x, y, z):
    return x.addcmul(y, z, value=0.5).sum()
