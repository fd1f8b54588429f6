"""Classes of gaps the compatibility corpus found (tools/compat): factory signatures, the Tensor
surface, lenient behaviours where torch warns and carries on, dense x sparse products, and RNN
state given as a list. Values are compared with torch on the same inputs."""
from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


# ------------------------------------------------------------------ factories
@pytest.mark.parametrize("name", ["empty", "zeros", "ones", "rand", "randn"])
@pytest.mark.parametrize("form", ["varargs", "tuple", "list", "Size", "size_kw"])
def test_factory_size_forms(name, form):
    fn = getattr(ember, name)
    call = {"varargs": lambda: fn(2, 3), "tuple": lambda: fn((2, 3)),
            "list": lambda: fn([2, 3]), "Size": lambda: fn(ember.Size([2, 3])),
            "size_kw": lambda: fn(size=(2, 3))}[form]
    out = call()
    assert tuple(out.shape) == (2, 3)
    assert out.dtype is ember.float32


@pytest.mark.parametrize("name", ["empty", "zeros", "ones", "rand", "randn"])
def test_factory_keywords_torch_has(name):
    out = getattr(ember, name)(2, dtype=ember.float64, device="cpu", requires_grad=True,
                               layout=ember.strided, pin_memory=False)
    assert out.dtype is ember.float64 and out.requires_grad
    assert ember.empty(2, memory_format=ember.contiguous_format).shape == (2,)


def test_factory_size_given_twice_raises_type_error():
    with pytest.raises(TypeError, match="size given both"):
        ember.zeros(2, size=(2,))
    with pytest.raises(TypeError, match="unexpected keyword argument 'sizes'"):
        ember.zeros(sizes=(2,))


def _doc_params(fn):
    """Parameter names of a torch builtin from its docstring's signature line."""
    m = re.search(r"^\w+\((.*?)\)\s*->", (fn.__doc__ or "").strip(), re.M)
    names = []
    for part in (m.group(1).split(",") if m else []):
        part = part.strip().split("=")[0].split(":")[0].strip()
        if part and part.strip("\\") != "*":
            names.append(part.lstrip("*"))
    return names


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn", "full", "arange",
                                  "zeros_like", "ones_like", "empty_like", "full_like",
                                  "rand_like", "randn_like", "randint", "linspace", "eye",
                                  "tensor", "as_tensor", "cat", "stack", "softmax", "sum", "mean",
                                  "max", "where", "clamp", "matmul", "allclose", "isclose",
                                  "equal", "multinomial", "bernoulli"])
def test_signature_keywords_match_torch(name):
    # every keyword torch documents for the function is accepted by ember's (by name)
    theirs = _doc_params(getattr(torch, name))
    assert theirs, f"could not read torch.{name}'s signature"
    params = inspect.signature(getattr(ember, name)).parameters
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    varargs = [p.name for p in params.values() if p.kind is p.VAR_POSITIONAL]
    missing = [p for p in theirs if p not in params and p not in varargs and not takes_kwargs]
    assert not missing, f"ember.{name} lacks torch's parameters {missing}"


# ------------------------------------------------------------------ Tensor surface
def test_tensor_device_flags_are_false_on_cpu():
    x = ember.zeros(2)
    for flag in ("is_xpu", "is_mps", "is_meta", "is_quantized", "is_cuda", "is_nested",
                 "is_sparse_csr", "is_mkldnn", "is_vulkan", "is_xla", "is_ipu"):
        assert getattr(x, flag) is False, flag
    assert x.is_cpu is True and x.is_conj() is False and x.is_neg() is False


@pytest.mark.parametrize("args", [(2, 3), (ember.Size([2, 3]),), ([1.0, 2.0],), ()])
def test_tensor_new_forms_match_torch(args):
    targs = tuple(torch.Size(a) if isinstance(a, ember.Size) else a for a in args)
    ours = ember.zeros(1, dtype=ember.float64).new(*args)
    ref = torch.zeros(1, dtype=torch.float64).new(*targs)
    assert tuple(ours.shape) == tuple(ref.shape) and str(ours.dtype)[-7:] == str(ref.dtype)[-7:]
    if args and isinstance(args[0], list):
        np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_tensor_resize_keeps_leading_elements_and_refuses_grad():
    x = ember.arange(6.0).resize_(2, 2)
    np.testing.assert_array_equal(x.numpy(), torch.arange(6.0).resize_(2, 2).numpy())
    assert tuple(ember.zeros(3).resize_as_(ember.zeros(1, 3)).shape) == (1, 3)
    with pytest.raises(RuntimeError, match="require grad"):
        ember.zeros(2, requires_grad=True).resize_(4)


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((5, 3), False), ((7, 3), True),
                                        ((3, 5), True), ((2, 2, 2), False)])
