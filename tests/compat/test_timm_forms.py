"""Gap classes huggingface/pytorch-image-models (timm) found under the alias: names it imports at
import time (``torch.hub.HASH_REGEX``/``urlparse``/``_get_torch_home``, ``torch.jit.annotations``,
``torch._assert``, ``nn.modules.transformer._get_activation_fn``), ``Sampler[...]`` in a class
base (the data classes are Generic) and the ``torch._foreach_*`` multi-tensor ops its EMA and
optimizers call. Each is checked against torch 2.13."""
from __future__ import annotations

import typing

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _pair(shapes, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    return ([ember.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays])


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-12,
                                   atol=1e-12)


SHAPES = [(3,), (2, 4), ()]   # a 0-d tensor among them


@pytest.mark.parametrize("op", ["neg", "sqrt", "reciprocal", "exp", "abs", "sign", "trunc"])
def test_foreach_unary_as_torch(op):
    (e, t) = _pair(SHAPES)
    e, t = [x.abs() + 0.5 for x in e], [x.abs() + 0.5 for x in t]
    got, want = getattr(ember, f"_foreach_{op}")(e), getattr(torch, f"_foreach_{op}")(t)
    assert isinstance(got, tuple) and isinstance(want, tuple)
    _same(got, want)
    ret = getattr(ember, f"_foreach_{op}_")(e)
    getattr(torch, f"_foreach_{op}_")(t)
    assert ret is e   # in place: the list itself comes back, as torch's
    _same(e, t)


def _operands(kind, lib, rng_seed=1):
    """The four forms of a binary op's second operand, built for ember or torch."""
    if kind == "scalar":
        return (), {"scalar": 1.5}
    if kind == "positional_scalar":
        return (2.0,), {}
    if kind == "scalars":
        return (), {"scalars": [0.5, -2.0, 3.0]}
    e, t = _pair(SHAPES, rng_seed)
    if kind == "list":
        return ((e if lib is ember else t),), {}
    e1, t1 = _pair([()], rng_seed)   # one 0-d tensor for every one
    return ((e1 if lib is ember else t1)[0],), {}


# torch has the one-tensor form (`.Tensor` overload) only for the four arithmetic ops
_BINARY_CASES = [(op, kind) for op in ("add", "sub", "mul", "div", "maximum", "minimum",
                                       "clamp_min", "clamp_max")
                 for kind in ("scalar", "positional_scalar", "scalars", "list", "tensor")
                 if kind != "tensor" or op in ("add", "sub", "mul", "div")]


@pytest.mark.parametrize("op,kind", _BINARY_CASES)
def test_foreach_binary_forms_as_torch(op, kind):
    (e, t) = _pair(SHAPES)
    eargs, ekw = _operands(kind, ember)
    targs, tkw = _operands(kind, torch)
    _same(getattr(ember, f"_foreach_{op}")(e, *eargs, **ekw),
          getattr(torch, f"_foreach_{op}")(t, *targs, **tkw))
    getattr(ember, f"_foreach_{op}_")(e, *eargs, **ekw)
    getattr(torch, f"_foreach_{op}_")(t, *targs, **tkw)
    _same(e, t)


def test_foreach_alpha_and_ternary_ops_as_torch():
    (e, t), (e1, t1), (e2, t2) = _pair(SHAPES, 0), _pair(SHAPES, 1), _pair(SHAPES, 2)
    e2, t2 = [x.abs() + 1 for x in e2], [x.abs() + 1 for x in t2]
    _same(ember._foreach_add(e, e1, alpha=-0.5), torch._foreach_add(t, t1, alpha=-0.5))
    _same(ember._foreach_sub(e, e1, alpha=2), torch._foreach_sub(t, t1, alpha=2))
    _same(ember._foreach_addcdiv(e, e1, e2, value=0.3),
          torch._foreach_addcdiv(t, t1, t2, value=0.3))
    _same(ember._foreach_addcmul(e, e1, e2, [1.0, 2.0, -1.0]),
          torch._foreach_addcmul(t, t1, t2, [1.0, 2.0, -1.0]))
    _same(ember._foreach_lerp(e, e1, weight=0.25), torch._foreach_lerp(t, t1, weight=0.25))
    _same(ember._foreach_lerp(e, e1, e2), torch._foreach_lerp(t, t1, t2))
    _same(ember._foreach_pow(e2, 1.5), torch._foreach_pow(t2, 1.5))
    _same(ember._foreach_norm(e), torch._foreach_norm(t))
    _same(ember._foreach_norm(e, ord=1), torch._foreach_norm(t, ord=1))
    # timm's ModelEmaV3: ema <- decay * ema + (1 - decay) * param, in place
    ember._foreach_lerp_(e, e1, weight=0.1)
    torch._foreach_lerp_(t, t1, weight=0.1)
    ember._foreach_mul_(e, scalar=0.9)
    torch._foreach_mul_(t, scalar=0.9)
    _same(e, t)
    ember._foreach_copy_(e, e1)
    torch._foreach_copy_(t, t1)
    _same(e, t)
    ember._foreach_zero_(e)
    torch._foreach_zero_(t)
    _same(e, t)


