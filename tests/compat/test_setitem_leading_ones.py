"""Index assignment drops the value's leading size-1 dims, as torch does (found by the
nn-zero-to-hero WaveNet notebook: ``logits[i] = model(Xtr[[7 + i]])`` writes a (1, 27) output
into a (27,) row). ember did so only without autograd (NumPy's assignment rule); with a value
that requires grad it went through copy_, whose stricter rule refused the shape."""
import numpy as np
import pytest

import ember

CASES = [
    ("a[0] = v", (4, 3), (1, 3)), ("a[0] = v", (4, 3), (1, 1, 3)), ("a[0] = v", (4, 3), (2, 3)),
    ("a[0:2] = v", (4, 3), (1, 2, 3)), ("a[[0, 1]] = v", (4, 3), (1, 2, 3)),
    ("a[0, 1] = v", (4, 3), (1,)), ("a[0, 1] = v", (4, 3), (1, 1)),
    ("a[...] = v", (4, 3), (1, 4, 3)), ("a[a > 0] = v", (4, 3), (1, 1)),
    ("a[:, 0] = v", (4, 3), (1, 4)), ("a[:, 0] = v", (4, 3), (4, 1)),
    ("a[0] = v", (4, 3), (3, 1)), ("a[1:3, [0, 2]] = v", (4, 3), (1, 1, 2, 2)),
]


def _run(lib, code, sa, sv, grad):
    a = lib.zeros(*sa)
    w = lib.arange(1.0, 1.0 + int(np.prod(sv))).reshape(sv)
    w.requires_grad_(grad)
    v = w * 2 if grad else w
    try:
        exec(code, {"a": a, "v": v})
    except RuntimeError:
        return RuntimeError
    out = [a.detach().numpy().copy()]
    if grad:
        (a * lib.arange(1.0, 1.0 + a.numel()).reshape(sa)).sum().backward()
        out.append(w.grad.numpy().copy())
    return out


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("code,sa,sv", CASES)
def test_leading_ones_of_value(code, sa, sv, grad):
    res = _run(ember, code, sa, sv, grad)
    if sv in ((2, 3), (4, 1), (3, 1)):
        assert res is RuntimeError
    else:
        assert res is not RuntimeError
        if grad:
            assert res[1].shape == sv   # the gradient keeps the value's own shape


@pytest.mark.parity
@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("code,sa,sv", CASES)
def test_matches_torch(code, sa, sv, grad):
    torch = pytest.importorskip("torch")
    ours, theirs = _run(ember, code, sa, sv, grad), _run(torch, code, sa, sv, grad)
    if theirs is RuntimeError:
        assert ours is RuntimeError
    else:
        for o, t in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(o, t)


def test_copy_keeps_its_stricter_rule():
    with pytest.raises(RuntimeError, match="copy_"):
        ember.zeros(4, 3)[0].copy_(ember.ones(1, 3))
