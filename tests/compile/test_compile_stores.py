"""Tensors a compiled call stores into Python state (NOTE [Tensors a call stores] in
ember/_dynamo/eval_frame.py): a tensor (or None) put where a tensor the graph does not read or
None was is an extra output of the replay, stored after each replay; every other change of
Python state still runs the call eagerly. Values and gradients against eager, call by call."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember.testing import assert_close


@pytest.fixture(autouse=True)
def _reset():
    ember._dynamo.reset()
    yield


def _pair(cls):
    ember.manual_seed(0)
    a, b = cls(), cls()
    b.load_state_dict(a.state_dict())
    return a, b


class _LastLoss(nn.Module):  # llama2.c's Transformer keeps its loss this way
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.last_loss = None

    def forward(self, x, y=None):
        out = self.lin(x)
        self.last_loss = F.cross_entropy(out, y) if y is not None else None
        return out


def test_a_stored_loss_is_replayed_with_its_gradient():
    model, eager = _pair(_LastLoss)
    compiled = ember.compile(model)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    opt_e = ember.optim.SGD(eager.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = ember.from_numpy(rng.standard_normal((6, 4)).astype(np.float32))
        y = ember.from_numpy(rng.integers(0, 3, 6))
        for net, call, o in ((model, compiled, opt), (eager, eager, opt_e)):
            o.zero_grad()
            call(x, y)
            net.last_loss.backward()
            o.step()
        assert model.last_loss is not eager.last_loss
        assert_close(model.last_loss, eager.last_loss)
        assert_close(model.lin.weight, eager.lin.weight)
    # None before the first call, a tensor after it: two captures, then replays
    assert compiled._compiled.stats["captures"] == 2
    assert compiled._compiled.stats["hits"] == 3 and compiled._compiled.stats["eager"] == 0
    # without labels the call stores None where the loss was: replayed too
    compiled(x)
    assert model.last_loss is None
    compiled(x, y)
    assert_close(model.last_loss, F.cross_entropy(eager(x), y))


def test_a_stored_value_into_a_dict_entry_is_replayed():
    class Keep(nn.Module):
        def __init__(self):
            super().__init__()
            self.cache = {"h": None}

        def forward(self, x):
            h = x.sin() * 2
            self.cache["h"] = h
            return h.cos()

    net = Keep()
    f = ember.compile(net)
    for seed in range(4):
        x = ember.from_numpy(np.random.default_rng(seed).standard_normal(5).astype(np.float32))
        out = f(x)
        assert_close(net.cache["h"], x.sin() * 2)
        assert_close(out, (x.sin() * 2).cos())
    # None before the first call, a tensor after it: two captures, then replays
    assert f._compiled.stats["captures"] == 2
    assert f._compiled.stats["hits"] == 2 and f._compiled.stats["eager"] == 0


def test_a_state_the_call_reads_back_runs_eagerly():
    # the hidden state is read by the next call: a replay would keep reading the first one
    class Carry(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.h = None

        def forward(self, x):
            h = self.h if self.h is not None else ember.zeros(3)
            out = self.lin(x) + h
            self.h = out.detach()
            return out

    model, eager = _pair(Carry)
    f = ember.compile(model)
    for seed in range(5):
        x = ember.from_numpy(np.random.default_rng(seed).standard_normal(3).astype(np.float32))
        assert_close(f(x), eager(x))
        assert_close(model.h, eager.h)


def test_appending_to_a_list_still_runs_eagerly():
    class Record(nn.Module):
        def __init__(self):
            super().__init__()
            self.seen = []

        def forward(self, x):
            y = x.exp()
            self.seen.append(y)
            return y

    net = Record()
    f = ember.compile(net)
    xs = [ember.full((2,), float(k)) for k in range(3)]
    for x in xs:
        f(x)
    assert len(net.seen) == 3
    for x, y in zip(xs, net.seen, strict=True):
        assert_close(y, x.exp())


def test_fullgraph_accepts_a_replayable_store():
    model, eager = _pair(_LastLoss)
    f = ember.compile(model, fullgraph=True)
    x, y = ember.randn(4, 4), ember.tensor([0, 1, 2, 0])
    for _ in range(3):
        f(x, y)
    assert_close(model.last_loss, F.cross_entropy(eager(x), y))
