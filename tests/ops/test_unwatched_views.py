"""view/reshape/permute/transpose/unbind and cat when the call records nothing (no_grad, or no
input needs a gradient) wrap the NumPy result directly (NOTE [Unwatched no-grad views] in
ember/ops/registry.py). They must still give views that share storage, version counter and base,
torch's errors, copies where torch copies, and every hook that watches op calls must still see
them (profiler, forward AD, vmap, compile)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
import ember.autograd.forward_ad as fwAD
from ember.ops import registry


def _pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


VIEW_CALLS = [
    ("view", lambda x: x.view(2, 3, 2, 2)),
    ("view -1", lambda x: x.view(-1, 4)),
    ("reshape", lambda x: x.reshape(4, 6)),
    ("permute", lambda x: x.permute(2, 0, 1)),
    ("permute negative", lambda x: x.permute(-1, 0, -2)),
    ("transpose", lambda x: x.transpose(0, 2)),
    ("transpose negative", lambda x: x.transpose(-1, 0)),
    ("unbind", lambda x: x.unbind(0)[1]),
]


@pytest.mark.parametrize("grad", [False, True], ids=["plain", "requires_grad"])
@pytest.mark.parametrize("name,call", VIEW_CALLS, ids=[c[0] for c in VIEW_CALLS])
def test_no_grad_views_share_storage_version_and_base(name, call, grad):
    e, t = _pair(2, 3, 4)
    e.requires_grad_(grad)
    t.requires_grad_(grad)
    with ember.no_grad():
        ev = call(e)
    with torch.no_grad():
        tv = call(t)
    tv = tv.detach()
    np.testing.assert_array_equal(ev.detach().numpy(), tv.numpy())
    assert ev.shape == tuple(tv.shape) and ev.stride() == tv.stride()
    assert ev.grad_fn is None
    assert ev._base is e and ev.is_contiguous() == tv.is_contiguous()
    v0 = e._version
    with ember.no_grad():
        e.detach().add_(1.0)  # a write to the input's storage is seen through the view
    np.testing.assert_array_equal(ev.detach().numpy(), tv.numpy() + 1.0)
    assert ev._version == e._version == v0 + 1


def test_no_grad_view_of_a_view_keeps_the_first_base():
    x = ember.randn(2, 3, 4)
    with ember.no_grad():
        y = x.permute(1, 0, 2).transpose(0, 1).view(6, 4)
    assert y._base is x


def test_no_grad_reshape_of_non_contiguous_copies_like_torch():
    e, t = _pair(2, 3, 4)
    with ember.no_grad():
        er = e.transpose(0, 1).reshape(3, 8)
    tr = t.transpose(0, 1).reshape(3, 8)
    np.testing.assert_array_equal(er.numpy(), tr.detach().numpy())
    assert er._base is None  # a copy, as torch's (not a view of e)
    e.detach().zero_()
    np.testing.assert_array_equal(er.numpy(), tr.numpy())


def test_recorded_reshape_of_non_contiguous_owns_its_memory():
    e, t = _pair(2, 3, 4)
    e.requires_grad_(True)
    t.requires_grad_(True)
    er = e.transpose(0, 1).reshape(3, 8)
    tr = t.transpose(0, 1).reshape(3, 8)
    assert not np.shares_memory(er.detach().numpy(), e.detach().numpy())
    (er * ember.arange(24.0).reshape(3, 8)).sum().backward()
    (tr * torch.arange(24.0).reshape(3, 8)).sum().backward()
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


def test_no_grad_view_errors_as_before():
    x = ember.randn(2, 3, 4)
    with ember.no_grad():
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            x.transpose(0, 1).view(24)
        with pytest.raises(RuntimeError, match=r"shape '\[5, -1\]' is invalid for input of size"):
            x.view(5, -1)
        with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
            x.reshape(-1, -1)
        with pytest.raises(RuntimeError, match="duplicate dims are not allowed"):
            x.permute(0, 1, -2)
        with pytest.raises(RuntimeError, match="number of dimensions in the tensor input"):
            x.permute(0, 1)
        with pytest.raises(IndexError, match="Dimension out of range"):
            x.transpose(0, 3)
        with pytest.raises(IndexError, match="Dimension out of range"):
            x.unbind(-4)


def test_no_grad_unbind_of_one_dim_and_empty():
    with ember.no_grad():
        pieces = ember.tensor([1.0, 2.0]).unbind(-1)
        assert [p.shape for p in pieces] == [(), ()] and pieces[1].item() == 2.0
        assert ember.empty(0, 3).unbind(0) == ()


def test_grad_mode_calls_still_record():
    x = ember.randn(2, 3, 4, requires_grad=True)
    names = [x.view(6, 4).grad_fn.name(), x.permute(2, 0, 1).grad_fn.name(),
             x.transpose(0, 1).grad_fn.name(), x.unbind(0)[0].grad_fn.name(),
             ember.cat([x, x], dim=-1).grad_fn.name()]
    assert names == ["ViewBackward0", "PermuteBackward0", "TransposeBackward0",
                     "UnbindBackward0", "CatBackward0"]


@pytest.mark.parametrize("grad", [False, True], ids=["plain", "requires_grad"])
def test_no_grad_cat_is_a_new_tensor(grad):
    (a, ta), (b, tb) = _pair(1, 4, 5, 8), _pair(1, 4, 1, 8, seed=1)
    a.requires_grad_(grad)
    with ember.no_grad():
        out = ember.cat([a, b], dim=-2)
    np.testing.assert_array_equal(out.numpy(), torch.cat([ta, tb], dim=-2).detach().numpy())
    assert out.grad_fn is None and not out.requires_grad and out._base is None
    out.zero_()  # its own storage
    assert a.detach().numpy().any()


def test_unrecorded_cat_outside_no_grad():
    a, b = ember.randn(2, 3), ember.randn(1, 3)  # nothing requires grad: nothing recorded
    out = ember.cat((a, b))
    assert out.grad_fn is None and out.shape == (3, 3)


def test_unrecorded_cat_edge_cases_match_torch():
    # the unrecorded cat leaves to the checked path what NumPy would take differently
    r = np.random.default_rng(0)
    a = r.standard_normal((2, 4, 3)).astype(np.float32)
    b = r.standard_normal((2, 1, 3)).astype(np.float32)
    cases = [
        lambda m: m.cat([m.from_numpy(a).permute(1, 0, 2), m.from_numpy(b).permute(1, 0, 2)]),
        lambda m: m.cat([m.zeros(0), m.from_numpy(a)], dim=1),  # the legacy empty 1-D rule
        lambda m: m.cat([m.from_numpy(a), m.from_numpy(b).double()], dim=-2),  # promotion
        lambda m: m.cat([m.nn.Parameter(m.from_numpy(a)), m.from_numpy(b)], dim=1),
        lambda m: m.cat([m.zeros(0), m.zeros(2)]),
    ]
    with ember.no_grad(), torch.no_grad():
        for case in cases:
            got, want = case(ember), case(torch)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
            assert got.dtype == getattr(ember, str(want.dtype).split(".")[1])
            assert got.stride() == want.stride() and not got.requires_grad
        with pytest.raises(RuntimeError, match=r"cat\(\): Sizes of tensors must match except in "
                                               r"dimension 1. Expected size 2 but got size 1"):
            ember.cat([ember.from_numpy(a), ember.from_numpy(b)[:1]], dim=1)
        with pytest.raises(IndexError, match="Dimension out of range"):
            ember.cat([ember.from_numpy(a)], dim=3)


def test_hooks_still_see_the_calls():
    x = ember.randn(2, 3, 4)
    assert registry.unwatched()
    with ember.no_grad():
        # forward AD: the tangent follows the view ops
        with fwAD.dual_level():
            d = fwAD.make_dual(x, ember.ones(2, 3, 4))
            assert registry.unwatched() is False
            y = d.permute(2, 0, 1).reshape(4, 6)
            z = ember.cat([y, y], dim=0)
            assert fwAD.unpack_dual(z).tangent is not None
            np.testing.assert_array_equal(fwAD.unpack_dual(z).tangent.numpy(), np.ones((8, 6)))
        # vmap: the batch dim is not one of the view's
        out = ember.vmap(lambda r: r.transpose(0, 1).unbind(0)[0])(x)
        np.testing.assert_array_equal(out.numpy(), x.numpy().transpose(0, 2, 1)[:, 0])
        # the profiler records them
        with ember.profiler.profile() as prof:
            x.view(6, 4).permute(1, 0)
        names = {e.key for e in prof.key_averages()}
        assert {"view", "permute"} <= {n.split("::")[-1] for n in names}


@pytest.mark.parametrize("affine", [True, False])
def test_no_grad_layer_norm_matches_the_recorded_path(affine):
    base = np.random.default_rng(3).standard_normal((3, 8, 5)).astype(np.float32)
    x = ember.from_numpy(base).transpose(1, 2)  # non-contiguous (3, 5, 8)
    ln = ember.nn.LayerNorm(8, elementwise_affine=affine)
    tln = torch.nn.LayerNorm(8, elementwise_affine=affine)
    if affine:
        with ember.no_grad(), torch.no_grad():
            w = np.linspace(0.5, 1.5, 8, dtype=np.float32)
            ln.weight.copy_(ember.from_numpy(w))
            tln.weight.copy_(torch.from_numpy(w))
    with ember.no_grad():
        fast = ln(x)
    slow = ln(x)  # the parameters need gradients: recorded, through the op
    assert fast.grad_fn is None and (slow.grad_fn is not None) == affine
    np.testing.assert_array_equal(fast.numpy(), slow.detach().numpy())  # one kernel
    want = tln(torch.from_numpy(base).transpose(1, 2)).detach().numpy()
    np.testing.assert_allclose(fast.numpy(), want, rtol=1e-5, atol=1e-5)
    assert fast.shape == (3, 5, 8) and fast.dtype is ember.float32


def test_layer_norm_under_the_profiler_and_forward_ad():
    x = ember.randn(2, 4)
    with ember.no_grad(), ember.profiler.profile() as prof:
        ember.nn.functional.layer_norm(x, (4,))
    assert any("layernorm" in e.key.lower() for e in prof.key_averages())
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.ones(2, 4))
        y = ember.nn.functional.layer_norm(d, (4,))
        tangent = fwAD.unpack_dual(y).tangent  # a constant shift: LayerNorm removes it
        np.testing.assert_allclose(tangent.numpy(), np.zeros((2, 4)), atol=1e-6)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(1, 1, 16), (3, 16), (2, 5, 16)])
def test_no_grad_small_linear_matches_the_recorded_path(shape, bias):
    lin = ember.nn.Linear(16, 24, bias=bias)
    x = ember.randn(*shape)
    with ember.no_grad():
        fast = lin(x)
        strided = lin(ember.randn(16, *shape[:-1]).movedim(0, -1))  # non-contiguous: the op
    slow = lin(x)  # recorded: through Linear's op
    assert fast.grad_fn is None and slow.grad_fn.name() == "LinearBackward0"
    np.testing.assert_array_equal(fast.numpy(), slow.detach().numpy())
    tl = torch.nn.Linear(16, 24, bias=bias)
    with torch.no_grad():
        tl.weight.copy_(torch.from_numpy(lin.weight.detach().numpy()))
        if bias:
            tl.bias.copy_(torch.from_numpy(lin.bias.detach().numpy()))
        want = tl(torch.from_numpy(x.numpy())).numpy()
    np.testing.assert_allclose(fast.numpy(), want, rtol=1e-5, atol=1e-6)
    assert strided.shape == fast.shape


def test_small_linear_under_the_profiler():
    lin, x = ember.nn.Linear(4, 3), ember.randn(2, 4)
    with ember.no_grad(), ember.profiler.profile() as prof:
        lin(x)
    assert any("linear" in e.key.lower() for e in prof.key_averages())


@pytest.mark.parametrize("name,call", VIEW_CALLS + [("contiguous copy", lambda x: x * 1)],
                         ids=[c[0] for c in VIEW_CALLS] + ["copy"])
def test_is_view_is_a_method_as_torchs(name, call):
    e, t = _pair(2, 3, 4)
    with ember.no_grad():
        got = call(e)._is_view()
    with torch.no_grad():
        want = call(t)._is_view()
    assert got is want
    assert e._is_view() is t._is_view() is False
