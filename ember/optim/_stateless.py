"""``swap_in_optimizer_params_and_state``: run optimizer code on other parameter tensors and
state (e.g. copies), leaving the live optimizer as it was afterwards."""
from __future__ import annotations

import contextlib
from collections import defaultdict

_NAME = "swap_in_optimizer_params_and_state"


def _swapin_groups(optimizer, swapin_parameters, swapin_optim_state):
    """[(live group, saved group, tensors)] aligned by order, with torch's checks."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state; got an optimizer "
                           "that has not stepped yet.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a state_dict-shaped optimizer state; got "
                           f"{type(swapin_optim_state).__name__}")
    state, groups = swapin_optim_state.get("state"), swapin_optim_state.get("param_groups")
    if not isinstance(state, dict) or not isinstance(groups, (list, tuple)):
        raise RuntimeError(f"{_NAME}: swapin_optim_state needs a dict 'state' and a list "
                           "'param_groups', as optimizer.state_dict() returns.")
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError(f"{_NAME}: swapin_optim_state has {len(groups)} param groups; "
                           f"expected {len(optimizer.param_groups)}, as the optimizer has.")
    tensors = list(swapin_parameters.values())
    offset, seen, plan = 0, set(), []
    for i, (live, saved) in enumerate(zip(optimizer.param_groups, groups)):
        ids = list(saved.get("params", ()))
        if len(ids) != len(live["params"]):
            raise RuntimeError(f"{_NAME}: param group {i} lists {len(ids)} parameters; "
                               f"expected {len(live['params'])}, as the optimizer's group has.")
        if offset + len(ids) > len(tensors):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering; got too few parameters.")
        plan.append((live, saved, tensors[offset:offset + len(ids)]))
        offset += len(ids)
        seen.update(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by "
                           f"packed parameter ids from param_groups[*]['params']; got extra "
                           f"keys {extra!r}.")
    return state, plan


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Inside the block, ``optimizer`` works on ``swapin_parameters`` (a dict in the order of
    its parameters, e.g. ``dict(model.named_parameters())``) and the state of
    ``swapin_optim_state`` (an ``optimizer.state_dict()``-shaped dict); on exit the live
    parameters, hyperparameters and state are back.

    In-place updates of the swapped-in state tensors are visible in ``swapin_optim_state``
    afterwards; entries added or replaced during the block are not.

    Example:
        >>> import ember
        >>> w = ember.nn.Parameter(ember.ones(2))
        >>> opt = ember.optim.SGD([w], lr=0.5, momentum=0.9)
        >>> w.grad = ember.ones(2); opt.step()
        >>> copy = w.detach().clone(); copy.grad = ember.ones(2)
        >>> with swap_in_optimizer_params_and_state(opt, {"w": copy}, opt.state_dict()):
        ...     opt.step()
        >>> w.tolist(), copy.tolist()
        ([0.5, 0.5], [-0.44999998807907104, -0.44999998807907104])
    """
    state, plan = _swapin_groups(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped = defaultdict(dict)
        for live, saved, tensors in plan:
            live["params"] = tensors
            live.update({k: v for k, v in saved.items() if k != "params"})
            for param, pid in zip(tensors, saved["params"]):
                swapped[param] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
