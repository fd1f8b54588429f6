"""ember.fx: programs in the style of torch.fx's documentation examples, plus the Graph API."""
from __future__ import annotations

import copy
import importlib
import operator
import sys
import time

import numpy as np
import pytest

import ember
import ember.fx as fx
import ember.nn as nn
import ember.nn.functional as F
from ember.fx.passes.shape_prop import ShapeProp


def _scaled(x):
    return x * 3.0


fx.wrap("_scaled")
fx.wrap("len")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.param = nn.Parameter(ember.rand(3, 4))
        self.linear = nn.Linear(4, 5)

    def forward(self, x):
        return self.linear(x + self.param).clamp(min=0.0, max=1.0)


def test_symbolic_trace_records_ops_and_runs(rng):
    m = Net()
    gm = fx.symbolic_trace(m)
    assert [(n.op, n.name) for n in gm.graph.nodes] == [
        ("placeholder", "x"), ("get_attr", "param"), ("call_function", "add"),
        ("call_module", "linear"), ("call_method", "clamp"), ("output", "output")]
    x = ember.tensor(rng.standard_normal((3, 4)).astype(np.float32))
    np.testing.assert_allclose(gm(x).detach().numpy(), m(x).detach().numpy())
    assert "linear = self.linear(add);  add = None" in gm.code
    assert "clamp = linear.clamp(min = 0.0, max = 1.0)" in gm.code
    assert set(gm.state_dict()) == set(m.state_dict())


def test_node_attributes_users_and_targets():
    gm = fx.symbolic_trace(Net())
    nodes = {n.name: n for n in gm.graph.nodes}
    assert nodes["add"].target is operator.add
    assert nodes["add"].args == (nodes["x"], nodes["param"])
    assert list(nodes["add"].users) == [nodes["linear"]]
    assert nodes["clamp"].kwargs == {"min": 0.0, "max": 1.0}
    assert nodes["output"].args == (nodes["clamp"],)
    assert nodes["add"].all_input_nodes == [nodes["x"], nodes["param"]]


def test_functions_and_methods_record_original_targets():
    def f(x):
        return F.relu(ember.sigmoid(x)).sum(dim=0)
    gm = fx.symbolic_trace(f)
    targets = [n.target for n in gm.graph.nodes if n.op != "placeholder"]
    assert targets[0] is ember.sigmoid and targets[1] is F.relu and targets[2] == "sum"
    assert "ember.sigmoid(x)" in gm.code and "sum_1 = relu.sum(dim = 0)" in gm.code


def test_data_dependent_control_flow_raises_trace_error():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    with pytest.raises(fx.proxy.TraceError, match="control flow"):
        fx.symbolic_trace(f)
    assert issubclass(fx.proxy.TraceError, ValueError)


def test_iteration_and_len_errors():
    def loop(x):
        for row in x:
            x = x + row
        return x
    with pytest.raises(fx.proxy.TraceError, match="cannot be iterated"):
        fx.symbolic_trace(loop)

    def size_unpack(x):
        b, t = x.size()
        return x.view(b * t)
    gm = fx.symbolic_trace(size_unpack)
    assert gm(ember.ones(2, 3)).shape == (6,)


def test_wrap_keeps_function_and_len_as_leaves():
    def f(x):
        return _scaled(x) + len(x)
    gm = fx.symbolic_trace(f)
    calls = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert calls[0] is _scaled and calls[1] is len
    np.testing.assert_allclose(gm(ember.ones(2)).detach().numpy(), [5.0, 5.0])


def test_concrete_args_specialise_control_flow():
    def f(x, flag):
        return x * 2 if flag else x - 1
    gm = fx.symbolic_trace(f, concrete_args={"flag": False})
    assert [n.op for n in gm.graph.nodes].count("call_function") == 1
    np.testing.assert_allclose(gm(ember.ones(2)).detach().numpy(), [0.0, 0.0])


