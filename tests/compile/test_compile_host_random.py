"""A compiled call that draws from Python's `random` module or NumPy's global stream runs
eagerly (NOTE [Python's random streams in a compiled call] in ember/_dynamo/eval_frame.py): a
replay would repeat the capture run's branch and numbers. bentrevett/pytorch-seq2seq's
teacher forcing (``if random.random() < ratio``) trained on a frozen decision under
``run.py --compile`` before."""
import random

import numpy as np
import pytest

import ember
from ember import nn
from ember._dynamo.exc import Unsupported


class TeacherForcing(nn.Module):
    """A branch on a fresh Python draw at every call, as seq2seq decoders take it."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x, ratio):
        out = self.lin(x)
        if random.random() < ratio:
            return out * 0 + 1.0
        return out * 0 - 1.0


def _signs(model, n, seed):
    random.seed(seed)
    return [model(ember.ones(2, 3), 0.5)[0, 0].item() for _ in range(n)]


def test_a_branch_on_python_random_takes_each_call_s_draw():
    model = TeacherForcing()
    eager = _signs(model, 16, 0)
    assert set(eager) == {1.0, -1.0}  # both branches occur, so a frozen one cannot pass
    compiled = ember.compile(model)
    assert _signs(compiled, 16, 0) == eager
    assert "Python's random module" in compiled.dynamo_ctx.last_breaks[0][0]
    # the stream moved exactly as in eager: the next draw is eager's next draw
    random.seed(0)
    for _ in range(16):
        random.random()
    expected = random.random()
    random.seed(0)
    _signs(compiled, 16, 0)
    assert random.random() == expected


@pytest.mark.parametrize("draw", ["python", "numpy"])
def test_a_scale_drawn_per_call_is_not_baked_in(draw):
    def jitter(x):
        scale = random.uniform(0.5, 1.5) if draw == "python" else np.random.uniform(0.5, 1.5)
        return x * scale

    f = ember.compile(jitter)
    random.seed(1)
    np.random.seed(1)
    got = [f(ember.ones(2))[0].item() for _ in range(4)]
    random.seed(1)
    np.random.seed(1)
    want = [jitter(ember.ones(2))[0].item() for _ in range(4)]
    assert got == pytest.approx(want)
    assert len(set(want)) == 4
    name = "Python's random module" if draw == "python" else "NumPy's global random stream"
    assert name in f.last_breaks[0][0]


def test_a_call_without_host_draws_still_replays():
    model = nn.Linear(3, 3)
    f = ember.compile(model)
    for _ in range(3):
        f(ember.ones(2, 3))
    assert f.dynamo_ctx.stats["captures"] == 1 and f.dynamo_ctx.stats["hits"] == 2
    assert not f.dynamo_ctx.last_breaks


def test_fullgraph_refuses_a_call_that_draws():
    f = ember.compile(TeacherForcing(), fullgraph=True)
    with pytest.raises(Unsupported, match="draws from Python's random module.*fullgraph=True"):
        f(ember.ones(2, 3), 0.5)
