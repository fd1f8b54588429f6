"""ember.compile of functions with graph breaks (issue 19): the ops before and after a break run
as separate compiled graphs, the break itself in Python (NOTE [Graph breaks that split] in
ember/_dynamo/segments.py)."""
from __future__ import annotations

import copy
import inspect

import numpy as np
import pytest

import ember
from ember import nn
from ember._dynamo.exc import Unsupported


def _t(*shape, seed=0, grad=False):
    rng = np.random.default_rng(seed)
    return ember.tensor(rng.standard_normal(shape), dtype=ember.float64, requires_grad=grad)


def _line_of(fn, text):
    """file:line of the first line of fn's source containing text."""
    lines, first = inspect.getsourcelines(fn)
    line = first + next(i for i, s in enumerate(lines) if text in s)
    return f"{inspect.getsourcefile(fn)}:{line}"


@pytest.fixture
def op_dispatches(count_dispatches):
    """Counts ops dispatched eagerly (Op._run); a compiled replay calls none."""
    return count_dispatches()


def _item_break(x, w):
    h = (x @ w).tanh()
    scale = h.sum().item()          # the break: Python uses the number
    if scale > -1e9:
        h = h * 2
    return (h.sin() + 1).sum()


def test_break_compiles_before_and_after_and_equals_eager_in_float64(op_dispatches):
    f = ember.compile(_item_break)
    for seed in range(4):
        x, w = _t(4, 3, seed=seed), _t(3, 5, seed=seed + 10, grad=True)
        w_e = w.detach().clone().requires_grad_()
        op_dispatches[0] = calls_at_start = 0
        got = f(x, w)
        before = op_dispatches[0]
        got.backward()
        want = _item_break(x, w_e)
        want.backward()
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-14)
        np.testing.assert_allclose(w.grad.numpy(), w_e.grad.numpy(), rtol=1e-13)
        if seed:  # a replay: no op of either side went through eager dispatch
            assert got.grad_fn.name() == "CompiledFunctionBackward"
            assert before == calls_at_start
    assert f.stats["captures"] == 1 and f.stats["hits"] == 3
    assert f.stats["recompiles"] == 0 and f.stats.get("diverged", 0) == 0


def test_explain_counts_two_graphs_and_names_the_break_line():
    x, w = _t(4, 3), _t(3, 5, grad=True)
    report = ember._dynamo.explain(_item_break)(x, w)
    assert report.graph_count == 2 and report.graph_break_count == 1
    assert report.ops_per_graph == [["Matmul", "Tanh", "Sum"], ["Mul", "Sin", "Add", "Sum"]]
    assert report.op_count == 7
    reason = report.break_reasons[0]
    assert "Tensor.item()" in reason.reason
    assert reason.user_stack[0].startswith(_line_of(_item_break, ".item()"))
    assert "Graph Count: 2" in str(report) and "Graph Break Count: 1" in str(report)


def _two_breaks(x):
    a = x.exp()
    if a.sum() > 0:                 # break 1 (__bool__)
        a = a + 1
    print(a.mean())                 # break 2 (print)
    return a * x


def test_n_breaks_make_n_plus_one_graphs_and_print_runs_each_call(capsys):
    x = _t(3)
    report = ember._dynamo.explain(_two_breaks)(x)
    assert report.graph_count == 3 and report.graph_break_count == 2
    assert "__bool__" in report.break_reasons[0].reason
    assert "print" in report.break_reasons[1].reason
    assert report.break_reasons[1].user_stack[0].startswith(_line_of(_two_breaks, "print("))
    capsys.readouterr()
    f = ember.compile(_two_breaks)
    for _ in range(3):
        np.testing.assert_allclose(f(x).numpy(), _two_breaks(x).numpy(), rtol=1e-15)
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 6 and len(set(printed)) == 1  # every call prints, as torch's does
    assert f.stats["hits"] == 2


def test_fullgraph_still_raises_at_the_break():
    with pytest.raises(Unsupported, match="fullgraph=True forbids graph breaks"):
        ember.compile(_item_break, fullgraph=True)(_t(4, 3), _t(3, 5))


def _branch(x):
    h = x.sin()
    c = x.cos()                     # used only on the second branch
    if h.sum() > 0:
        return h * 2
    return c * 3 + h


