"""``ember.distributed.optim``: optimizers for data-parallel training.

``ZeroRedundancyOptimizer`` (ZeRO stage 1): every rank keeps the optimizer state of only its
share of the parameters. Parameters are assigned to ranks greedily, largest first, to the rank
with the fewest elements so far; each rank steps its share with a local ``optimizer_class``
instance, then every parameter is broadcast from its owner so all replicas agree again. Without
an initialized process group (or with one rank) it is the wrapped optimizer over every
parameter. ``param_groups`` holds all parameters and its hyperparameters (lr, betas, ...) are
copied to the local optimizer before each step, so lr schedulers work on it as on any optimizer.
"""
from __future__ import annotations

from typing import Any

from ...optim.optimizer import Optimizer

__all__ = ["ZeroRedundancyOptimizer"]


def _dist():
    from ... import distributed as dist

    return dist if dist.is_available() and dist.is_initialized() else None


class ZeroRedundancyOptimizer(Optimizer):
    """Shards ``optimizer_class``'s state across the ranks of ``process_group`` (ZeRO-1)."""

    def __init__(self, params, optimizer_class: type[Optimizer], process_group=None,
                 parameters_as_bucket_view: bool = False, overlap_with_ddp: bool = False,
                 **defaults: Any):
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer: overlap_with_ddp=True needs a "
                                      "DDP communication hook; ember's DDP has none")
        dist = _dist()
        self.process_group = process_group
        self.world_size = dist.get_world_size(process_group) if dist else 1
        self.rank = dist.get_rank(process_group) if dist else 0
        self.global_rank = dist.get_rank() if dist else 0
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._optimizer_class = optimizer_class
        self._owner: dict[int, int] = {}         # id(param) -> owning rank in process_group
        self._load = [0] * self.world_size
        self._optim: Optimizer | None = None
        self._all_state_dicts: list | None = None
        super().__init__(params, defaults)
        self._optim = optimizer_class(self._local_groups(), **defaults)

    # ------------------------------------------------------------------ partitioning
    def _assign(self, params) -> None:
        for p in sorted(params, key=lambda t: -t.numel()):
            rank = min(range(self.world_size), key=lambda r: (self._load[r], r))
            self._owner[id(p)] = rank
            self._load[rank] += p.numel()

    def _local_group(self, group: dict) -> dict:
        local = {k: v for k, v in group.items() if k not in ("params", "param_names")}
        local["params"] = [p for p in group["params"] if self._owner[id(p)] == self.rank]
        return local

    def _local_groups(self) -> list[dict]:
        return [self._local_group(g) for g in self.param_groups]

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        super().add_param_group(param_group)
        self._assign(self.param_groups[-1]["params"])
        if self._optim is not None:
            self._optim.add_param_group(self._local_group(self.param_groups[-1]))

    # ------------------------------------------------------------------ stepping
    def _sync_hyperparameters(self) -> None:
        for group, local in zip(self.param_groups, self._optim.param_groups):
            for key, value in group.items():
                if key not in ("params", "param_names"):
                    local[key] = value

    def step(self, closure=None):
        self._sync_hyperparameters()
        loss = self._optim.step(closure) if closure is not None else self._optim.step()
        dist = _dist()
        if dist is not None and self.world_size > 1:
            ranks = (dist.get_global_rank(self.process_group, r) if self.process_group
                     is not None else r for r in range(self.world_size))
            to_global = list(ranks)
            for group in self.param_groups:
                for p in group["params"]:
                    dist.broadcast(p.data, src=to_global[self._owner[id(p)]],
                                   group=self.process_group)
        return loss

    # ------------------------------------------------------------------ state
    @property
    def state(self):
        return self._optim.state if self._optim is not None else self.__dict__["_state"]

    @state.setter
    def state(self, value):
        self.__dict__["_state"] = value

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Collect every rank's shard of the state, so ``state_dict()`` works on rank ``to``."""
        dist = _dist()
        local = self._optim.state_dict()
        if dist is None or self.world_size == 1:
            self._all_state_dicts = [local]
            return
        gathered: list = [None] * self.world_size
        dist.all_gather_object(gathered, local, group=self.process_group)
        self._all_state_dicts = gathered if self.global_rank == to else None

    def state_dict(self) -> dict[str, Any]:
        """The whole optimizer state (call ``consolidate_state_dict`` first on every rank)."""
        if self.world_size == 1:
            return self._optim.state_dict()
        if self._all_state_dicts is None:
            raise RuntimeError("ZeroRedundancyOptimizer.state_dict(): call "
                               "consolidate_state_dict() on every rank first (the state of "
                               "each rank's shard of the parameters lives on that rank)")
        index = {id(p): k for k, p in enumerate(p for g in self.param_groups
                                                for p in g["params"])}
        per_rank_ids = [[id(p) for g in self.param_groups for p in g["params"]
                         if self._owner[id(p)] == r] for r in range(self.world_size)]
        state = {}
        for r, sd in enumerate(self._all_state_dicts):
            for local_idx, value in sd["state"].items():
                state[index[per_rank_ids[r][local_idx]]] = value
        groups = []
        start = 0
        for g in self.param_groups:
            entry = {k: v for k, v in g.items() if k not in ("params", "param_names")}
            entry["params"] = list(range(start, start + len(g["params"])))
            start += len(g["params"])
            groups.append(entry)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a whole state (as state_dict() returns it); each rank keeps its shard."""
        flat = [p for g in self.param_groups for p in g["params"]]
        mine = [k for k, p in enumerate(flat) if self._owner[id(p)] == self.rank]
        local_index = {k: j for j, k in enumerate(mine)}
        groups = []
        start = 0
        for g, saved in zip(self.param_groups, state_dict["param_groups"]):
            n = len(g["params"])
            entry = {k: v for k, v in saved.items() if k != "params"}
            entry["params"] = [local_index[k] for k in range(start, start + n) if k in local_index]
            start += n
            groups.append(entry)
            for k, v in entry.items():
                if k != "params":
                    g[k] = v
        state = {local_index[int(k)]: v for k, v in state_dict["state"].items()
                 if int(k) in local_index}
        self._optim.load_state_dict({"state": state, "param_groups": groups})
