"""Every runnable module of the module table (ember/testing/_module_table.py), compiled with
ember.compile, gives eager's outputs, input and parameter gradients and floating buffers
(running statistics) on two calls with different inputs - the second call a replay, which
must read the new inputs and update live state as eager does. float64, and float32 for the
generated float32 kernels."""
from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

import ember
from ember.testing._module_table import MODULE_TABLE

RUNNABLE = sorted(n for n in MODULE_TABLE if MODULE_TABLE[n].forward)


def _floats(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _floats(o)]
    if isinstance(out, ember.Tensor) and out.is_floating_point() and not out.is_sparse:
        return [out]
    return []


def _step(module, arrays, dtype):
    """(outputs, input and parameter gradients, floating buffers) of one forward + backward of
    a weighted sum of the floating outputs."""
    xs = [ember.tensor(a.astype(dtype) if a.dtype == np.float64 else a) for a in arrays]
    xs = [x.requires_grad_() if x.is_floating_point() else x for x in xs]
    for p in module.parameters():
        p.grad = None
    outs = _floats(module(*xs))
    loss = sum(((o.double() * (1 + ember.arange(o.numel()).reshape(o.shape) % 3)).sum()
                for o in outs if o.requires_grad), ember.tensor(0.0, dtype=ember.float64))
    if loss.requires_grad:
        loss.backward()
    grads = [None if t.grad is None else t.grad.numpy().copy()
             for t in [*xs, *module.parameters()]]
    return ([o.detach().numpy().copy() for o in outs], grads,
            [b.numpy().copy() for b in module.buffers() if b.is_floating_point()])


def _assert_same(expected, got, tol, what):
    assert len(expected) == len(got), what
    for i, (a, b) in enumerate(zip(expected, got, strict=True)):
        assert (a is None) == (b is None), f"{what} {i}: one side is None"
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=tol, atol=tol, err_msg=f"{what} {i}")


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", RUNNABLE)
def test_compiled_module_matches_eager(name, dtype):
    spec = MODULE_TABLE[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    calls = [[make(rng) for make in spec.inputs] for _ in range(2)]

    def build():
        ember.manual_seed(0)
        m = spec.make(ember)
        return (m.double() if dtype == np.float64 else m.float()).train(spec.train)
    eager, compiled = build(), build()
    step = ember.compile(compiled)
    tol = 1e-9 if dtype == np.float64 else 1e-4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, arrays in enumerate(calls):
            expected = _step(eager, arrays, dtype)
            got = _step(step, arrays, dtype)
            for part, a, b in zip(("output", "gradient", "buffer"), expected, got, strict=True):
                _assert_same(a, b, tol, f"call {i + 1}, {part}")
