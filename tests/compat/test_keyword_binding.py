"""Every call form torch's argument parser accepts for a top-level function or Tensor method,
as its type stubs spell the overloads (see _stubs.py), binds in ember: ``torch.reshape(x,
shape=s)``, ``x.permute(dims=d)``, ``torch.max(x, other=y)``, ``x.copy_(other=y)``. A form
ember rejects is listed below with its reason; the list must stay exact in both directions."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

from _stubs import rejected_forms  # noqa: E402

_STUB_ARTEFACT = "the stub allows it but torch 2.13's parser rejects it too (checked by calling)"
_SCALAR_FIRST = ("the deprecated scalar-first form: called, it works (NOTE [Deprecated "
                 "scalar-first overloads]), but the shown signature is torch's current one, "
                 "which it does not fit")
_CUDA = "an accelerator-only keyword (ember is CPU-only, like this torch build's kernels)"
KNOWN = {
    "torch": {
        "add": _SCALAR_FIRST,
        "sub": _SCALAR_FIRST,
        "subtract": _STUB_ARTEFACT,
        "addcdiv": _SCALAR_FIRST,
        "addcmul": _SCALAR_FIRST,
        "rsub": "rsub(input, scalar, alpha) with a positional alpha: not supported yet",
        "addmm": "out_dtype= (a CUDA-only kernel in torch 2.13: CPU raises NotImplementedError)",
        "baddbmm": "out_dtype= (a CUDA-only kernel in torch 2.13: CPU raises NotImplementedError)",
        "bmm": "out_dtype= (a CUDA-only kernel in torch 2.13: CPU raises NotImplementedError)",
        "mm": "out_dtype= (a CUDA-only kernel in torch 2.13: CPU raises NotImplementedError)",
        "from_file": "pin_memory=/requires_grad= not supported yet",
        "histogramdd": "histogramdd(input, bins, range, weight, density) all positional: "
                       "not supported yet (keyword-only in ember)",
        "hsmm": "sparse-only (ember has no sparse CSR kernels)",
        "isin": "the scalar overloads' names element=/test_element=",
        "repeat_interleave": "the repeats-only overload repeat_interleave(repeats=t)",
        "result_type": "the scalar overloads' names scalar=/scalar1=/scalar2=",
        "tensor": _STUB_ARTEFACT + ": dtype= etc. are keyword-only in torch",
        "set_num_threads": _STUB_ARTEFACT + ": torch takes no keyword arguments here",
        "set_num_interop_threads": _STUB_ARTEFACT + ": torch takes no keyword arguments here",
    },
    "Tensor": {
        "cpu": "memory_format= not supported yet",
        "cuda": _CUDA,
        "is_pinned": _CUDA,
        "pin_memory": _CUDA,
        "record_stream": _CUDA,
        "new": "the stub's (cls, other) form of the legacy constructor",
        "new_tensor": _STUB_ARTEFACT + ": dtype= etc. are keyword-only in torch",
        "requires_grad_": _STUB_ARTEFACT + ": torch rejects mode=",
        "subtract": _STUB_ARTEFACT,
        "subtract_": _STUB_ARTEFACT,
    },
}


@pytest.fixture(scope="module")
def rejected():
    return rejected_forms(ember, torch)


def test_the_stubs_cover_the_builtins():
    from _stubs import read_overloads
    table = read_overloads(torch)
    shared = {ns: [n for n in names if hasattr(ember if ns == "torch" else ember.Tensor, n)]
              for ns, names in table.items()}
    assert len(shared["torch"]) > 450 and len(shared["Tensor"]) > 480, {
        ns: len(v) for ns, v in shared.items()}
    assert {"reshape", "max", "batch_norm", "softmax"} <= set(shared["torch"])


def test_every_torch_call_form_binds_or_is_listed(rejected):
    new = [f"{ns}.{name}: {problems[0]}" for ns, names in rejected.items()
           for name, problems in names.items() if name not in KNOWN.get(ns, {})]
    assert not new, "call forms torch accepts and ember rejects:\n" + "\n".join(new)


def test_listed_rejections_are_current(rejected):
    fixed = [f"{ns}.{name}" for ns, names in KNOWN.items() for name in names
             if name not in rejected.get(ns, {})]
    assert not fixed, "these now bind: delete them from KNOWN:\n" + "\n".join(fixed)


# ------------------------------------------------------------------ the forms, called
def _both(fn):
    """fn(lib, x) under torch and ember on the same data, results compared."""
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7
    outs = []
    for lib in (torch, ember):
        r = fn(lib, lib.tensor(data.copy()))
        outs.append(r)
    t, e = outs
    if isinstance(t, (tuple, list)):
        assert len(t) == len(e)
        for a, b in zip(t, e):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-6)
    elif isinstance(t, torch.Tensor):
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)
    else:
        assert str(e).split(".")[-1] == str(t).split(".")[-1]


CALLS = {
    "reshape shape=": lambda L, x: L.reshape(input=x, shape=(4, 6)),
    "method reshape shape=": lambda L, x: x.reshape(shape=(6, 4)),
    "view size=": lambda L, x: x.view(size=(4, 6)),
    "view dtype=": lambda L, x: x.view(dtype=L.int32),
    "permute dims=": lambda L, x: L.permute(x, dims=(2, 0, 1)),
    "method permute dims=": lambda L, x: x.permute(dims=(1, 2, 0)),
    "expand size=": lambda L, x: x[:1].expand(size=(3, 3, 4)),
    "broadcast_to size=": lambda L, x: L.broadcast_to(x[:1], size=(2, 3, 4)),
    "method broadcast_to varargs": lambda L, x: x[:1].broadcast_to(2, 3, 4),
    "repeat repeats=": lambda L, x: x.repeat(repeats=(1, 2, 1)),
    "method tile varargs": lambda L, x: x.tile(2, 1),
    "method squeeze varargs": lambda L, x: x[:1, :, :1].squeeze(0, 2),
    "split split_size=": lambda L, x: x.split(split_size=2, dim=2),
    "tensor_split indices=": lambda L, x: L.tensor_split(x, indices=[1, 3], dim=2),
    "tensor_split sections=": lambda L, x: x.tensor_split(sections=2, dim=2),
    "tensor_split tensor": lambda L, x: L.tensor_split(x, L.tensor([1, 2]), dim=2),
    "hsplit indices=": lambda L, x: L.hsplit(x, indices=[1]),
    "method vsplit varargs": lambda L, x: x.vsplit(1),
    "swapaxes axis0=": lambda L, x: L.swapaxes(x, axis0=0, axis1=2),
    "sum_to_size size=": lambda L, x: x.sum_to_size(size=(1, 3, 1)),
    "max other=": lambda L, x: L.max(x, other=x.flip(0)),
    "min other= out=": lambda L, x: L.min(x, other=x.flip(0), out=L.empty(0)),
    "count_nonzero varargs": lambda L, x: (x > 1).count_nonzero(0, 2),
    "dot tensor=": lambda L, x: L.dot(x[0, 0], tensor=x[1, 0]),
    "copy_ other=": lambda L, x: L.zeros(2, 3, 4).copy_(other=x),
    "det input=": lambda L, x: L.det(input=x[:, :3, :3] + L.eye(3)),
    "matrix_power input=": lambda L, x: L.matrix_power(input=x[:, :3, :3], n=2),
    "can_cast from_=": lambda L, x: L.can_cast(from_=L.float32, to=L.int32),
    "promote_types type1=": lambda L, x: L.promote_types(type1=L.float32, type2=L.int64),
    "result_type tensor=": lambda L, x: L.result_type(tensor=x, other=2.5),
    "arange end=": lambda L, x: L.arange(end=5, dtype=L.float32),
    "zeros_like pin_memory=": lambda L, x: L.zeros_like(x, pin_memory=False),
    "softmax positional dtype": lambda L, x: L.softmax(x, 1, L.float64),
    "method softmax positional dtype": lambda L, x: x.log_softmax(2, L.float64),
    "softmax out=": lambda L, x: L.softmax(x, -1, out=L.empty(0)),
    "batch_norm aten order": lambda L, x: L.batch_norm(
        x, L.tensor([1.0, 2.0, 3.0]), L.tensor([0.5, 0.0, -0.5]), L.zeros(3), L.ones(3),
        False, 0.1, 1e-5, False),
    "instance_norm aten order": lambda L, x: L.instance_norm(
        x, L.tensor([1.0, 2.0, 3.0]), L.tensor([0.5, 0.0, -0.5]), None, None, True, 0.1, 1e-5,
        False),
    "layer_norm cudnn_enable=": lambda L, x: L.layer_norm(x, (4,), None, None, 1e-5,
                                                          cudnn_enable=False),
    "group_norm cudnn_enabled=": lambda L, x: L.group_norm(x, 3, cudnn_enabled=False),
    "embedding weight first": lambda L, x: L.embedding(x[0], L.tensor([[0, 2], [1, 1]])),
    "embedding padding_idx": lambda L, x: L.embedding(x[1], L.tensor([0, 2]), 2),
    "dropout train=": lambda L, x: L.dropout(x, 0.3, train=False),
    "threshold out=": lambda L, x: L.threshold(x, 1.0, -1.0, out=L.empty(0)),
    "trapz x=": lambda L, x: L.trapz(x, x=x.cumsum(-1)),
}


@pytest.mark.parametrize("form", sorted(CALLS))
def test_torch_call_forms_compute_as_torch(form):
    _both(CALLS[form])


def test_deprecated_keywords_warn_as_torch():
    with pytest.warns(FutureWarning, match="`min_value` is deprecated"):
        m = ember.nn.Hardtanh(min_value=-2.0, max_value=2.0)
    assert (m.min_val, m.max_val) == (-2.0, 2.0)
    loader = ember.utils.data.DataLoader([1, 2, 3], in_order=False)
    assert [int(b) for b in loader] == [1, 2, 3] and loader.in_order is False


def test_ambiguous_forms_raise():
    x = ember.ones(2, 3)
    with pytest.raises(TypeError, match="tensor_split"):
        ember.tensor_split(x, 2, sections=2)
    with pytest.raises(TypeError, match="max"):
        ember.max(x, 1, other=x)
    with pytest.raises(TypeError, match="arange"):
        ember.arange()
    with pytest.raises(RuntimeError, match="tril_indices"):
        ember.tril_indices(3, 3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.arange(end=3).tolist() == [0, 1, 2]


def test_rrelu_draws_from_the_given_generator_like_torch():
    # torch.rrelu (the aten binding) takes generator=; F.rrelu does not
    x = -ember.ones(4, 5)
    g1, g2 = ember.Generator().manual_seed(3), ember.Generator().manual_seed(3)
    a = ember.rrelu(x, 0.1, 0.3, training=True, generator=g1)
    b = ember.rrelu(x, 0.1, 0.3, True, g2)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert ((a.numpy() <= -0.1) & (a.numpy() >= -0.3)).all() and len(np.unique(a.numpy())) > 1
    y = x.clone()
    assert ember.rrelu_(y, 0.1, 0.3, True, generator=ember.Generator().manual_seed(3)) is y
    np.testing.assert_array_equal(y.numpy(), a.numpy())
    t = torch.rrelu(-torch.ones(4, 5), 0.1, 0.3, training=True,
                    generator=torch.Generator().manual_seed(3))
    assert ((t.numpy() <= -0.1) & (t.numpy() >= -0.3)).all()
    np.testing.assert_allclose(ember.rrelu(x, 0.1, 0.3).numpy(), -0.2 * np.ones((4, 5)),
                               rtol=1e-6)


def test_index_reduce_writes_out_like_torch():
    base = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
    src = np.full((2, 4), 2.0, np.float32)
    outs = []
    for lib in (torch, ember):
        out = lib.empty(0)
        r = lib.index_reduce(lib.tensor(base), 0, lib.tensor([0, 2]), lib.tensor(src), "prod",
                             out=out)
        assert r is out
        outs.append(out.numpy())
    np.testing.assert_array_equal(outs[1], outs[0])
