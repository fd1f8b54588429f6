"""functional_call and the helpers that treat a module's state as explicit arguments."""

from __future__ import annotations

import contextlib

import ember

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_"]


def _owner(module, dotted):
    *path, name = dotted.split(".")
    for part in path:
        module = getattr(module, part)
    return module, name


@contextlib.contextmanager
def _swapped(module, values, tie_weights, strict):
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(dict(module.named_buffers(remove_duplicate=False)))
    if strict:
        missing = sorted(set(named) - set(values))
        unexpected = sorted(set(values) - set(named))
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n"
                               f"\tUnexpected key(s): {', '.join(unexpected) or 'none'}.\n"
                               f"\tMissing key(s): {', '.join(missing) or 'none'}.")
    if tie_weights:
        # a tensor reached under several names takes the value given for any of them
        by_id = {}
        for name, t in named.items():
            by_id.setdefault(id(t), []).append(name)
        values = dict(values)
        for names in by_id.values():
            given = [values[n] for n in names if n in values]
            if len(given) > 1 and any(g is not given[0] for g in given[1:]):
                raise ValueError(f"functional_call got multiple values for keys {names}, "
                                 "which are tied. Consider using tie_weights=False")
            if given:
                for n in names:
                    values[n] = given[0]
    saved = []
    try:
        for name, value in values.items():
            owner, attr = _owner(module, name)
            table = "_parameters" if attr in owner._parameters else (
                "_buffers" if attr in owner._buffers else None)
            if table is None:
                saved.append((owner, attr, None, owner.__dict__.get(attr, _MISSING)))
                object.__setattr__(owner, attr, value)
                continue
            saved.append((owner, attr, table, getattr(owner, table)[attr]))
            getattr(owner, table)[attr] = value
        yield
    finally:
        for owner, attr, table, old in reversed(saved):
            if table is None:
                if old is _MISSING:
                    owner.__dict__.pop(attr, None)
                else:
                    object.__setattr__(owner, attr, old)
            else:
                getattr(owner, table)[attr] = old


_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module`` with its parameters and buffers replaced by the given tensors.

    Example:
        >>> import ember
        >>> from ember.func import functional_call
        >>> layer = ember.nn.Linear(2, 1, bias=False)
        >>> functional_call(layer, {"weight": ember.ones(1, 2)}, (ember.tensor([[1.0, 2.0]]),))
        tensor([[3.]])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    else:
        values = {}
        for d in parameter_and_buffer_dicts:
            overlap = set(values) & set(d)
            if overlap:
                raise ValueError(f"{sorted(overlap)} appeared in multiple dictionaries; "
                                 "behavior of functional call is ambiguous")
            values.update(d)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, values, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def stack_module_state(models):
    """(params, buffers): each name mapped to its tensors from every model, stacked on dim 0."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/"
                           "eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {name: ember.stack([dict(m.named_parameters())[name].detach() for m in models])
              for name, _ in models[0].named_parameters()}
    for t in params.values():
        t.requires_grad_()
    buffers = {name: ember.stack([dict(m.named_buffers())[name] for m in models])
               for name, _ in models[0].named_buffers()}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Make every batch norm in ``root`` use batch statistics only (no running stats)."""
    for module in root.modules():
        if isinstance(module, ember.nn.modules.batchnorm._BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root