@pytest.mark.parametrize("first", [1.0, -1.0])
def test_other_branch_than_captured_equals_eager_with_grads(first):
    f = ember.compile(_branch)
    for v in [first, 2.0, -2.0, 0.5, -0.7, 3.0, -3.0, 4.0, -4.0]:
        x = ember.tensor([v, v / 2, v / 3], dtype=ember.float64, requires_grad=True)
        xe = x.detach().clone().requires_grad_()
        got, want = f(x), _branch(xe)
        (got * got).sum().backward()
        (want * want).sum().backward()
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-15)
        np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-14)
    # the first call on the other path leaves the recording (and stays correct); a later call
    # that takes it is recorded as a second path (NOTE [Paths of a split call]), after which
    # both paths replay: the two recordings, one capture of a known path, then only hits
    assert f.stats["diverged"] == 1 and f.stats["captures"] == 3 and f.stats["hits"] == 5
    assert f.stats["recompiles"] == 0


def _loop(x):
    for _ in range(4):
        x = x * 1.5
        if x.abs().max() > 2:       # a break whose outcome depends on the data
            x = x / 2
    return x.sum()


def test_loop_with_data_dependent_break_equals_eager():
    f = ember.compile(_loop)
    for v in [0.3, 0.3, 1.0, 0.31, 3.0, 0.3, 1.0, 3.0, 0.3, 1.1, 2.9, 1.2, 0.4, 3.1]:
        x = ember.tensor([v, -v], dtype=ember.float64, requires_grad=True)
        xe = x.detach().clone().requires_grad_()
        got, want = f(x), _loop(xe)
        got.backward()
        want.backward()
        assert got.item() == pytest.approx(want.item(), rel=1e-15)
        np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-15)
    report = ember._dynamo.explain(_loop)(ember.tensor([0.3, -0.3], dtype=ember.float64))
    assert report.graph_break_count == 4 and report.graph_count == 5
    assert f.stats["recompiles"] == 0 and f.stats["hits"] >= 4
    assert f.stats["captures"] <= 1 + 2 * 4  # paths are recorded a bounded number of times


class _Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x).relu()
        if h.mean() > 10:            # break inside a nested module
            h = h / 10
        return h


class _Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = _Inner(), _Inner()
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(self.b(self.a(x)).tanh())


def test_nested_module_breaks_compile_and_match_eager_grads():
    ember.manual_seed(0)
    model = _Outer().double()
    twin = copy.deepcopy(model)
    compiled = ember.compile(model)
    for seed in range(3):
        x = _t(5, 4, seed=seed)
        got, want = compiled(x).sum(), twin(x).sum()
        got.backward()
        want.backward()
        assert got.item() == pytest.approx(want.item(), rel=1e-14)
        for p, q in zip(model.parameters(), twin.parameters(), strict=True):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-13)
    stats = compiled.dynamo_ctx.stats
    assert stats["captures"] == 1 and stats["hits"] == 2 and stats["recompiles"] == 0
    report = ember._dynamo.explain(model)(_t(5, 4))
    assert report.graph_count == 3 and report.graph_break_count == 2


def _train_pair(opt_cls, **kw):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    twin = copy.deepcopy(model)
    return (model, opt_cls(model.parameters(), **kw)), (twin, opt_cls(twin.parameters(), **kw))


@pytest.mark.parametrize("opt_cls, kw", [(ember.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
                                         (ember.optim.Adam, {"lr": 0.01})])
def test_training_step_with_break_before_backward_equals_eager(opt_cls, kw):
    (model, opt), (twin, opt_e) = _train_pair(opt_cls, **kw)
    seen = []

    def make_step(m, o):
        def step(x, y):
            o.zero_grad()
            loss = ((m(x) - y) ** 2).mean()
            seen.append(float(loss))          # break: Python reads the number
            loss.backward()                   # after the break: the engine, compiled backward
            o.step()
            return loss
        return step

    compiled, eager = ember.compile(make_step(model, opt)), make_step(twin, opt_e)
    rng = np.random.default_rng(3)
    for _ in range(5):
        x = ember.tensor(rng.standard_normal((6, 4)))
        y = ember.tensor(rng.standard_normal((6, 1)))
        a, b = compiled(x, y), eager(x, y)
        assert a.item() == pytest.approx(b.item(), rel=1e-13)
    assert seen[0::2] == pytest.approx(seen[1::2], rel=1e-13)
    for p, q in zip(model.parameters(), twin.parameters(), strict=True):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12)
    assert compiled.stats["hits"] == 4 and compiled.stats["recompiles"] == 0
    assert compiled.stats.get("diverged", 0) == 0
    assert any("backward()" in r for r, _ in compiled.last_breaks)


