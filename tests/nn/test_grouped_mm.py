"""F.grouped_mm (and torch._grouped_mm's form): the four layouts' values and gradients against
torch 2.13 (which runs them on CPU in float32/bfloat16/float16), gradcheck of the products in
float64, the rows past offs[-1], and torch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck
from ember.nn.functional._grouped_mm import _grouped_products
from ember.testing import assert_close

torch = pytest.importorskip("torch")

G, M, N, K, T = 3, 8, 8, 8, 16  # torch wants 16-byte strides, also in 16-bit types
OFFS = [4, 4, 16]  # the middle group is empty

# (mat_a shape, mat_b shape, offs or None): 2-D x 3-D, 3-D x 3-D, 2-D x 2-D, 3-D x 2-D
LAYOUTS = {
    "2d3d": ((T, K), (G, K, N), OFFS),
    "3d3d": ((G, M, K), (G, K, N), None),
    "2d2d": ((M, T), (T, N), OFFS),
    "3d2d": ((G, M, K), (K, T), OFFS),
}


def _run(lib, a, b, offs, g, dtype):
    """grouped_mm forward and backward under lib; the float32 arrays of y, a.grad, b.grad."""
    ta, tb = (lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True) for x in (a, b))
    o = None if offs is None else lib.tensor(offs, dtype=lib.int32)
    y = lib.nn.functional.grouped_mm(ta, tb, offs=o)
    assert str(y.dtype).split(".")[-1] == dtype
    y.backward(lib.tensor(g, dtype=y.dtype))
    return [x.detach().float().numpy() for x in (y, ta.grad, tb.grad)]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_values_and_gradients_match_torch(layout, dtype):
    sa, sb, offs = LAYOUTS[layout]
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    out_shape = {"2d3d": (T, N), "3d3d": (G, M, N), "2d2d": (G, M, N), "3d2d": (M, T)}[layout]
    g = rng.standard_normal(out_shape)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=2e-2, atol=5e-2)
    for ours, theirs in zip(_run(ember, a, b, offs, g, dtype), _run(torch, a, b, offs, g, dtype)):
        assert_close(ours, theirs, **tol)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_gradcheck_float64(layout):
    sa, sb, offs = LAYOUTS[layout]
    rng = np.random.default_rng(1)
    a = ember.tensor(rng.standard_normal(sa), requires_grad=True)
    b = ember.tensor(rng.standard_normal(sb), requires_grad=True)
    assert gradcheck(lambda a, b: _grouped_products(a, b, offs), (a, b))


def test_rows_past_the_last_offset_are_zero_with_zero_gradients():
    rng = np.random.default_rng(2)
    a = ember.tensor(rng.standard_normal((12, K)), dtype=ember.float32, requires_grad=True)
    b = ember.tensor(rng.standard_normal((2, K, N)), dtype=ember.float32, requires_grad=True)
    y = F.grouped_mm(a, b, offs=ember.tensor([3, 8], dtype=ember.int32))
    assert y.shape == (12, N)
    ad, bd = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(y[:3].detach().numpy(), ad[:3] @ bd[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y[3:8].detach().numpy(), ad[3:8] @ bd[1], rtol=1e-5, atol=1e-5)
    assert not y[8:].detach().numpy().any()
    y.backward(ember.ones_like(y))
    assert not a.grad[8:].numpy().any()
    np.testing.assert_allclose(a.grad[:3].numpy(), np.ones((3, N)) @ bd[0].T, rtol=1e-5)


def test_private_form_takes_offs_positionally_and_weight_transposed():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((T, K)).astype(np.float32)
    w = rng.standard_normal((G, N, K)).astype(np.float32)  # (experts, out, in), as a Linear's
    offs = np.array(OFFS, np.int32)
    ours = ember._grouped_mm(ember.tensor(x), ember.tensor(w).transpose(-2, -1),
                             ember.tensor(offs))
    theirs = torch._grouped_mm(torch.tensor(x), torch.tensor(w).transpose(-2, -1),
                               torch.tensor(offs))
    assert_close(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


def test_empty_tokens():
    b = ember.zeros(2, K, N)
    y = F.grouped_mm(ember.zeros(0, K), b, offs=ember.tensor([0, 0], dtype=ember.int32))
    assert y.shape == (0, N)


_A, _B = (12, K), (2, K, N)
_I32 = [4, 12]


@pytest.mark.parametrize("a, b, offs, kwargs, match", [
    (_A, _B, _I32, dict(), None),  # the call that works, so the table's calls differ by one thing
    ((8,), _B, _I32, dict(), "mat_a has to be 2-D or 3-D"),
    (_A, (2, 2, K, N), _I32, dict(), "mat_b has to be 2-D or 3-D"),
    ((12, 4), _B, _I32, dict(), "contraction dimensions"),
    (_A, _B, [4, 8, 12], dict(), "offs has 3 groups but the 3-D operand has 2"),
    (_A, _B, None, dict(), "offs is required"),
    ((2, M, K), _B, _I32, dict(), "offs must be None"),
    ((2, M, K), (3, K, N), None, dict(), "group counts"),
    (_A, _B, [8, 4], dict(), "non-decreasing"),
    (_A, _B, [4, 20], dict(), "at most 12"),
    (_A, _B, _I32, dict(bias=True), "bias is not supported"),
    (_A, _B, _I32, dict(out_dtype="float64"), "out_dtype must match"),
])
def test_errors(a, b, offs, kwargs, match):
    ta, tb = ember.zeros(a), ember.zeros(b)
    o = None if offs is None else ember.tensor(offs, dtype=ember.int32)
    if kwargs.get("bias"):
        kwargs = dict(bias=ember.zeros(N))
    if "out_dtype" in kwargs:
        kwargs = dict(out_dtype=getattr(ember, kwargs["out_dtype"]))
    if match is None:
        assert F.grouped_mm(ta, tb, offs=o, **kwargs).shape == (12, N)
        return
    with pytest.raises(RuntimeError, match=match):
        F.grouped_mm(ta, tb, offs=o, **kwargs)


def test_dtype_errors_as_torch_raises_them():
    a, b = np.zeros(_A), np.zeros(_B)
    offs = np.array(_I32, np.int32)
    for lib in (ember, torch):
        o = lib.tensor(offs)
        with pytest.raises(RuntimeError):
            lib.nn.functional.grouped_mm(lib.tensor(a), lib.tensor(b), offs=o)  # float64
        with pytest.raises(RuntimeError):
            lib.nn.functional.grouped_mm(lib.tensor(a, dtype=lib.float16),
                                         lib.tensor(b, dtype=lib.float32), offs=o)
        with pytest.raises(RuntimeError):
            lib.nn.functional.grouped_mm(lib.tensor(a, dtype=lib.float32),
                                         lib.tensor(b, dtype=lib.float32), offs=o.long())
    with pytest.raises(RuntimeError, match="expected mat_a to be float32, bfloat16 or float16"):
        F.grouped_mm(ember.tensor(a), ember.tensor(b), offs=ember.tensor(offs))
    with pytest.raises(RuntimeError, match="same dtype, got ember.float16 and ember.float32"):
        F.grouped_mm(ember.tensor(a, dtype=ember.float16), ember.tensor(b, dtype=ember.float32),
                     offs=ember.tensor(offs))
    with pytest.raises(RuntimeError, match="offs must be int32, got ember.int64"):
        F.grouped_mm(ember.zeros(_A), ember.zeros(_B), offs=ember.tensor(offs).long())
