"""parameters_to_vector / vector_to_parameters."""
from __future__ import annotations

import ember

from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """All parameters flattened and concatenated into one 1-D tensor (differentiable)."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    if not params:
        raise ValueError("parameters_to_vector: expected a non-empty list of parameters; got "
                         "none (a module without parameters?)")
    return ember.cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec, parameters):
    """Make each parameter's data the matching slice of ``vec`` (they then share its memory).

    As torch, a ``vec`` longer than the parameters' total size is accepted and its trailing
    elements are left unused; a shorter one is refused."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() < total:
        raise RuntimeError(f"vector_to_parameters: expected a 1-D vector of at least {total} "
                           f"elements (the parameters' total size), got shape "
                           f"{tuple(vec.shape)}")
    pointer = 0
    for p in params:
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n
