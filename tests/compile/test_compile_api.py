"""ember.compile's behaviour: signatures and decorators, guards and recompiles, graph breaks
and explain, fullgraph, backends (strings and callables), reset/disable/stances, autograd."""
from __future__ import annotations

import collections
import dataclasses
import enum
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember._dynamo import config
from ember._dynamo.exc import RecompileError, Unsupported
from ember.testing import assert_close


@pytest.fixture(autouse=True)
def _reset():
    ember._dynamo.reset()
    yield
    ember.compiler.set_stance("default")


def _t(*shape, rg=False, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.from_numpy(a).requires_grad_(rg)


def _chain(x, y):
    return ((x * 2 + y).relu() * y).sum(dim=-1)


def test_compile_function_as_decorator_and_with_arguments():
    @ember.compile
    def f(x, y):
        return _chain(x, y)

    @ember.compile(mode="max-autotune", fullgraph=True, dynamic=False)
    def g(x, y):
        return _chain(x, y)

    x, y = _t(3, 4), _t(4, seed=1)
    for fn in (f, g):
        fn(x, y)
        assert_close(fn(x, y), _chain(x, y))
        assert fn.stats["hits"] == 1


def test_compile_rejects_bad_mode_backend_and_non_callables():
    with pytest.raises(RuntimeError, match="mode"):
        ember.compile(_chain, mode="fastest")
    with pytest.raises(RuntimeError, match="unknown backend 'tvm_like'"):
        ember.compile(_chain, backend="tvm_like")
    with pytest.raises(RuntimeError, match="must be a callable"):
        ember.compile(3)
    with pytest.raises(RuntimeError, match="Either mode or options"):
        ember.compile(_chain, mode="default", options={})


def test_shape_dtype_and_requires_grad_changes_recompile():
    f = ember.compile(_chain, dynamic=False)
    x, y = _t(3, 4), _t(4)
    f(x, y)
    f(x, y)
    assert f.stats["recompiles"] == 0
    assert_close(f(_t(5, 4), y), _chain(_t(5, 4), y))               # shape
    xd, yd = x.double(), y.double()
    assert_close(f(xd, yd), _chain(xd, yd))                          # dtype
    xr = x.detach().requires_grad_()
    out = f(xr, y)                                                   # requires_grad
    assert out.requires_grad
    assert f.stats["recompiles"] == 3


def test_module_train_eval_switch_is_guarded():
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    c = ember.compile(m)
    x = _t(8, 4)
    c(x)
    m.eval()
    c(x)
    assert_close(c(x), m(x))      # eval: dropout is the identity
    assert c.dynamo_ctx.stats["captures"] == 2


def test_cache_is_bounded_and_warns(monkeypatch):
    monkeypatch.setattr(config, "cache_size_limit", 2)
    f = ember.compile(lambda x: x * 2 + 1, dynamic=False)
    with pytest.warns(UserWarning, match="recompile limit"):
        for n in range(1, 5):
            assert_close(f(_t(n)), _t(n) * 2 + 1)
    assert len(f._cache) == 2


def test_dynamic_true_shape_changes_are_not_recompiles():
    f = ember.compile(_chain, dynamic=True)
    y = _t(4)
    for n in (2, 3, 5, 7):
        x = _t(n, 4)
        f(x, y)
        assert_close(f(x, y), _chain(x, y))
    assert f.stats["recompiles"] == 0


def test_automatic_dynamic_after_first_shape_change():
    f = ember.compile(_chain)
    y = _t(4)
    for n in (2, 3, 5, 7):
        f(_t(n, 4), y)
    assert f.stats["recompiles"] == 1  # the first change only, as torch


def test_error_on_recompile(monkeypatch):
    monkeypatch.setattr(config, "error_on_recompile", True)
    f = ember.compile(lambda x: x + 1)
    f(_t(2))
    with pytest.raises(RecompileError, match="Recompiling"):
        f(_t(3).double())


def _branchy(x):
    if x.sum() > 0:          # data-dependent Python: a graph break
        return x * 2
    return x - 1


def test_graph_break_splits_the_call_and_explain_says_where_and_why():
    # the ops before and after the break are two graphs (NOTE [Graph breaks that split])
    f = ember.compile(_branchy)
    x = _t(4)
    for _ in range(3):
        assert_close(f(x), _branchy(x))
    assert f.stats["eager"] == 0 and f.stats["hits"] == 2
    report = ember._dynamo.explain(_branchy)(x)
    assert report.graph_break_count == 1 and report.graph_count == 2
    reason = report.break_reasons[0]
    assert "data-dependent" in reason.reason and "__bool__" in reason.reason
    assert "test_compile_api.py" in reason.user_stack[0]
    assert "Graph Break Count: 1" in str(report)


def test_fullgraph_raises_at_a_graph_break():
    f = ember.compile(_branchy, fullgraph=True)
    with pytest.raises(Unsupported, match="fullgraph=True"):
        f(_t(4))


def test_explain_counts_ops_of_a_clean_function():
    report = ember._dynamo.explain(_chain)(_t(3, 4), _t(4))
    assert report.graph_count == 1 and report.graph_break_count == 0
    assert report.ops_per_graph[0] == ["Mul", "Add", "Relu", "Mul", "Sum"]


def test_random_factory_inside_is_a_graph_break():
    def noisy(x):
        return x + ember.randn(x.shape)
    report = ember._dynamo.explain(noisy)(_t(3))
    assert "randn" in report.break_reasons[0].reason


def test_dropout_masks_are_drawn_fresh_each_call():
    f = ember.compile(lambda x: nn.functional.dropout(x, 0.5) * 1.0)
    x = ember.ones(1000)
    f(x)
    a, b = f(x), f(x)
    assert not np.array_equal(a.numpy(), b.numpy())
    ember.manual_seed(3)
    want = nn.functional.dropout(x, 0.5) * 1.0
    ember.manual_seed(3)
    assert_close(f(x), want)


def test_in_place_update_of_a_graph_value_is_replayed_in_the_graph():
    def f(x):
        y = x * 2
        y.add_(1)
        return y
    c = ember.compile(f)
    x = _t(3)
    c(x)
    assert_close(c(x), f(x))
    assert c.last_breaks == []


def test_in_place_update_of_a_value_with_a_view_is_a_graph_break():
    def f(x):
        y = x * 2
        v = y[1:]
        y.add_(1)
        return v * 1
    c = ember.compile(f)
    x = _t(3)
    c(x)
    assert_close(c(x), f(x))
    assert "in-place" in c.last_breaks[0][0]


def test_callable_backend_receives_a_graph_module_and_example_inputs():
    seen = {}

    def backend(gm, example_inputs):
        seen["ops"] = [n.op for n in gm.graph.nodes]
        seen["n"] = len(example_inputs)
        return gm.forward

    lin = nn.Linear(4, 3)
    f = ember.compile(lambda x: lin(x).relu().sum(), backend=backend)
    x = _t(2, 4)
    f(x)
    out = f(x)
    assert seen["n"] == 1 and seen["ops"][0] == "placeholder" and "call_function" in seen["ops"]
    out.backward()
    want = ember.autograd.grad(lin(x).relu().sum(), [lin.weight])[0]
    assert_close(lin.weight.grad, want)


@pytest.mark.parametrize("backend", ["inductor", "aot_eager", "eager"])
def test_string_backends_agree_with_eager(backend):
    f = ember.compile(_chain, backend=backend)
    x, y = _t(3, 4, rg=True), _t(4, rg=True, seed=1)
    f(x, y)
    out = f(x, y)
    assert_close(out, _chain(x, y))
    gx, gy = ember.autograd.grad(out.sum(), [x, y])
    ex, ey = ember.autograd.grad(_chain(x, y).sum(), [x, y])
    assert_close(gx, ex)
    assert_close(gy, ey)


def test_reset_forgets_specialisations():
    f = ember.compile(_chain)
    f(_t(3, 4), _t(4))
    ember._dynamo.reset()
    f(_t(3, 4), _t(4))
    assert f.stats["captures"] == 2 and f.stats["recompiles"] == 0


def test_disable_and_is_compiling():
    seen = []

    @ember.compiler.disable
    def log(x):
        seen.append(ember.compiler.is_compiling())
        return x

    f = ember.compile(lambda x: log(x * 2) + 1)
    f(_t(3))
    assert f.last_breaks and "disable" in f.last_breaks[0][0]

    inside = []
    g = ember.compile(lambda x: inside.append(ember.compiler.is_compiling()) or x + 1)
    g(_t(3))
    assert inside == [True] and not ember.compiler.is_compiling()


def test_set_stance_force_eager_and_fail_on_recompile():
    f = ember.compile(lambda x: x + 1)
    ember.compiler.set_stance("force_eager")
    f(_t(2))
    assert f.stats["captures"] == 0
    ember.compiler.set_stance("fail_on_recompile")
    ember.compiler.set_stance("default")
    with pytest.raises(RuntimeError, match="unknown stance"):
        ember.compiler.set_stance("sometimes")


def test_optimized_module_wraps_the_original():
    m = nn.Linear(4, 2)
    c = ember.compile(m)
    assert type(c).__name__ == "OptimizedModule" and c._orig_mod is m
    assert c.in_features == 4 and c.weight is m.weight
    assert list(c.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    x = _t(3, 4)
    c(x)
    assert_close(c(x), m(x))


def test_module_compile_in_place():
    m = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    m.compile()
    x = _t(2, 4)
    m(x)
    assert_close(m(x), m[1](m[0](x)))
    assert isinstance(m, nn.Sequential) and list(m.state_dict()) == ["0.weight", "0.bias"]
    assert m._compiled_call_impl.stats["hits"] == 1


def test_outputs_keep_structure_and_python_values():
    f = ember.compile(lambda x: {"y": x * 2, "pair": (x + 1, 3), "same": x})
    x = _t(2)
    f(x)
    out = f(x)
    assert set(out) == {"y", "pair", "same"} and out["pair"][1] == 3 and out["same"] is x
    assert_close(out["pair"][0], x + 1)


def test_no_grad_calls_and_second_backward():
    f = ember.compile(_chain)
    x, y = _t(3, 4, rg=True), _t(4)
    with ember.no_grad():
        f(x, y)
        assert not f(x, y).requires_grad
    f(x, y)
    out = f(x, y).sum()
    out.backward(retain_graph=True)
    out.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()
    assert_close(x.grad, 2 * ember.autograd.grad(_chain(x, y).sum(), [x])[0])


def test_double_backward_through_a_compiled_region_raises():
    f = ember.compile(lambda x: (x * x).sum())
    x = _t(3, rg=True)
    f(x)
    (g,) = ember.autograd.grad(f(x), [x], create_graph=True)
    assert_close(g, 2 * x)
    with pytest.raises(RuntimeError, match="double backward"):
        g.sum().backward()


def test_hessian_vector_product_through_a_compiled_module_says_why():
    # Adahessian's form: backward(create_graph=True), then autograd.grad of the parameters'
    # gradients w.r.t. the parameters. The gradients must reach the parameters through a node
    # that explains the refusal, not look unused ("... not have been used in the graph").
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh(), ember.nn.Linear(4, 1))
    compiled = ember.compile(model)
    x = _t(5, 3)
    compiled(x)
    compiled(x).sum().backward(create_graph=True)
    params = list(model.parameters())
    grads = [p.grad for p in params]
    assert all(g.requires_grad for g in grads)
    eager = ember.autograd.grad(model(x).sum(), params)
    for g, e in zip(grads, eager, strict=True):
        assert_close(g.detach(), e)
    vs = [ember.ones_like(p) for p in params]
    with pytest.raises(RuntimeError, match="double backward through a compiled region"):
        ember.autograd.grad(grads, params, grad_outputs=vs)


def test_non_leaf_inputs_pass_gradients_upstream():
    w = _t(3, rg=True)
    f = ember.compile(lambda h: (h * 3).relu().sum())
    f(w * 2)
    f(w * 2).backward()
    assert_close(w.grad, ember.autograd.grad((w * 6).relu().sum(), [w])[0])


def test_zero_recompiles_in_a_fixed_shape_training_loop():
    m = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1))
    c = ember.compile(m)
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    for step in range(5):
        opt.zero_grad()
        c(_t(4, 6, seed=step)).square().mean().backward()
        opt.step()
    assert c.dynamo_ctx.stats == {"captures": 1, "recompiles": 0, "hits": 4, "eager": 0,
                                  "generalised": 0}