def test_a_changed_shape_recaptures_and_guards_hold():
    f = ember.compile(_item_break)
    for shape in [(4, 3), (4, 3), (2, 3), (4, 3)]:
        x, w = _t(*shape), _t(3, 5)
        np.testing.assert_allclose(f(x, w).item(), _item_break(x, w).item(), rtol=1e-14)
    assert f.stats["captures"] == 2 and f.stats["hits"] == 2


def test_first_backward_of_the_process_inside_a_capture_leaves_no_hook(tmp_path):
    # Tensor.backward binds ember.autograd.backward on first use; a capture must not be the
    # one it binds (the recorder's hook would then see every later backward and keep the
    # recorder alive)
    import subprocess
    import sys
    script = (
        "import ember\n"
        "def step(x):\n"
        "    loss = (x * 2).sum()\n"
        "    if loss > 0:\n"       # a split: the backward then runs in the engine
        "        loss.backward()\n"
        "    return loss\n"
        "f = ember.compile(step)\n"
        "x = ember.ones(3, requires_grad=True)\n"
        "f(x)\n"
        "y = ember.ones(2, requires_grad=True)\n"
        "(y * 3).sum().backward()\n"
        "print(y.grad.tolist(), ember._tensor._backward[0] is ember.autograd.backward)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[3.0, 3.0] True"


class _BnDrop(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin, self.bn = nn.Linear(4, 6), nn.BatchNorm1d(6)
        self.drop, self.out = nn.Dropout(0.3), nn.Linear(6, 2)

    def forward(self, x, scale=1.0):
        h = self.bn(self.lin(x)).relu()
        if h.sum() > -1e9:
            h = h * scale
        return self.out(self.drop(h))


def test_batch_norm_and_dropout_in_training_with_a_break_replay_like_eager():
    # the running-statistics update runs between graphs with the batch statistics the compiled
    # graph computed; dropout masks are drawn by the graph in eager's order
    ember.manual_seed(0)
    model = _BnDrop().double()
    twin = copy.deepcopy(model)
    compiled = ember.compile(model)
    x = _t(8, 4)
    for i in range(4):
        ember.manual_seed(100 + i)
        got = compiled(x, scale=2.0)
        got.sum().backward()
        ember.manual_seed(100 + i)
        want = twin(x, scale=2.0)
        want.sum().backward()
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
        for p, q in zip(model.parameters(), twin.parameters(), strict=True):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-11)
    for b, c in zip(model.buffers(), twin.buffers(), strict=True):
        np.testing.assert_allclose(b.numpy(), c.numpy(), rtol=1e-12)
    stats = compiled.dynamo_ctx.stats
    assert stats["hits"] == 3 and stats.get("diverged", 0) == 0


def _cut(h):
    return h.sum() > -1e9


@pytest.mark.parametrize("body", [
    lambda h: h.detach() * 2 + h if _cut(h) else h,              # alias made after the break
    lambda h: (lambda d: d * 2 + h if _cut(h) else h)(h.detach()),  # ... and before it
    lambda h: h * 2 if h.data.numpy().sum() > -1e9 else h,       # NumPy reads through an alias
    lambda h: h.t().contiguous().exp() if _cut(h) else h,        # layout decides contiguous()
    lambda h: h.flip(0)[::2].contiguous() * 3 if _cut(h) else h,
], ids=["detach_after", "detach_before", "data_numpy", "transpose_contiguous", "flip_step"])
def test_aliases_and_layouts_of_deferred_values_replay_like_eager(body):
    def f(x):
        return body(x.sin())

    compiled = ember.compile(f)
    for seed in range(3):
        x = _t(4, 3, seed=seed)
        np.testing.assert_allclose(compiled(x).detach().numpy(), f(x).detach().numpy(),
                                   rtol=1e-15)
    assert compiled.stats["hits"] == 2 and compiled.stats.get("diverged", 0) == 0