def test_foreach_dtype_promotion_as_torch():
    ints_e, ints_t = [ember.tensor([1, 2])], [torch.tensor([1, 2])]
    _same(ember._foreach_div(ints_e, 2), torch._foreach_div(ints_t, 2))
    _same(ember._foreach_add(ints_e, 1.5), torch._foreach_add(ints_t, 1.5))
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch._foreach_add_(ints_t, 1.5)
    with pytest.raises(RuntimeError, match="can't be cast"):
        ember._foreach_add_(ints_e, 1.5)


def test_foreach_gradients_flow_through_the_list():
    a = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([[3.0]], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda x, y: ember._foreach_addcmul([x, y], [x, y], [y.sum().expand(2), x.sum()],
                                            value=0.5), (a, b))


def test_foreach_errors_as_torch():
    e, t = _pair([(2,), (3,)])
    for lib, xs in ((ember, e), (torch, t)):
        with pytest.raises(RuntimeError, match="at least one tensor"):
            lib._foreach_add([], 1)
        with pytest.raises(RuntimeError, match="same number of tensors, got 2 and 1"):
            lib._foreach_add(xs, xs[:1])
        with pytest.raises(RuntimeError, match="same number of elements as scalar list"):
            lib._foreach_mul(xs, [1.0])
        with pytest.raises(TypeError, match="_foreach_add"):
            lib._foreach_add(xs, 2, alpha=3)   # alpha only with tensor operands
        with pytest.raises(RuntimeError, match="scalar tensor expected to be 0 dim but it has 1"):
            lib._foreach_mul(xs, xs[0][:1])


def test_data_classes_are_generic_as_torch():
    from torch.utils import data as td

    from ember.utils import data as ed
    names = ["Dataset", "IterableDataset", "Sampler", "DataLoader", "Subset", "ConcatDataset",
             "StackDataset"]
    for name in names:
        e, t = getattr(ed, name), getattr(td, name)
        assert (typing.Generic in e.__mro__) == (typing.Generic in t.__mro__), name
        assert len(e.__parameters__) == len(t.__parameters__) == 1, name
    from torch.utils.data.distributed import DistributedSampler as TDistributedSampler

    from ember.utils.data.distributed import DistributedSampler
    assert len(DistributedSampler.__parameters__) == len(TDistributedSampler.__parameters__) == 1

    class Batches(ed.Sampler[list[tuple[typing.Any, int]]]):  # timm's base
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter([[(0, i)] for i in range(self.n)])

        def __len__(self):
            return self.n

    class Items(ed.Dataset[int]):
        def __getitem__(self, i):
            return i * 10

        def __len__(self):
            return 4

    loader = ed.DataLoader(Items(), sampler=ed.SequentialSampler(range(4)), batch_size=2)
    assert [b.tolist() for b in loader] == [[0, 10], [20, 30]]
    assert list(Batches(2)) == [[(0, 0)], [(0, 1)]]