def test_tensor_fill_diagonal_matches_torch(shape, wrap):
    ours = ember.zeros(*shape).fill_diagonal_(4.0, wrap=wrap)
    ref = torch.zeros(*shape).fill_diagonal_(4.0, wrap=wrap)
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


@pytest.mark.parametrize("accumulate", [False, True])
def test_tensor_put_matches_torch_with_gradient(accumulate):
    a = np.arange(12.0).reshape(3, 4)
    idx, src = [0, 5, -1, 5], [1.0, 2.0, 3.0, 4.0]
    ours = ember.tensor(a, requires_grad=True)
    ref = torch.tensor(a, requires_grad=True)
    o = (ours * 1).put_(ember.tensor(idx), ember.tensor(src, dtype=ember.float64), accumulate)
    r = (ref * 1).put_(torch.tensor(idx), torch.tensor(src, dtype=torch.float64), accumulate)
    if accumulate:
        np.testing.assert_array_equal(o.detach().numpy(), r.detach().numpy())
    o.sum().backward()
    r.sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), ref.grad.numpy())
    with pytest.raises(IndexError, match="out of bounds"):
        ember.zeros(3).put_(ember.tensor([3]), ember.tensor([1.0]))


def test_tensor_comparisons_return_bools_like_torch():
    a, b = np.array([1.0, 2.0, np.nan]), np.array([1.0 + 1e-9, 2.1, np.nan])
    for kw in ({}, {"equal_nan": True}, {"atol": 0.2}):
        assert ember.tensor(a).allclose(ember.tensor(b), **kw) == \
            torch.tensor(a).allclose(torch.tensor(b), **kw)
        np.testing.assert_array_equal(ember.isclose(ember.tensor(a), ember.tensor(b), **kw),
                                      torch.isclose(torch.tensor(a), torch.tensor(b), **kw))
    assert ember.tensor([1, 2]).equal(ember.tensor([1, 2]))
    assert not ember.tensor([1, 2]).equal(ember.tensor([[1, 2]]))
    with pytest.raises(RuntimeError, match="did not match"):
        ember.isclose(ember.zeros(2), ember.zeros(2, dtype=ember.float64))


def test_tensor_sampling_methods_exist_and_respect_probabilities():
    ember.manual_seed(0)
    draws = ember.tensor([0.0, 1.0, 0.0]).multinomial(5, replacement=True)
    np.testing.assert_array_equal(draws.numpy(), [1] * 5)
    assert ember.ones(4).bernoulli().sum().item() == 4


def test_tensor_small_composites_match_torch(rng):
    a = rng.standard_normal((3, 5))
    e, t = ember.tensor(a), torch.tensor(a)
    np.testing.assert_allclose(e.diff(dim=1).numpy(), t.diff(dim=1).numpy())
    np.testing.assert_allclose(e.logaddexp(e * 2).numpy(), t.logaddexp(t * 2).numpy())
    mn, mx = e.aminmax(dim=1)
    np.testing.assert_allclose(mn.numpy(), t.aminmax(dim=1).min.numpy())
    np.testing.assert_allclose(mx.numpy(), t.aminmax(dim=1).max.numpy())
    np.testing.assert_allclose(e.sum_to_size(1, 5).numpy(), t.sum_to_size(1, 5).numpy())
    assert [p.shape[1] for p in e.hsplit([1, 3])] == [p.shape[1] for p in t.hsplit([1, 3])]


# ------------------------------------------------------------------ lenient behaviours
@pytest.mark.parametrize("layer,shape", [("Dropout2d", (3, 4)), ("Dropout3d", (3, 4, 5)),
                                         ("Dropout3d", (3, 4))])
def test_feature_dropout_without_batch_dim_warns_and_carries_on(layer, shape):
    x = ember.ones(*shape)
    with pytest.warns(UserWarning, match="deprecated"):
        y = getattr(ember.nn, layer)(p=0.5)(x)
    assert tuple(y.shape) == shape
    kept = y.numpy()
    assert set(np.unique(kept)) <= {0.0, 2.0}
    if len(shape) == 3:   # one draw per (dim 0, dim 1) entry, shared along the rest
        assert np.all(kept == kept[..., :1])


def test_feature_dropout_1d_input_raises_like_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="at least 2 dimensions"):
            ember.nn.functional.dropout2d(ember.ones(5))


