"""Integer and boolean tensors an op keeps for backward (indices, targets, masks, offsets,
lengths) are version-checked like float ones (NOTE [Guarded inputs]): changed in place between
forward and backward, out of range or in range, backward raises torch's error: never a crash
and never a silently wrong gradient.

The walk covers every op-database sample that has a non-float tensor argument and the
nn.functional ops that take one; it also records which Op classes received integer arrays, so
that an op added later without a guard shows up here as a failure.
"""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._tensor import Tensor
from ember.autograd import function as _function
from ember.testing import op_db

VERSION_ERROR = "modified by an inplace operation"


def _tensors(obj):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors(o)


def _clone_tree(obj):
    """A deep copy of a sample's arguments; float tensors become float64 leaves needing grad."""
    if isinstance(obj, Tensor):
        if obj.is_floating_point():
            return obj.detach().double().clone().requires_grad_()
        return obj.clone()
    if isinstance(obj, list):
        return [_clone_tree(o) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_clone_tree(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _clone_tree(v) for k, v in obj.items()}
    return obj


def _run(fn, args, kwargs):
    """Forward then backward; the leaves' gradients, or None when nothing needs a gradient."""
    out = fn(*args, **kwargs)
    outs = [o for o in _tensors(out) if o.requires_grad]
    if not outs:
        return None, None
    loss = sum((o * o).sum() for o in outs)  # non-linear: gradients depend on the values
    leaves = [t for t in _tensors((args, kwargs)) if t.requires_grad]
    return loss, leaves


def _modify(t, how):
    if t.dtype == ember.bool:
        t.logical_not_()
    elif how == "out of range":
        t.add_(10**7)
    else:  # in range: a valid index for any non-empty dimension
        t.zero_()


def _check_case(fn, args, kwargs, position, how):
    """Run a case twice: untouched (the reference gradient) and with the non-float tensor at
    ``position`` changed in place between forward and backward."""
    ref_args, ref_kwargs = _clone_tree(args), _clone_tree(kwargs)
    try:
        loss, leaves = _run(fn, ref_args, ref_kwargs)
    except (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError):
        return "forward refused"
    if loss is None:
        return "no graph"
    want = ember.autograd.grad(loss, leaves, allow_unused=True)
    args2, kwargs2 = _clone_tree(args), _clone_tree(kwargs)
    loss, leaves = _run(fn, args2, kwargs2)
    target = list(_tensors((args2, kwargs2)))[position]
    _modify(target, how)
    try:
        got = ember.autograd.grad(loss, leaves, allow_unused=True)
    except RuntimeError as e:
        assert VERSION_ERROR in str(e), str(e)
        return "raised"
    # no error: then backward must not have used the changed values
    for g, w in zip(got, want, strict=True):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12)
    return "unaffected"


def _op_db_cases():
    rng = np.random.default_rng(0)
    for entry in op_db():
        if entry.spec is None or not entry.spec.grad:
            continue  # no backward to guard (linalg.ldl_solve's backward raises, as torch's)
        try:
            samples = list(entry.spec.samples(rng, ember.float64))
        except Exception:  # an op without float64 samples takes no float gradient here
            continue
        for k, s in enumerate(samples):
            args = (s.input,) + tuple(s.args)
            flat = list(_tensors((args, s.kwargs)))
            for pos, t in enumerate(flat):
                if not t.is_floating_point() and t.numel():
                    yield pytest.param(entry.fn, args, s.kwargs, pos,
                                       id=f"{entry.name}-{k}-arg{pos}")


def _nn_cases():
    w = ember.randn(10, 3, dtype=ember.float64)
    x = ember.randn(4, 5, dtype=ember.float64)
    t = ember.tensor([0, 4, 2, 1])
    lp = ember.randn(6, 2, 4, dtype=ember.float64).log_softmax(2)
    pooled, where = F.max_pool2d(ember.randn(1, 1, 4, 4, dtype=ember.float64), 2,
                                 return_indices=True)
    cases = {
        "embedding": (F.embedding, (ember.tensor([[1, 2], [3, 9]]), w), {}),
        "embedding_bag_offsets": (F.embedding_bag, (ember.tensor([1, 2, 3, 4]), w,
                                                    ember.tensor([0, 2])), {}),
        "embedding_bag_2d_max": (F.embedding_bag, (ember.tensor([[1, 2], [3, 4]]), w),
                                 {"mode": "max"}),
        "cross_entropy": (F.cross_entropy, (x, t), {}),
        "cross_entropy_weight_smoothing": (F.cross_entropy, (x, t), {
            "weight": ember.rand(5, dtype=ember.float64), "label_smoothing": 0.1}),
        "cross_entropy_3d": (F.cross_entropy, (x.reshape(2, 5, 2), ember.tensor([[0, 1],
                                                                                 [2, 3]])), {}),
        "nll_loss": (F.nll_loss, (x, t), {}),
        "multi_margin_loss": (F.multi_margin_loss, (x, t), {}),
        "ctc_loss": (F.ctc_loss, (lp, ember.tensor([[1, 2], [3, 1]]), ember.tensor([6, 5]),
                                  ember.tensor([2, 2])), {}),
        "max_unpool2d": (F.max_unpool2d, (pooled, where, 2), {}),
        "getitem_int": (Tensor.__getitem__, (x, ember.tensor([0, 2])), {}),
        "getitem_bool": (Tensor.__getitem__, (x, ember.tensor([True, False, True, False])), {}),
        "getitem_pair": (Tensor.__getitem__, (x, (ember.tensor([0, 2]), ember.tensor([1, 1]))),
                         {}),
        "setitem": (lambda a, i, v: _setitem(a, i, v), (x, ember.tensor([0, 2]),
                                                       ember.ones(2, 5, dtype=ember.float64)),
                    {}),
        "masked_fill": (Tensor.masked_fill, (x, x > 0, 1.0), {}),
    }
    for name, (fn, args, kwargs) in cases.items():
        flat = list(_tensors((args, kwargs)))
        for pos, a in enumerate(flat):
            if not a.is_floating_point():
                yield pytest.param(fn, args, kwargs, pos, id=f"{name}-arg{pos}")


