"""functorch's make_functional API: a module turned into a function of its parameters (and
buffers), the style before ember.func.functional_call. The returned parameters belong to a copy
of the module, so training them leaves the original untouched."""
from __future__ import annotations

import copy

import ember
from ember import nn
from ember.func import functional_call


def _state_names(model, kind):
    members = model.named_parameters() if kind == "params" else model.named_buffers()
    names, tensors = [], []
    for name, t in members:
        names.append(name)
        tensors.append(t)
    return names, tuple(tensors)


class FunctionalModuleWithBuffers(nn.Module):
    """``fmodel(params, buffers, *args, **kwargs)``: the wrapped module run with these tensors
    in place of its own parameters and buffers (in named_parameters/named_buffers order)."""

    def __init__(self, stateless_model, param_names, buffer_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = tuple(param_names)
        self.buffer_names = tuple(buffer_names)

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        model_copy = copy.deepcopy(model)
        param_names, params = _state_names(model_copy, "params")
        buffer_names, buffers = _state_names(model_copy, "buffers")
        if disable_autograd_tracking:
            for p in params:
                p.requires_grad_(False)
        return (FunctionalModuleWithBuffers(model_copy, param_names, buffer_names), params,
                buffers)

    def forward(self, params, buffers, *args, **kwargs):
        params, buffers = tuple(params), tuple(buffers)
        _check_count("FunctionalModuleWithBuffers", "params", self.param_names, params)
        _check_count("FunctionalModuleWithBuffers", "buffers", self.buffer_names, buffers)
        state = dict(zip(self.param_names, params, strict=True))
        state.update(zip(self.buffer_names, buffers, strict=True))
        return functional_call(self.stateless_model, state, args, kwargs)


class FunctionalModule(nn.Module):
    """``fmodel(params, *args, **kwargs)``: the wrapped module run with these parameters."""

    def __init__(self, stateless_model, param_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = tuple(param_names)

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        model_copy = copy.deepcopy(model)
        param_names, params = _state_names(model_copy, "params")
        if disable_autograd_tracking:
            for p in params:
                p.requires_grad_(False)
        return FunctionalModule(model_copy, param_names), params

    def forward(self, params, *args, **kwargs):
        params = tuple(params)
        _check_count("FunctionalModule", "params", self.param_names, params)
        return functional_call(self.stateless_model, dict(zip(self.param_names, params,
                                                              strict=True)), args, kwargs)


def _check_count(who, what, names, given):
    if len(names) != len(given):
        raise RuntimeError(f"{who}: expected {len(names)} {what} (one per entry of "
                           f"named_{'parameters' if what == 'params' else 'buffers'}()); got "
                           f"{len(given)}")


def make_functional(model, disable_autograd_tracking=False):
    """(fmodel, params): ``fmodel(params, *args)`` runs a copy of ``model`` with ``params``."""
    if not isinstance(model, nn.Module):
        raise RuntimeError(f"make_functional(model): Expected model to be a nn.Module; got "
                           f"{type(model).__name__}")
    if len(list(model.buffers())) > 0:
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    return FunctionalModule._create_from(model, disable_autograd_tracking)


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """(fmodel, params, buffers): ``fmodel(params, buffers, *args)`` runs a copy of
    ``model``."""
    if not isinstance(model, nn.Module):
        raise RuntimeError(f"make_functional_with_buffers(model): Expected model to be a "
                           f"nn.Module; got {type(model).__name__}")
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking)


def combine_state_for_ensemble(models):
    """(fmodel, params, buffers) for vmap-ing over an ensemble: each parameter and buffer of
    the (same-class, same-mode) models stacked on a new leading dim, detached."""
    models = list(models)
    if not models:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same "
                           "class.")
    fmodel, _, _ = make_functional_with_buffers(models[0])
    params = tuple(ember.stack(ts).detach() for ts in
                   zip(*[tuple(m.parameters()) for m in models], strict=True))
    buffers = tuple(ember.stack(ts).detach() for ts in
                    zip(*[tuple(m.buffers()) for m in models], strict=True))
    return fmodel, params, buffers
