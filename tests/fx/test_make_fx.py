"""ember.fx.experimental.proxy_tensor.make_fx: a GraphModule recorded from one run (NOTE [make_fx
by recording])."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import nn
from ember.fx import GraphModule, Interpreter
from ember.fx.experimental.proxy_tensor import make_fx


def _t(*shape, seed=0, grad=False):
    rng = np.random.default_rng(seed)
    return ember.tensor(rng.standard_normal(shape), dtype=ember.float64, requires_grad=grad)


def _mlp():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2)).double()


def test_graph_module_of_a_model_equals_eager_with_grads_on_new_inputs():
    model = _mlp()

    def f(x, y):
        return ((model(x) - y) ** 2).mean()

    gm = make_fx(f)(_t(4, 3), _t(4, 2, seed=1))
    assert isinstance(gm, GraphModule)
    assert "def forward(self, x_1, y_1):" in gm.code
    ops = [n.target.__name__ for n in gm.graph.nodes if n.op == "call_function"]
    assert ops == ["linear", "tanh", "linear", "sub", "pow", "mean"]
    for seed in (2, 3):
        x, y = _t(4, 3, seed=seed, grad=True), _t(4, 2, seed=seed + 10)
        xe = x.detach().clone().requires_grad_()
        got, want = gm(x, y), f(xe, y)
        assert got.item() == pytest.approx(want.item(), rel=1e-15)
        gp = ember.autograd.grad(got, [x, *model.parameters()])
        wp = ember.autograd.grad(want, [xe, *model.parameters()])
        for a, b in zip(gp, wp, strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13)


def test_parameters_are_read_live_and_interpreter_runs_the_graph():
    lin = nn.Linear(3, 2).double()
    gm = make_fx(lambda x: lin(x).relu())(_t(2, 3))
    with ember.no_grad():
        lin.weight.mul_(-1.0)
    x = _t(2, 3, seed=5)
    np.testing.assert_allclose(gm(x).detach().numpy(), lin(x).relu().detach().numpy())
    np.testing.assert_allclose(Interpreter(gm).run(x).detach().numpy(),
                               lin(x).relu().detach().numpy())


def test_output_structure_single_tensor_and_non_tensor_arguments():
    def f(x, k, scale=2.0):
        return {"a": x * k, "b": (x.sin(), x.sum())}

    gm = make_fx(f)(_t(3), 3)
    assert "def forward(self, x_1, k_1):" in gm.code
    x = _t(3, seed=4)
    out = gm(x, 3)
    assert set(out) == {"a", "b"} and isinstance(out["b"], tuple)
    np.testing.assert_allclose(out["a"].numpy(), (x * 3).numpy())
    np.testing.assert_allclose(out["b"][1].numpy(), x.sum().numpy())
    single = make_fx(lambda x: x.exp())(_t(2))
    assert isinstance(single(_t(2)), ember.Tensor)
    nested = make_fx(lambda pair: pair[0] @ pair[1])((_t(2, 3), _t(3, 2)))
    assert "def forward(self, arg0_1, arg1_1):" in nested.code


def test_python_control_flow_is_specialised_to_the_traced_run():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    pos = make_fx(f)(ember.ones(2, dtype=ember.float64))
    neg = make_fx(f)(-ember.ones(2, dtype=ember.float64))
    x = -ember.ones(2, dtype=ember.float64)
    np.testing.assert_array_equal(pos(x).numpy(), [-2.0, -2.0])  # the branch taken when traced
    np.testing.assert_array_equal(neg(x).numpy(), [-2.0, -2.0])
    assert [n.target.__name__ for n in pos.graph.nodes if n.op == "call_function"][-1] == "mul"
    assert [n.target.__name__ for n in neg.graph.nodes if n.op == "call_function"][-1] == "sub"


def test_tracing_modes():
    gm = make_fx(lambda x: x.cos(), tracing_mode="fake")(_t(2))
    np.testing.assert_allclose(gm(_t(2, seed=9)).numpy(), _t(2, seed=9).cos().numpy())
    with pytest.raises(AssertionError, match="make_fx: unknown tracing_mode 'eager'"):
        make_fx(lambda x: x, tracing_mode="eager")


@pytest.mark.parity
def test_make_fx_values_match_torch():
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    def body(lib):
        def f(x, y):
            return (x.relu() * y).sum(1), x.t()
        return f

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    ours = make_fx(body(ember))(ember.tensor(a), ember.tensor(b))
    theirs = torch_make_fx(body(torch))(torch.tensor(a), torch.tensor(b))
    assert "def forward(self, x_1, y_1):" in ours.code and "x_1, y_1" in theirs.code
    a2, b2 = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    for o, t in zip(ours(ember.tensor(a2), ember.tensor(b2)),
                    theirs(torch.tensor(a2), torch.tensor(b2)), strict=True):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-15)
