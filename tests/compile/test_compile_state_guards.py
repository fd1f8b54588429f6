"""Guards on the Python state a compiled call may read (NOTE [Guards on Python state] in
ember/_dynamo/guards.py): a change of a global, a closure cell, a module attribute, a container,
a parameter or submodule object takes effect at the next call, as in eager; a call that changes
such state itself runs eagerly (a replay would not repeat the change)."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember._dynamo.exc import Unsupported
from ember.testing import assert_close

SCALE = 2.0
OFFSET = ember.ones(3)


def _global_scale(x):
    return x * SCALE


def _global_tensor(x):
    return x + OFFSET


def test_a_changed_global_number_recaptures():
    global SCALE
    f = ember.compile(_global_scale)
    x = ember.ones(3)
    try:
        assert f(x).tolist() == [2.0] * 3
        SCALE = 3.0
        assert f(x).tolist() == [3.0] * 3
        assert f(x).tolist() == [3.0] * 3
    finally:
        SCALE = 2.0
    assert f.stats["captures"] == 2 and f.stats["hits"] == 1


def test_a_rebound_global_tensor_is_read():
    global OFFSET
    f = ember.compile(_global_tensor)
    x = ember.ones(3)
    try:
        assert f(x).tolist() == [2.0] * 3
        OFFSET = ember.full((3,), 7.0)
        assert f(x).tolist() == [8.0] * 3
    finally:
        OFFSET = ember.ones(3)


def test_closure_cells_lists_and_dicts():
    k, n, cfg = [1.0], [1, 2], {"p": 1.0}

    def g(x):
        for i in n:
            x = x + i
        return x * k[0] + cfg["p"]

    f = ember.compile(g)
    x = ember.zeros(2)
    for change in (lambda: None, lambda: k.__setitem__(0, 5.0), lambda: n.append(3),
                   lambda: cfg.__setitem__("p", -2.0)):
        change()
        np.testing.assert_array_equal(f(x).numpy(), g(x).numpy())


def test_a_branch_on_a_closure_flag_takes_the_new_path():
    flag = [False]

    def g(x):
        return x * 100 if flag[0] else x

    f = ember.compile(g)
    x = ember.ones(2)
    assert f(x).tolist() == [1.0, 1.0]
    flag[0] = True
    assert f(x).tolist() == [100.0, 100.0]


class _Scaled(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.temperature = 1.0
        self.lin = ember.nn.Linear(3, 3)

    def forward(self, x):
        return self.lin(x) / self.temperature


def test_module_attributes_parameters_and_submodules():
    ember.manual_seed(0)
    m = _Scaled()
    f = ember.compile(m)
    x = ember.randn(4, 3)

    def check():
        np.testing.assert_allclose(f(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    check()
    m.temperature = 0.5
    check()
    m.lin.weight = ember.nn.Parameter(ember.zeros(3, 3))
    check()
    m.lin = ember.nn.Linear(3, 3)
    check()
    with ember.no_grad():          # in place: the same objects, read live, no recapture
        m.lin.bias.add_(1.0)
    before = f.__dict__["_compiled"].stats["captures"]
    check()
    assert f.__dict__["_compiled"].stats["captures"] == before


def test_a_call_that_changes_python_state_runs_eagerly():
    calls = []

    class Counting(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x * 2

    m = Counting()
    f = ember.compile(m)
    for _ in range(3):
        f(ember.ones(2))
    assert m.calls == 3

    def g(x):
        calls.append(1)
        return x + 1

    cg = ember.compile(g)
    for _ in range(3):
        cg(ember.ones(2))
    assert len(calls) == 3
    assert "the call changes Python state (_fn.__closure__[0].cell_contents)" in \
        cg.last_breaks[0][0]
    h = ember.compile(g, fullgraph=True)
    with pytest.raises(Unsupported, match="changes Python state.*fullgraph=True"):
        h(ember.ones(2))


def test_state_that_keeps_changing_falls_back_to_eager_after_the_limit():
    step = [0]

    def g(x):
        return x * step[0]

    f = ember.compile(g)
    x = ember.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(20):
            step[0] = i
            assert f(x).tolist() == [float(i)] * 2
    assert any("its guards failed" in str(w.message) for w in caught)
    assert f.stats["captures"] <= 10


def test_a_training_loop_with_a_scheduler_does_not_recapture():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 1))
    opt = ember.optim.Adam(model.parameters(), lr=0.01)
    sched = ember.optim.lr_scheduler.StepLR(opt, 1, gamma=0.9)
    losses = []

    def step(x, y):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    f = ember.compile(step)
    rng = np.random.default_rng(0)
    for _ in range(6):
        x = ember.tensor(rng.standard_normal((5, 4)), dtype=ember.float32)
        y = ember.tensor(rng.standard_normal((5, 1)), dtype=ember.float32)
        losses.append(f(x, y).item())  # the list is outside the compiled function
        sched.step()
    assert f.stats["captures"] == 1 and f.stats["hits"] == 5 and f.last_breaks == []


class _GlobalInForward(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = ember.nn.Linear(3, 3)

    def forward(self, x):
        return self.lin(x) * SCALE


def test_a_global_read_by_a_module_s_forward():
    global SCALE
    m = _GlobalInForward()
    f = ember.compile(m)
    x = ember.ones(2, 3)
    try:
        a = f(x)
        SCALE = 5.0
        np.testing.assert_allclose((f(x) / a).detach().numpy(), np.full((2, 3), 2.5), rtol=1e-6)
    finally:
        SCALE = 2.0


def test_autocast_around_a_compiled_call_is_part_of_the_key():
    m = ember.nn.Linear(4, 4)
    f = ember.compile(m)
    x = ember.randn(2, 4)
    assert f(x).dtype == ember.float32
    with ember.autocast("cpu", dtype=ember.bfloat16):
        assert f(x).dtype == ember.bfloat16
        np.testing.assert_allclose(f(x).float().detach().numpy(), m(x).float().detach().numpy())
    assert f(x).dtype == ember.float32


def test_hooks_registered_after_the_capture_run():
    m = ember.nn.Linear(4, 4)
    f = ember.compile(m)
    x = ember.randn(2, 4)
    f(x)
    seen = []
    handle = m.register_forward_hook(lambda mod, args, out: seen.append(out.shape))
    f(x)
    f(x)
    assert seen == [(2, 4), (2, 4)]   # a hook with a side effect: the call runs eagerly
    handle.remove()
    zeroing = m.register_forward_hook(lambda mod, args, out: out * 0)
    assert f(x).abs().sum().item() == 0.0
    zeroing.remove()
    np.testing.assert_allclose(f(x).detach().numpy(), m(x).detach().numpy())


step = 0  # a module-level loop counter, as training scripts have


def test_a_global_named_like_an_attribute_the_call_reads_is_not_guarded():
    global step
    m = ember.nn.Linear(3, 1)
    opt = ember.optim.SGD(m.parameters(), lr=0.1)

    def train_step(x):
        opt.zero_grad()
        loss = m(x).sum()
        loss.backward()
        opt.step()          # 'step' is an attribute here, not the global
        return loss

    f = ember.compile(train_step)
    for step in range(12):  # noqa: B007 - the global changes under the compiled function
        f(ember.ones(2, 3))
    assert f.stats["captures"] == 1 and f.stats["hits"] == 11


def test_a_replaced_forward_and_a_recompiled_graph_module_run_the_new_code():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(x)

    net = Net()
    c = ember.compile(net)
    x = ember.randn(2, 3)
    c(x)
    Net.forward = lambda self, x: self.lin(x).relu() * 2
    assert_close(c(x), net.lin(x).relu() * 2)

    # an fx graph rewritten and recompiled after its first compiled call (pytorch/examples'
    # fx/wrap_output_dynamically.py)
    gm = ember.fx.symbolic_trace(nn.Sequential(nn.Linear(3, 3)))
    cg = ember.compile(gm)
    before = cg(x)
    out = next(n for n in gm.graph.nodes if n.op == "output")
    with gm.graph.inserting_before(out):
        act = gm.graph.call_function(F.leaky_relu, (out.args[0],))
    out.args = (act,)
    gm.recompile()
    assert_close(cg(x), F.leaky_relu(before))


def test_a_call_that_extends_a_cache_dict_argument_at_growing_sizes():
    # whisper's decoder: forward hooks extend kv_cache[module] by one position each call;
    # the size template was looked for on the arguments after the call had changed them
    lin = nn.Linear(4, 4)

    def step(x, cache):
        k = lin(x)
        cache["k"] = ember.cat([cache["k"], k], 1) if "k" in cache else k
        return (x @ cache["k"].transpose(1, 2)).softmax(-1) @ cache["k"]

    c = ember.compile(step)
    got, want = {}, {}
    for i in range(5):
        x = ember.randn(3, 1, 4)
        assert_close(c(x, got), step(x, want))
        assert got["k"].shape == (3, i + 1, 4)


def test_a_tensor_the_call_stores_on_the_module_is_stored_at_every_call():
    # llama2.c's Transformer keeps its loss as self.last_loss and train.py reads it from there;
    # a replay ran no Python, so last_loss stayed the first call's (a second backward raised)
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 3)
            self.last_loss = None

        def forward(self, x, y):
            out = self.lin(x)
            self.last_loss = F.cross_entropy(out, y)
            return out

    net = Net()
    net(ember.randn(5, 4), ember.randint(0, 3, (5,)))  # (an evaluation before: a tensor there)
    c = ember.compile(net)
    for seed in range(3):
        ember.manual_seed(seed)
        x, y = ember.randn(5, 4), ember.randint(0, 3, (5,))
        c(x, y)
        loss = net.last_loss
        assert_close(loss, F.cross_entropy(net.lin(x), y))
        loss.backward()


def test_a_forward_hook_that_records_outputs_into_a_new_dict_entry():
    # vit-pytorch's Recorder / Extractor: hooks keep each layer's output in Python containers
    net = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    seen = {}

    def keep(module, args, output):
        seen[len(seen)] = output

    net[1].register_forward_hook(keep)
    c = ember.compile(net)
    for seed in range(3):
        ember.manual_seed(seed)
        x = ember.randn(3, 4)
        out = c(x)
        assert_close(seen[len(seen) - 1], net[1](net[0](x)))
        assert_close(out, net(x))