def test_optimize_and_old_names():
    f = ember._dynamo.optimize("eager")(lambda x: x + 1)
    f(_t(2))
    assert_close(f(_t(2)), _t(2) + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember._dynamo.mark_dynamic(_t(3), 0)


def test_same_tensor_twice_is_guarded():
    f = ember.compile(lambda a, b: a * 2 + b)
    x, y = _t(3), _t(3, seed=1)
    f(x, x)
    f(x, x)
    assert_close(f(x, y), x * 2 + y)


def test_out_argument_is_a_graph_break():
    def with_out(x):
        buf = ember.empty(3)
        ember.mul(x, 2, out=buf)
        return buf + 1

    c = ember.compile(with_out)
    x = _t(3)
    c(x)
    assert_close(c(x), with_out(x))
    assert c.stats["eager"] == 1


def test_setitem_into_a_fresh_factory_tensor_is_replayed():
    # (a graph break before NOTE [In-place writes in a compiled call])
    def with_setitem(x):
        z = ember.zeros(3)
        z[0] = 5.0
        return z * x

    c = ember.compile(with_setitem, fullgraph=True)
    for seed in range(3):
        x = _t(3, seed=seed)
        assert_close(c(x), with_setitem(x))
    assert c.stats["hits"] == 2


def test_batchnorm_running_stats_update_in_compiled_training():
    bn = nn.BatchNorm1d(4)
    twin = nn.BatchNorm1d(4)
    c = ember.compile(bn)
    for s in range(3):
        x = _t(8, 4, seed=s)
        assert_close(c(x), twin(x), rtol=1e-5, atol=1e-6)
    assert_close(bn.running_mean, twin.running_mean)
    assert_close(bn.running_var, twin.running_var)
    assert int(bn.num_batches_tracked) == int(twin.num_batches_tracked)


@pytest.mark.parametrize("layout", ["column_slice", "transposed", "row_slice_3d"])
def test_fused_chain_over_strided_operands_equals_eager_bitwise(layout):
    # the launcher copies a row-ordered strided operand once and runs the flat loop; a
    # transposed one goes to the strided loop: both give eager's values exactly
    rng = np.random.default_rng(0)
    if layout == "column_slice":
        base = ember.from_numpy(rng.standard_normal((64, 48)).astype(np.float32))
        a = base[:, :32]
    elif layout == "transposed":
        a = ember.from_numpy(rng.standard_normal((32, 64)).astype(np.float32)).t()
    else:
        a = ember.from_numpy(rng.standard_normal((4, 64, 40)).astype(np.float32))[:, :, 3:35]
    b = ember.from_numpy(rng.standard_normal(tuple(a.shape)).astype(np.float32))

    def chain(a, b):
        return (a * b + a).relu() * 0.5, a * 2.0 - b

    compiled = ember.compile(chain)
    for _ in range(2):
        for got, expect in zip(compiled(a, b), chain(a, b), strict=True):
            np.testing.assert_array_equal(got.numpy(), expect.numpy())
    assert compiled.stats["hits"] == 1 and compiled.last_breaks == []
    assert "_G" in compiled.sources[0]  # the chain is a fused kernel


def test_assume_constant_result_marks_and_keeps_the_function():
    torch = pytest.importorskip("torch")

    def scale():
        return 3.0

    marked = ember._dynamo.assume_constant_result(scale)
    assert marked is scale and scale._dynamo_marked_constant is True
    tmarked = torch._dynamo.assume_constant_result(lambda: 3.0)
    assert tmarked._dynamo_marked_constant is True  # the attribute torch sets

    @ember.compile
    def f(x):
        return ((x * scale() + 1).relu() * x).sum(-1)

    x = _t(3, 4)
    for _ in range(4):
        assert_close(f(x), ((x * 3.0 + 1).relu() * x).sum(-1))
    assert f.stats["captures"] == 1 and f.stats["hits"] >= 2 and f.stats["eager"] == 0


def test_transform_getitem_to_index_leaves_vmapped_indexing_alone():
    torch = pytest.importorskip("torch")
    from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex as TT

    from ember._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex

    table = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    b, h = np.array([0, 2]), np.array([1, 3, 0])

    def pick(lib, ctx):
        x = lib.from_numpy(table)
        inner = lib.func.vmap(lambda i, j: x[i, j], in_dims=(None, 0))
        with ctx():
            return lib.func.vmap(inner, in_dims=(0, None))(lib.from_numpy(b), lib.from_numpy(h))

    got = pick(ember, TransformGetItemToIndex)
    np.testing.assert_array_equal(got.numpy(), pick(torch, TT).numpy())
    np.testing.assert_array_equal(got.numpy(), table[b][:, h])


def test_mark_static_address_as_torch():
    import torch
    for lib in (torch, ember):
        a, b = lib.zeros(2), lib.zeros(2)
        lib._dynamo.mark_static_address(a)
        lib._dynamo.mark_static_address(b, guard=True)
        assert (a._dynamo_static_input_type, b._dynamo_static_input_type) == ("unguarded",
                                                                               "guarded")
        with pytest.raises(TypeError, match="mark_static_address expects a tensor but received"):
            lib._dynamo.mark_static_address(3)
    x = ember.arange(4.0)
    ember._dynamo.mark_static_address(x)
    f = ember.compile(lambda t: t * 2)
    np.testing.assert_array_equal(f(x).numpy(), [0, 2, 4, 6])
    x.add_(1)  # the compiled call reads the tensor's current values
    np.testing.assert_array_equal(f(x).numpy(), [2, 4, 6, 8])


@dataclasses.dataclass
class _Output(collections.OrderedDict):
    # the shape of diffusers' BaseOutput / transformers' ModelOutput: a dataclass over an
    # OrderedDict holding the fields that were set
    sample: object = None
    extra: object = None

    def __post_init__(self):
        for f in dataclasses.fields(self):
            if getattr(self, f.name) is not None:
                self[f.name] = getattr(self, f.name)


class _Returns(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def forward(self, x):
        y = x * 2
        if self.kind == "dataclass":
            return _Output(sample=y)
        if self.kind == "ordered":
            return collections.OrderedDict(b=y, a=y + 1)
        return collections.defaultdict(list, {"y": y})


@pytest.mark.parametrize("kind", ["dataclass", "ordered", "default"])
def test_dict_outputs_keep_their_class(kind):
    m = _Returns(kind)
    c = ember.compile(m)
    x = _t(3, 2)
    eager = m(x)
    for _ in range(3):  # capture, then replays
        out = c(x)
        assert type(out) is type(eager) and list(out) == list(eager)
        for k in eager:
            assert_close(out[k], eager[k])
    if kind == "dataclass":
        assert_close(out.sample, x * 2)
        assert out.extra is None
    if kind == "default":
        assert out.default_factory is list and out["missing"] == []


class _Key(str, enum.Enum):
    A = "A"


_TABLE = {_Key.A: 2.0, float("nan"): 1.0}


def test_guard_on_a_dict_keyed_by_an_enum_member():
    # the guard reads _TABLE[_Key.A]: a key whose repr is no Python literal (PEFT's PeftType)
    c = ember.compile(lambda x: x * _TABLE[_Key.A])
    x = _t(4)
    assert_close(c(x), x * 2.0)
    assert_close(c(x), x * 2.0)
    _TABLE[_Key.A] = 3.0
    try:
        assert_close(c(x), x * 3.0)  # the guard saw the change
    finally:
        _TABLE[_Key.A] = 2.0