def test_hub_and_jit_names_timm_imports(monkeypatch, tmp_path):
    import torch.hub as th

    import ember.hub as eh
    for name in ("model-abc123.pth", "resnet18-f37072fd.pth", "nohash.pth", "a-b-c0de.tar.gz"):
        want = th.HASH_REGEX.search(name)
        got = eh.HASH_REGEX.search(name)
        assert (got and got.group(1)) == (want and want.group(1)), name
    assert eh.urlparse("https://a.b/c/d.pth").path == th.urlparse("https://a.b/c/d.pth").path
    for env in ({"TORCH_HOME": str(tmp_path / "th")}, {"XDG_CACHE_HOME": str(tmp_path)}):
        monkeypatch.delenv("TORCH_HOME", raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        assert eh._get_torch_home() == th._get_torch_home()
        assert eh.get_dir() == th.get_dir()
    from torch.jit.annotations import List as TList

    from ember.jit.annotations import List as EList
    assert EList[int] == TList[int] == typing.List[int]  # noqa: UP006


def test_assert_and_activation_lookup_as_torch():
    ember._assert(True, "fine")
    for lib in (ember, torch):
        with pytest.raises(AssertionError, match="shape must be square"):
            lib._assert(False, "shape must be square")
    from torch.nn.modules.transformer import _get_activation_fn as tget

    from ember.nn.modules.transformer import _get_activation_fn as eget
    x = np.linspace(-2, 2, 9)
    for name in ("relu", "gelu"):
        np.testing.assert_allclose(eget(name)(ember.tensor(x)).numpy(),
                                   tget(name)(torch.tensor(x)).numpy(), rtol=1e-12)
    for get in (eget, tget):
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            get("tanh")


def test_replicate_for_data_parallel_as_torch():
    def check(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        m.extra = [1]
        r = m._replicate_for_data_parallel()
        lin = lib.nn.Linear(2, 3)
        rl = lin._replicate_for_data_parallel()
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'weight'"):
            rl(lib.ones(1, 2))
        return (type(r).__name__, r is m, dict(r._parameters), list(r._modules),
                r._modules is m._modules, r._modules["0"] is m._modules["0"], r.extra is m.extra,
                r._is_replica, getattr(m, "_is_replica", None), dict(rl._parameters),
                list(rl.state_dict()), rl._buffers is lin._buffers, rl.training)
    assert check(ember) == check(torch)


def test_assert_close_compares_mappings_as_torch():
    from ember.testing import assert_close as eclose
    for lib, close in ((ember, eclose), (torch, torch.testing.assert_close)):
        sd = {"state": {0: {"step": lib.tensor(3.0), "exp_avg": lib.ones(2)}},
              "param_groups": [{"lr": 0.1, "params": [0]}]}
        close(sd, {"state": {0: {"step": lib.tensor(3.0), "exp_avg": lib.ones(2) + 1e-9}},
                   "param_groups": [{"lr": 0.1, "params": [0]}]})
        with pytest.raises(AssertionError, match=r"(?s)do not match.*Additional keys in the "
                                                 r"actual mapping: \['b'\]"):
            close({"a": lib.ones(1), "b": 1}, {"a": lib.ones(1)})
        # the item's path is named (torch after the message, ember before it)
        with pytest.raises(AssertionError, match=r"(?s)(not close.*\['a'\]|\['a'\].*not close)"):
            close({"a": lib.ones(1)}, {"a": lib.zeros(1)})


def test_internal_testcase_assert_equal_as_torch():
    from torch.testing._internal.common_utils import TestCase as TTestCase

    from ember.testing._internal.common_utils import TestCase as ETestCase
    for lib, tc in ((ember, ETestCase()), (torch, TTestCase())):
        tc.assertEqual([lib.ones(2), {"lr": 0.5}], [lib.ones(2), {"lr": 0.5}])
        tc.assertEqual(3, 3)
        with pytest.raises(AssertionError):
            tc.assertEqual(lib.ones(2), lib.ones(2) * 1.1)
        with pytest.raises(AssertionError):
            tc.assertEqual("a", "b")
        with pytest.raises(AssertionError):
            tc.assertEqual(lib.ones(2), lib.ones(2, dtype=lib.float64))   # exact_dtype
        tc.assertEqual(lib.ones(2), lib.ones(2, dtype=lib.float64), exact_dtype=False)
        # non-tensor leaves compare by ==, numbers against tensors by value
        tc.assertEqual({"a": None, "s": "x", "t": lib.ones(1)}, {"a": None, "s": "x",
                                                              "t": lib.ones(1)})
        tc.assertEqual(3, lib.tensor(3.0))
        tc.assertEqual([1, 2], (1, 2))
        with pytest.raises(AssertionError):
            tc.assertEqual(None, 0)
        with pytest.raises(AssertionError):
            tc.assertEqual({"a": 1}, {"b": 1})
