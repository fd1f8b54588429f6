"""Norms and distances of ``ember.nn.functional``: normalize, cosine_similarity,
pairwise_distance, cdist, pdist."""
from __future__ import annotations

import numpy as np

from ..._tensor import _make
from ...ops.nn.distance import Cdist, LinalgVectorNorm
from ._utils import _check_tensor

__all__ = [
    "normalize", "cosine_similarity", "pairwise_distance", "cdist", "pdist",
]



def _norm(x, p, dim, keepdim=False):
    if x.is_complex():   # the norm of complex values is the (real) norm of their moduli
        x = x.abs()
    dims = tuple(sorted(d % x.ndim for d in ((dim,) if isinstance(dim, int) else dim))) \
        if x.ndim else ()
    return LinalgVectorNorm.apply(x, float(p), dims, keepdim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps)."""
    _check_tensor("normalize", input)
    if not input.is_floating_point() and not input.is_complex():
        raise RuntimeError(f"normalize: expected a floating point or complex input, got "
                           f"{input.dtype}")
    n = max(input.ndim, 1)
    for d in (dim,) if isinstance(dim, int) else dim:
        if not -n <= d < n:
            raise IndexError(f"normalize: Dimension out of range (expected to be in range of "
                             f"[{-n}, {n - 1}], but got {d})")
    denom = _norm(input, p, dim, keepdim=True).clamp(min=eps)
    result = input / denom
    if out is not None:
        return out.copy_(result)
    return result


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """(x1 / max(||x1||, eps)) . (x2 / max(||x2||, eps)) along ``dim`` (broadcasting).

    Like torch, the eps clamp limits the value but not the gradient of the norms.
    """
    _check_tensor("cosine_similarity", x1, "x1")
    _check_tensor("cosine_similarity", x2, "x2")
    try:
        shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    except ValueError:
        raise RuntimeError(f"cosine_similarity: x1 of shape {tuple(x1.shape)} and x2 of shape "
                           f"{tuple(x2.shape)} do not broadcast") from None
    if tuple(x1.shape) != shape:
        x1 = x1.expand(shape)
    if tuple(x2.shape) != shape:
        x2 = x2.expand(shape)

    def clamped_norm(x):
        n = _norm(x, 2, dim, keepdim=True)
        return n + (n.clamp(min=eps) - n).detach()

    return ((x1 / clamped_norm(x1)) * (x2 / clamped_norm(x2))).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim."""
    _check_tensor("pairwise_distance", x1, "x1")
    _check_tensor("pairwise_distance", x2, "x2")
    diff = x1 - x2 + eps
    if diff.ndim == 0:
        diff = diff.reshape(1)
    return _norm(diff, p, -1, keepdim)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distance between each row of x1 (*, P, M) and each row of x2 (*, R, M)."""
    _check_tensor("cdist", x1, "x1")
    _check_tensor("cdist", x2, "x2")
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 "
                           f"got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist: X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    # the matmul form |a|^2 + |b|^2 - 2ab cancels (identical far-out points are not at distance
    # 0) and makes NaN of infinities: torch takes it only when asked, or by default when either
    # side has more than 25 rows, and so does ember
    big = x1.shape[-2] > 25 or x2.shape[-2] > 25
    if p == 2 and (compute_mode == "use_mm_for_euclid_dist"
                   or (compute_mode == "use_mm_for_euclid_dist_if_necessary" and big)):
        return Cdist.apply(x1, x2)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _norm(diff, p, -1)


def pdist(input, p=2):
    """Distances between all pairs of rows of a 2-D input (upper triangle, row-major)."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    return _norm(input[_make(i)] - input[_make(j)], p, -1)
