"""ember.distributed.optim.ZeroRedundancyOptimizer in one process: the partition of parameters
over ranks, and steps equal to the wrapped optimizer's (karpathy/llm.c imports it)."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.distributed import optim as dist_optim


def _model():
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Linear(8, 3))


def _train(opt, model, steps=5):
    x = ember.linspace(-1, 1, 20).reshape(5, 4)
    for _ in range(steps):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()]


def test_one_rank_steps_like_the_wrapped_optimizer_with_groups_and_scheduler():
    ref_model, model = _model(), _model()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    ref = ember.optim.AdamW([{"params": [p for p in ref_model.parameters() if p.dim() >= 2],
                              "weight_decay": 0.1},
                             {"params": [p for p in ref_model.parameters() if p.dim() < 2],
                              "weight_decay": 0.0}], lr=1e-2, betas=(0.9, 0.95))
    # llm.c's form: the first group as keyword arguments, the second added later
    zero = dist_optim.ZeroRedundancyOptimizer(params=decay, weight_decay=0.1,
                                              optimizer_class=ember.optim.AdamW, lr=1e-2,
                                              betas=(0.9, 0.95))
    zero.add_param_group({"params": no_decay, "weight_decay": 0.0})
    sched = ember.optim.lr_scheduler.StepLR(zero, step_size=2, gamma=0.5)
    ref_sched = ember.optim.lr_scheduler.StepLR(ref, step_size=2, gamma=0.5)
    x = ember.linspace(-1, 1, 20).reshape(5, 4)
    for _ in range(5):
        for opt, m, s in ((ref, ref_model, ref_sched), (zero, model, sched)):
            opt.zero_grad()
            m(x).pow(2).sum().backward()
            opt.step()
            s.step()
    for a, b in zip(ref_model.parameters(), model.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)
    assert zero.param_groups[0]["lr"] == pytest.approx(1e-2 * 0.25)
    sd = zero.state_dict()
    assert len(sd["state"]) == 4 and sd["param_groups"][1]["params"] == [2, 3]


def test_parameters_are_split_over_ranks_by_size(monkeypatch):
    class _FakeDist:
        def __init__(self, rank):
            self.rank = rank

        def get_world_size(self, group=None):
            return 2

        def get_rank(self, group=None):
            return self.rank

    shards = []
    for rank in (0, 1):
        monkeypatch.setattr(dist_optim, "_dist", lambda rank=rank: _FakeDist(rank))
        model = _model()
        opt = dist_optim.ZeroRedundancyOptimizer(model.parameters(), ember.optim.SGD, lr=0.1)
        shards.append({id(p) for g in opt._optim.param_groups for p in g["params"]})
        sizes = [sum(p.numel() for p in model.parameters() if opt._owner[id(p)] == r)
                 for r in (0, 1)]
        all_ids = {id(p) for p in model.parameters()}
        assert shards[-1] <= all_ids
        # largest first to the lighter rank: 32 -> r0, 24 -> r1, 8 -> r1, 3 -> r0 (tie: lower)
        assert sizes == [32 + 3, 24 + 8]
    assert len(shards[0]) + len(shards[1]) == 4


def test_state_dict_before_consolidation_raises_on_several_ranks(monkeypatch):
    class _FakeDist:
        def get_world_size(self, group=None):
            return 2

        def get_rank(self, group=None):
            return 0

    monkeypatch.setattr(dist_optim, "_dist", lambda: _FakeDist())
    opt = dist_optim.ZeroRedundancyOptimizer(_model().parameters(), ember.optim.SGD, lr=0.1)
    with pytest.raises(RuntimeError, match="consolidate_state_dict"):
        opt.state_dict()


def test_overlap_with_ddp_is_refused():
    with pytest.raises(NotImplementedError, match="overlap_with_ddp"):
        dist_optim.ZeroRedundancyOptimizer(_model().parameters(), ember.optim.SGD,
                                           overlap_with_ddp=True, lr=0.1)