def _setitem(a, i, v):
    out = a * 1
    out[i] = v
    return out


@pytest.mark.parametrize("how", ["out of range", "in range"])
@pytest.mark.parametrize("fn,args,kwargs,position", list(_op_db_cases()) + list(_nn_cases()))
def test_int_input_changed_in_place_is_caught(fn, args, kwargs, position, how):
    _check_case(fn, args, kwargs, position, how)


def test_the_walk_reaches_every_op_that_receives_integer_arrays(monkeypatch):
    """Every Op class that received an integer or boolean array during the walk is one whose
    backward the walk saw refuse (or not need) a changed input: no op is left out."""
    received = set()
    run = _function.Op._run.__func__

    def spy(cls, *args, **params):
        for a in list(args) + list(params.values()):
            arrays = a if isinstance(a, (tuple, list)) else (a,)
            if any(isinstance(v, np.ndarray) and v.dtype.kind in "biu" and v.size
                   for v in arrays):
                received.add(cls.__name__)
        return run(cls, *args, **params)

    monkeypatch.setattr(_function.Op, "_run", classmethod(spy))
    raised = set()
    for case in list(_op_db_cases()) + list(_nn_cases()):
        fn, args, kwargs, position = case.values
        before = set(received)
        if _check_case(fn, args, kwargs, position, "in range") == "raised":
            raised |= received - before or received
    # the ops below receive integer arrays that are never user data (shapes, private indices)
    private = {"Remainder", "BasicIndex", "_IndexPutZeros", "Reshape", "Expand", "Repeat"}
    assert received - private, "the spy saw no op"
    missing = {name for name in received - private
               if name not in raised and name not in _UNAFFECTED}
    assert not missing, f"ops receiving integer arrays with no guarded case: {sorted(missing)}"


# ops that receive integer arrays derived from user tensors but never read them in backward
_UNAFFECTED: set = set()


def test_embedding_index_out_of_range_after_forward_raises_not_segfaults():
    w = ember.randn(4, 3, requires_grad=True)
    i = ember.tensor([1, 2])
    out = F.embedding(i, w)
    i.add_(10**7)
    with pytest.raises(RuntimeError, match=VERSION_ERROR):
        out.sum().backward()


def test_cross_entropy_target_changed_in_place_raises():
    x = ember.randn(3, 5, requires_grad=True)
    t = ember.tensor([1, 2, 3])
    loss = F.cross_entropy(x, t)
    t[0] = 4
    with pytest.raises(RuntimeError, match=VERSION_ERROR):
        loss.backward()


def test_numpy_alias_write_caught_by_anomaly_mode():
    w = ember.randn(4, 3, requires_grad=True)
    i = ember.tensor([1, 2])
    with ember.autograd.detect_anomaly():
        out = F.embedding(i, w)
        i.numpy()[0] = 3  # invisible to the version counter
        with pytest.raises(RuntimeError, match="through memory the version counter"):
            out.sum().backward()


def test_numpy_alias_write_out_of_range_raises_index_error_not_segfault():
    """Without anomaly mode a write through a .numpy() alias is unseen (as in torch); the
    kernels still check bounds, so it is an IndexError rather than a write out of range."""
    w = ember.randn(4, 3, requires_grad=True)
    i = ember.tensor([1, 2])
    out = F.embedding(i, w)
    i.numpy()[0] = 10**7
    with pytest.raises(IndexError, match="out of range"):
        out.sum().backward()
    x = ember.randn(3, 5, requires_grad=True)
    t = ember.tensor([1, 2, 3])
    loss = F.cross_entropy(x, t)
    t.numpy()[0] = 10**7
    with pytest.raises(IndexError, match="out of bounds"):
        loss.backward()


@pytest.mark.parity
@pytest.mark.parametrize("name", ["embedding", "cross_entropy", "nll_loss", "gather",
                                  "getitem", "index_select", "ctc_loss"])
def test_version_error_matches_torch(name):
    torch = pytest.importorskip("torch")

    def run(lib):
        fn = lib.nn.functional
        x = lib.ones(3, 5, dtype=lib.float64, requires_grad=True)
        t = lib.tensor([1, 2, 3])
        calls = {
            "embedding": lambda: fn.embedding(t, x.t()),
            "cross_entropy": lambda: fn.cross_entropy(x * x, t),
            "nll_loss": lambda: fn.nll_loss(x * x, t),
            "gather": lambda: (x * x).gather(1, t[:, None]),
            "getitem": lambda: (x * x).t()[t],
            "index_select": lambda: (x * x).index_select(1, t),
            "ctc_loss": lambda: fn.ctc_loss((x * x).reshape(3, 1, 5).log_softmax(2),
                                            t[None, :2], lib.tensor([3]), lib.tensor([2])),
        }
        out = calls[name]()
        t.zero_()
        try:
            out.sum().backward()
        except RuntimeError as e:
            return VERSION_ERROR in str(e)
        return False

    assert run(ember) == run(torch) is True