def test_custom_tracer_leaf_modules():
    class MyReLU(nn.Module):
        def forward(self, x):
            return ember.relu(x)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = MyReLU()
            self.lin = nn.Linear(2, 2)

        def forward(self, x):
            return self.act(self.lin(x))

    class LeafTracer(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, MyReLU) or super().is_leaf_module(m, qualname)

    class NoLeafTracer(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return False

    g = LeafTracer().trace(M())
    assert [(n.op, n.target) for n in g.nodes if n.op == "call_module"] == \
        [("call_module", "lin"), ("call_module", "act")]
    g2 = NoLeafTracer().trace(M())
    ops = [n.op for n in g2.nodes]
    assert "call_module" not in ops and ops.count("get_attr") == 2   # lin.weight, lin.bias


def test_custom_tracer_create_node_adds_meta():
    class TagTracer(fx.Tracer):
        def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
            n = super().create_node(kind, target, args, kwargs, name, type_expr)
            n.meta["tag"] = kind.upper()
            return n
    g = TagTracer().trace(lambda x: x + 1)
    assert [n.meta["tag"] for n in g.nodes] == ["PLACEHOLDER", "CALL_FUNCTION", "OUTPUT"]


def test_op_swap_rewrite_and_recompile():
    # the torch.fx docs example: replace every add with a mul by editing the graph in place
    def f(x, y):
        return ember.add(x, y) + x
    gm = fx.symbolic_trace(f)
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in (ember.add, operator.add):
            node.target = operator.mul
    gm.graph.lint()
    gm.recompile()
    x, y = ember.tensor([2.0]), ember.tensor([5.0])
    np.testing.assert_allclose(gm(x, y).detach().numpy(), [20.0])
    assert "add = x * y;  y = None" in gm.code   # names stay; targets changed


def test_per_node_timing_interpreter():
    class Profiler(fx.Interpreter):
        def __init__(self, mod):
            super().__init__(mod)
            self.times = {}

        def run_node(self, n):
            t0 = time.perf_counter()
            out = super().run_node(n)
            self.times[n.name] = time.perf_counter() - t0
            return out

    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    gm = fx.symbolic_trace(m)
    p = Profiler(gm)
    x = ember.randn(3, 4)
    out = p.run(x)
    np.testing.assert_allclose(out.detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    assert list(p.times) == [n.name for n in gm.graph.nodes]


def test_graph_inversion():
    # the torch.fx docs example: walk the graph backwards, emitting each op's inverse
    invert_mapping = {}
    for a, b in ((ember.sin, ember.arcsin), (ember.cos, ember.arccos), (ember.exp, ember.log)):
        invert_mapping[a], invert_mapping[b] = b, a

    def f(x):
        return ember.exp(ember.sin(x))

    fx_model = fx.symbolic_trace(f)
    new_graph = fx.Graph()
    env = {}
    for node in reversed(fx_model.graph.nodes):
        if node.op == "call_function":
            new_node = new_graph.call_function(invert_mapping[node.target], (env[node.name],))
            env[node.args[0].name] = new_node
        elif node.op == "output":
            new_node = new_graph.placeholder(node.name)
            env[node.args[0].name] = new_node
        elif node.op == "placeholder":
            new_graph.output(env[node.name])
        else:
            raise AssertionError(node.op)
    inverse = fx.GraphModule(fx_model, new_graph)
    x = ember.tensor([0.1, 0.5, 1.2])
    np.testing.assert_allclose(inverse(f(x)).detach().numpy(), x.numpy(), rtol=1e-5)
    assert [n.target for n in new_graph.nodes if n.op == "call_function"] == \
        [ember.log, ember.arcsin]


def test_transformer_method_override_sees_public_function():
    class ReluToGelu(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is ember.relu:
                return F.gelu(*args)
            return super().call_function(target, args, kwargs)
    gm = ReluToGelu(fx.symbolic_trace(lambda x: ember.relu(x) + 1)).transform()
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"][0] is F.gelu


def test_build_graph_through_proxies():
    graph = fx.Graph()
    x = fx.Proxy(graph.placeholder("x"))
    y = fx.Proxy(graph.placeholder("y"))
    out = ember.relu(x * y + 1).sum()
    graph.output(out.node)
    gm = fx.GraphModule(nn.Module(), graph)
    assert [n.op for n in graph.nodes] == ["placeholder", "placeholder", "call_function",
                                          "call_function", "call_function", "call_method",
                                          "output"]
    np.testing.assert_allclose(gm(ember.tensor([1.0, -2.0]), ember.tensor([3.0, 1.0])).item(),
                               4.0)


def test_decomposition_with_graph_appending_tracer():
    def relu_decomposition(x):
        return (x > 0) * x
    rules = {F.relu: relu_decomposition}

    class M(nn.Module):
        def forward(self, x):
            return ember.sigmoid(F.relu(x))

    model = M()
    graph = fx.Tracer().trace(model)
    new_graph = fx.Graph()
    env = {}
    tracer = fx.proxy.GraphAppendingTracer(new_graph)
    for node in graph.nodes:
        if node.op == "call_function" and node.target in rules:
            proxy_args = [fx.Proxy(env[a.name], tracer) if isinstance(a, fx.Node) else a
                          for a in node.args]
            env[node.name] = rules[node.target](*proxy_args).node
        else:
            env[node.name] = new_graph.node_copy(node, lambda a: env[a.name])
    gm = fx.GraphModule(model, new_graph)
    x = ember.tensor([-1.0, 2.0])
    np.testing.assert_allclose(gm(x).detach().numpy(), model(x).detach().numpy())
    assert F.relu not in [n.target for n in new_graph.nodes]


def test_inserting_before_after_and_replace_all_uses_with():
    gm = fx.symbolic_trace(lambda x: ember.relu(x) * 2)
    g = gm.graph
    relu = next(n for n in g.nodes if n.target is ember.relu)
    with g.inserting_after(relu):
        neg = g.call_function(ember.neg, (relu,))
    changed = relu.replace_all_uses_with(neg, delete_user_cb=lambda u: u is not neg)
    assert [u.name for u in changed] == ["mul"] and neg.args == (relu,)
    with g.inserting_before(relu):
        g.call_function(ember.abs, (relu.args[0],))
    gm.recompile()
    assert [n.name for n in g.nodes] == ["x", "abs_1", "relu", "neg", "mul", "output"]
    np.testing.assert_allclose(gm(ember.tensor([3.0])).detach().numpy(), [-6.0])


def test_erase_node_with_users_raises_and_dead_code():
    gm = fx.symbolic_trace(lambda x: ember.relu(x) + 1)
    g = gm.graph
    relu = next(n for n in g.nodes if n.op == "call_function")
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(relu)
    with g.inserting_after(relu):
        g.call_function(ember.exp, (relu,))     # unused
    assert len(g.nodes) == 5
    assert g.eliminate_dead_code() is True
    assert len(g.nodes) == 4 and g.eliminate_dead_code() is False


def test_node_copy_graph_copy_and_deepcopy():
    gm = fx.symbolic_trace(lambda x: ember.relu(x) + 1)
    g2 = fx.Graph()
    val_map = {}
    out = g2.graph_copy(gm.graph, val_map)
    g2.output(out)
    assert [n.name for n in g2.nodes] == [n.name for n in gm.graph.nodes]
    g3 = copy.deepcopy(gm.graph)
    assert str(g3) == str(gm.graph)
    gm2 = copy.deepcopy(gm)
    np.testing.assert_allclose(gm2(ember.tensor([-1.0])).detach().numpy(), [1.0])


def test_lint_reports_use_before_definition():
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(ember.neg, (x,))
    z = g.call_function(ember.exp, (y,))
    g.output(z)
    x.append(z)           # move z before its input y
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()


def test_graph_str_and_print_tabular(capsys):
    gm = fx.symbolic_trace(lambda x: ember.relu(x) + 1)
    text = str(gm.graph)
    assert text.splitlines()[0] == "graph():"
    assert "%relu : [num_users=1] = call_function[target=ember.relu](args = (%x,), " \
           "kwargs = {})" in text
    gm.graph.print_tabular()
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert out[3].split()[:3] == ["call_function", "relu", "ember.relu"]


def test_print_readable_and_str(capsys):
    gm = fx.symbolic_trace(Net())
    text = gm.print_readable()
    assert text.startswith("class Net(ember.nn.Module):")
    assert "def forward(self, x):" in capsys.readouterr().out
    assert "def forward(self, x):" in str(gm)


def test_to_folder_round_trip(tmp_path):
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    gm = fx.symbolic_trace(m)
    gm.to_folder(tmp_path / "saved_fx", "Saved")
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module("saved_fx")
        loaded = mod.Saved()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("saved_fx", None)
        sys.modules.pop("saved_fx.module", None)
    x = ember.randn(2, 3)
    np.testing.assert_allclose(loaded(x).detach().numpy(), m(x).detach().numpy())


def test_subgraph_rewriter_replace_pattern():
    def f(x, w):
        a = ember.neg(ember.neg(x)) * w
        return ember.neg(ember.neg(a))

    def pattern(x):
        return ember.neg(ember.neg(x))

    def replacement(x):
        return ember.relu(x)

    gm = fx.symbolic_trace(f)
    matches = fx.subgraph_rewriter.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == [ember.relu, operator.mul, ember.relu]
    x, w = ember.tensor([-1.0, 2.0]), ember.tensor([1.0, 1.0])
    np.testing.assert_allclose(gm(x, w).detach().numpy(), [0.0, 2.0])


def test_shape_prop_records_tensor_meta():
    gm = fx.symbolic_trace(nn.Sequential(nn.Linear(3, 2), nn.ReLU()))
    ShapeProp(gm).propagate(ember.ones(4, 3))
    metas = [n.meta["tensor_meta"] for n in gm.graph.nodes]
    assert [tuple(m.shape) for m in metas] == [(4, 3), (4, 2), (4, 2), (4, 2)]
    assert all(m.dtype == ember.float32 for m in metas)


def test_proxy_arithmetic_attributes_and_getitem():
    def f(x):
        n = x.shape[0]
        y = (2 - x) / (x ** 2 + 1) @ x.T
        return -y[:, :n] + abs(x).sum() % 3
    gm = fx.symbolic_trace(f)
    x = ember.tensor([[1.0, 2.0], [3.0, -4.0]])
    np.testing.assert_allclose(gm(x).detach().numpy(), f(x).detach().numpy(), rtol=1e-6)
    assert "getattr_1 = x.shape" in gm.code


def test_tensor_constants_and_tensor_op_proxy():
    const = ember.tensor([1.0, 2.0])

    def f(x):
        return const + x
    gm = fx.symbolic_trace(f)
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "get_attr", "call_function",
                                              "output"]
    np.testing.assert_allclose(gm(ember.ones(2)).detach().numpy(), [2.0, 3.0])


def test_patches_are_removed_after_tracing():
    relu = ember.relu
    fx.symbolic_trace(lambda x: ember.relu(x))
    assert ember.relu is relu and nn.Module.__call__ is nn.Module._call_impl


def test_interpreter_error_names_node():
    gm = fx.symbolic_trace(lambda x: x.view(7))
    with pytest.raises(RuntimeError) as info:
        gm_run = fx.Interpreter(gm)
        gm_run.run(ember.ones(3))
    assert "While executing %view" in "".join(getattr(info.value, "__notes__", []))


@pytest.mark.parity
def test_node_list_matches_torch_fx():
    torch = pytest.importorskip("torch")

    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = lib.nn.Linear(4, 5)
                self.seq = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Linear(5, 5))
                self.w = lib.nn.Parameter(lib.ones(5))

            def forward(self, x, input):
                a = self.linear(x).clamp(min=0.0)
                b = lib.relu(a) + a * self.w
                c = lib.relu(b).view(b.shape[0], -1).sum(dim=1, keepdim=True)
                return lib.cat([c, c], dim=1) - input.mean(), self.seq(b)
        return M()

    ours = fx.symbolic_trace(build(ember))
    ref = torch.fx.symbolic_trace(build(torch))
    assert [(n.op, n.name) for n in ours.graph.nodes] == \
        [(n.op, n.name) for n in ref.graph.nodes]
    norm = ours.code.replace("ember.", "torch.")
    assert norm == ref.code


def test_submodule_management_and_conv_bn_fusion_rewrite():
    # the torch.fx docs' fusion pattern: swap a module, rewire users, drop the old module
    m = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2)).eval()
    gm = fx.symbolic_trace(m)
    assert gm.add_submodule("extra.act", nn.Tanh())
    node = next(n for n in gm.graph.nodes if n.target == "1")
    with gm.graph.inserting_after(node):
        new = gm.graph.call_module("extra.act", (node.args[0],))
    node.replace_all_uses_with(new)
    gm.graph.erase_node(node)
    gm.delete_all_unused_submodules()
    gm.recompile()
    assert [name for name, _ in gm.named_children()] == ["0", "2", "extra"]
    x = ember.randn(4, 3)
    np.testing.assert_allclose(gm(x).detach().numpy(),
                               m[2](ember.tanh(m[0](x))).detach().numpy(), rtol=1e-6)
    assert gm.delete_submodule("extra.act") and not gm.delete_submodule("nope")


def test_custom_tracer_call_module_and_create_proxy_overrides():
    class Recorder(fx.Tracer):
        def __init__(self):
            super().__init__()
            self.visited = []

        def call_module(self, m, forward, args, kwargs):
            self.visited.append(self.path_of_module(m))
            return super().call_module(m, forward, args, kwargs)

        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                         proxy_factory_fn=None):
            p = super().create_proxy(kind, target, args, kwargs, name, type_expr)
            p.node.meta["kind_upper"] = kind.upper()
            return p

    inner = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    model = nn.Sequential(inner, nn.Linear(2, 1))
    tracer = Recorder()
    graph = tracer.trace(model)
    assert tracer.visited == ["0", "0.0", "0.1", "1"]      # Sequential traced through
    assert [n.meta["kind_upper"] for n in graph.nodes if n.op == "call_module"] == \
        ["CALL_MODULE"] * 3
    gm = fx.GraphModule(tracer.root, graph)
    x = ember.randn(3, 2)
    np.testing.assert_allclose(gm(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-6)
