"""Helpers shared by the distributions: parameter broadcasting, probs <-> logits, lazy props."""

from __future__ import annotations

import numbers
from functools import update_wrapper

import numpy as np

import ember
from ember._tensor import Tensor

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def _finfo(dtype) -> np.finfo:
    return np.finfo(np.dtype(ember.empty(0, dtype=dtype).numpy().dtype))


def broadcast_all(*values):
    """Broadcast tensors and Python numbers to one shape; numbers take the default float dtype
    (or the dtype of the first tensor given)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("broadcast_all: input arguments must all be instances of numbers.Number "
                         f"or ember.Tensor; got {[type(v).__name__ for v in values]}")
    if all(isinstance(v, numbers.Number) for v in values):
        return tuple(ember.tensor(float(v)) for v in values)
    dtype = next(v.dtype for v in values if isinstance(v, Tensor))
    if not dtype.is_floating_point:
        dtype = ember.get_default_dtype()
    tensors = [v if isinstance(v, Tensor) else ember.tensor(float(v), dtype=dtype) for v in values]
    return tuple(ember.broadcast_tensors(*tensors))


def _standard_normal(shape, dtype):
    return ember.randn(shape, dtype=dtype)


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the rightmost ``dim`` dimensions."""
    if dim == 0:
        return value
    return value.reshape(value.shape[: value.dim() - dim] + (-1,)).sum(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamp probabilities into the open interval (0, 1) by the dtype's machine epsilon."""
    eps = float(_finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Logits to probabilities: a sigmoid for binary events, else a softmax over the last dim."""
    if is_binary:
        return ember.sigmoid(logits)
    return ember.softmax(logits, dim=-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities to logits (log-odds when binary, log-probabilities otherwise)."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ember.log(ps_clamped) - ember.log1p(-ps_clamped)
    return ember.log(ps_clamped)


class lazy_property:
    """A property computed on first access and then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property looks like on the class, so it shows up as a property."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (from diagonal ``diag``) of the last two dims, row by row."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"tril_matrix_to_vec: diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = np.tril_indices(n, k=diag)
    return mat[..., ember.tensor(rows), ember.tensor(cols)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of tril_matrix_to_vec: a vector of triangle entries to a square matrix."""
    m = vec.shape[-1]
    n = round((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5)
              / 2)
    eps = float(_finfo(vec.dtype).eps)
    if not round(n) - eps <= n <= round(n) + eps:
        raise ValueError(f"vec_to_tril_matrix: the size of last dimension is {m} which cannot be "
                         f"expressed as the lower triangular part of a square D x D matrix.")
    rows, cols = np.tril_indices(n, k=diag)
    flat = ember.zeros(vec.shape[:-1] + (n * n,), dtype=vec.dtype)
    flat = flat.index_add(-1, ember.tensor(rows * n + cols), vec)
    return flat.reshape(vec.shape[:-1] + (n, n))
