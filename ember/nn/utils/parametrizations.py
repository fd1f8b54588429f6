"""Parametrizations built on ``nn.utils.parametrize``: orthogonal, weight_norm, spectral_norm.

These are the parametrization-based forms torch recommends over the hook-based
``nn.utils.weight_norm``/``spectral_norm``: the state dict holds
``parametrizations.<name>.original`` (or ``original0``/``original1``) instead of extra
attributes on the module.
"""

from __future__ import annotations

import ember

from ..modules.module import Module
from . import parametrize
from .weight_norm import norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _householder_product(A, tau):
    """prod_i (I - tau_i v_i v_i^H) for the Householder vectors below A's diagonal."""
    n, k = A.shape[-2], tau.shape[-1]
    eye = ember.eye(n, dtype=A.dtype)
    Q = eye.expand(A.shape[:-2] + (n, n))
    for i in range(k):
        v = ember.cat([ember.zeros(A.shape[:-2] + (i,), dtype=A.dtype),
                       ember.ones(A.shape[:-2] + (1,), dtype=A.dtype), A[..., i + 1:, i]], -1)
        H = eye - tau[..., i, None, None] * (v.unsqueeze(-1) * v.unsqueeze(-2))
        Q = Q @ H
    return Q[..., :, :A.shape[-1]]


class _Orthogonal(Module):
    """X (any matrix) to an orthogonal matrix, by the matrix exponential of a skew-symmetric
    matrix, the Cayley map, or Householder products; with ``use_trivialization`` the result is
    relative to a stored ``base``, so gradient steps stay near it."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                X = ember.cat([X, X.new_zeros(X.shape[:-2] + (n, n - k))], dim=-1)
            A = X - X.mT  # skew-symmetric
            if self.orthogonal_map == "matrix_exp":
                Q = ember.matrix_exp(A)
            else:
                Id = ember.eye(n, dtype=A.dtype)
                Q = ember.linalg.solve(Id - A / 2, Id + A / 2)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            # signs so that the diagonal of the R factor is positive
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    @ember.no_grad()
    def right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map != "householder":
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            A, tau = _geqrf(Q)
            # Householder vectors with diag(R)'s signs on the diagonal (see forward)
            A.diagonal(dim1=-2, dim2=-1).copy_(A.diagonal(dim1=-2, dim2=-1).sign())
            return A.mT if transpose else A
        if n == k:
            Id = ember.eye(k, dtype=Q.dtype)
            eps = 10.0 * n * float(ember.finfo(Q.dtype).eps)
            Q = Q.clone() if ember.allclose(Q.mT @ Q, Id, atol=eps) else _make_orthogonal(Q)
        else:
            # complete Q to a square orthogonal matrix with random columns
            N = ember.randn(Q.shape[:-2] + (n, n - k), dtype=Q.dtype)
            Q = _make_orthogonal(ember.cat([Q, N], dim=-1))
        self.base = Q
        neg_Id = ember.zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def _make_orthogonal(A):
    """The Q factor of A = QR with diag(R) >= 0."""
    X, tau = _geqrf(A)
    return _householder_product(X, tau) * X.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _geqrf(Q):
    """Householder vectors (below the diagonal, R on and above it) and their taus for Q."""
    R = Q.clone()
    n, k = R.shape[-2], R.shape[-1]
    taus = []
    vs = []
    for i in range(min(n, k)):
        x = R[..., i:, i]
        alpha = x[..., 0]
        norm = x.norm(dim=-1)
        sign = ember.where(alpha >= 0, ember.ones_like(alpha), -ember.ones_like(alpha))
        beta = -sign * norm
        v = x / (alpha - beta).unsqueeze(-1)
        v = ember.cat([ember.ones_like(alpha).unsqueeze(-1), v[..., 1:]], -1)
        tau = (beta - alpha) / beta
        H = ember.eye(n - i, dtype=Q.dtype) - tau[..., None, None] * (v.unsqueeze(-1)
                                                                      * v.unsqueeze(-2))
        R = ember.cat([R[..., :i, :], H @ R[..., i:, :]], -2)
        taus.append(tau)
        vs.append(v)
    A = R.clone()
    for i, v in enumerate(vs):
        A[..., i + 1:, i] = v[..., 1:]
    return A, ember.stack(taus, -1)


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrain ``module.<name>`` to be orthogonal (or to have orthonormal rows/columns).

    Args:
        orthogonal_map: "matrix_exp", "cayley" or "householder" (default: matrix_exp for square
            matrices, householder otherwise).
        use_trivialization: keep a ``base`` so that the optimised tensor starts at zero.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, ember.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) else "householder"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / norm_except_dim(weight_v, 2, self.dim))

    def right_inverse(self, weight):
        weight_g = norm_except_dim(weight, 2, self.dim)
        return weight_g, weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (original0 = g, original1 = v).

    The module also loads a state_dict saved with the hook-based ``nn.utils.weight_norm``
    (its ``<name>_g``/``<name>_v`` keys), as torch's does.

    Example:
        >>> import ember
        >>> m = ember.nn.utils.parametrizations.weight_norm(ember.nn.Linear(4, 3))
        >>> m.parametrizations.weight.original0.shape
        ember.Size([3, 1])
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def load_old_keys(state_dict, prefix, *_):
        # a checkpoint saved with the hook-based nn.utils.weight_norm holds <name>_g and
        # <name>_v: they are this parametrization's original0 (g) and original1 (v)
        g, v = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g in state_dict and v in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v)

    module._register_load_state_dict_pre_hook(load_old_keys)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            from ..functional import normalize
            u = normalize(ember.randn(h, dtype=weight.dtype), dim=0, eps=self.eps)
            v = normalize(ember.randn(w, dtype=weight.dtype), dim=0, eps=self.eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    @ember.no_grad()
    def _power_method(self, weight_mat, n_power_iterations):
        from ..functional import normalize
        for _ in range(n_power_iterations):
            self._u.copy_(normalize(weight_mat @ self._v, dim=0, eps=self.eps))
            self._v.copy_(normalize(weight_mat.mT @ self._u, dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            from ..functional import normalize
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = ember.vdot(u, weight_mat @ v)
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration
    (run in training mode; ``_u``/``_v`` are buffers)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, ember.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        conv_t = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
        dim = 1 if type(module).__name__ in conv_t else 0
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
