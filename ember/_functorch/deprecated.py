"""functorch's transform names, kept for old programs: each warns (FutureWarning) and calls
its ember.func successor; make_functional and friends live in make_functional.py."""
from __future__ import annotations

import warnings

import ember.func as _func

from . import make_functional as _mf


def _warn(api, new=None):
    new = new or f"ember.func.{api}"
    warnings.warn(f"functorch.{api} is deprecated (functorch became torch.func); use {new} "
                  "instead.", FutureWarning, stacklevel=3)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    _warn("vmap", "ember.vmap")
    return _func.vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def grad(func, argnums=0, has_aux=False):
    _warn("grad")
    return _func.grad(func, argnums, has_aux)


def grad_and_value(func, argnums=0, has_aux=False):
    _warn("grad_and_value")
    return _func.grad_and_value(func, argnums, has_aux)


def vjp(func, *primals, has_aux=False):
    _warn("vjp")
    return _func.vjp(func, *primals, has_aux=has_aux)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    _warn("jvp")
    return _func.jvp(func, primals, tangents, strict=strict, has_aux=has_aux)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    _warn("jacrev")
    return _func.jacrev(func, argnums, has_aux=has_aux, chunk_size=chunk_size)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    _warn("jacfwd")
    return _func.jacfwd(func, argnums, has_aux, randomness=randomness)


def hessian(func, argnums=0):
    _warn("hessian")
    return _func.hessian(func, argnums)


def functionalize(func, *, remove="mutations"):
    _warn("functionalize")
    return _func.functionalize(func, remove=remove)


def make_functional(model, disable_autograd_tracking=False):
    _warn("make_functional", "ember.func.functional_call")
    return _mf.make_functional(model, disable_autograd_tracking)


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    _warn("make_functional_with_buffers", "ember.func.functional_call")
    return _mf.make_functional_with_buffers(model, disable_autograd_tracking)


def combine_state_for_ensemble(models):
    _warn("combine_state_for_ensemble", "ember.func.stack_module_state")
    return _mf.combine_state_for_ensemble(models)