def test_lenient_loss_and_softmax_forms_warn_and_match_torch():
    x = np.array([[0.2, 0.3], [1.5, -1.0]])
    with pytest.warns(UserWarning):
        ours = ember.nn.MSELoss(size_average=False)(ember.tensor(x), ember.zeros(2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.nn.MSELoss(size_average=False)(torch.tensor(x), torch.zeros(2, 2))
        refs = torch.nn.functional.softmax(torch.tensor(x))
    assert ours.item() == pytest.approx(ref.item())
    with pytest.warns(UserWarning, match="Implicit dimension"):
        sm = ember.nn.functional.softmax(ember.tensor(x))
    np.testing.assert_allclose(sm.numpy(), refs.numpy())


# ------------------------------------------------------------------ sparse products
def _sparse_pair():
    idx, val = [[0, 1, 2], [1, 0, 2]], [1.0, 2.0, 3.0]
    return (ember.sparse_coo_tensor(ember.tensor(idx), ember.tensor(val), (3, 3)),
            torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(val), (3, 3)))


@pytest.mark.parametrize("how", ["at", "mm", "matmul", "sparse.mm"])
def test_dense_times_sparse_matches_torch_with_gradient(how, rng):
    s, ts = _sparse_pair()
    a = rng.standard_normal((2, 3)).astype(np.float32)
    d, td = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    op = {"at": lambda x, y: x @ y, "mm": lambda x, y, lib=None: x.mm(y),
          "matmul": lambda x, y: x.matmul(y)}.get(how)
    ours = op(d, s) if op else ember.sparse.mm(d, s)
    ref = op(td, ts) if op else torch.sparse.mm(td, ts)
    assert not ours.is_sparse
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-6)
    ours.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(d.grad.numpy(), td.grad.numpy(), rtol=1e-6)


def test_sparse_products_coo_coo_vector_and_addmm_match_torch():
    s, ts = _sparse_pair()
    np.testing.assert_allclose((s @ s).to_dense().numpy(), (ts @ ts).to_dense().numpy())
    v = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    np.testing.assert_allclose((ember.tensor(v) @ s).numpy(), (torch.tensor(v) @ ts).numpy())
    np.testing.assert_allclose((s @ ember.tensor(v)).numpy(), (ts @ torch.tensor(v)).numpy())
    m = np.ones((3, 2), dtype=np.float32)
    np.testing.assert_allclose(
        ember.addmm(ember.tensor(m), s, ember.tensor(m), beta=0.5, alpha=2).numpy(),
        torch.addmm(torch.tensor(m), ts, torch.tensor(m), beta=0.5, alpha=2).numpy())


# ------------------------------------------------------------------ RNN state as a list
@pytest.mark.parametrize("cell", [False, True])
def test_lstm_accepts_state_as_list(cell):
    if cell:
        layer = ember.nn.LSTMCell(3, 4)
        out = layer(ember.ones(2, 3), [ember.zeros(2, 4), ember.zeros(2, 4)])
        assert tuple(out[0].shape) == (2, 4)
    else:
        layer = ember.nn.LSTM(3, 4, batch_first=True)
        out, (h, c) = layer(ember.ones(2, 5, 3), [ember.zeros(1, 2, 4), ember.zeros(1, 2, 4)])
        assert tuple(out.shape) == (2, 5, 4) and tuple(h.shape) == (1, 2, 4)


# ------------------------------------------------------------------ NumPy keyword spellings
@pytest.mark.parametrize("call", [
    lambda lib, x: x.sum(axis=1, keepdims=True),
    lambda lib, x: x.mean(axis=0),
    lambda lib, x: x.amax(axis=1, keepdims=True),
    lambda lib, x: x.argmax(axis=1),
    lambda lib, x: x.max(axis=1).values,
    lambda lib, x: x.logsumexp(axis=1),
    lambda lib, x: x.std(axis=0),
    lambda lib, x: x.cumsum(axis=1),
    lambda lib, x: x.softmax(axis=1),
    lambda lib, x: lib.softmax(x, axis=0),
    lambda lib, x: lib.cat([x, x], axis=1),
    lambda lib, x: lib.stack([x, x], axis=0),
    lambda lib, x: lib.sum(x, axis=(0, 1)),
])
def test_numpy_axis_keepdims_spellings_match_torch(call, rng):
    # d2l writes reductions NumPy-style; torch's argument parser maps axis/keepdims for them
    a = rng.standard_normal((3, 4))
    np.testing.assert_allclose(call(ember, ember.tensor(a)).numpy(),
                               call(torch, torch.tensor(a)).numpy(), rtol=1e-12)


def test_numpy_alias_and_canonical_together_raise():
    with pytest.raises(TypeError, match="alias 'axis'"):
        ember.ones(2, 2).sum(dim=0, axis=0)
