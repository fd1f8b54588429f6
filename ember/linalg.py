"""``ember.linalg``: decompositions, solvers, inverses and norms, like ``torch.linalg``.

The ops live in ``ember/ops/linalg/``; this module is the public namespace.
"""
from .ops.linalg import (
                         LinAlgError,
                         cholesky,
                         cholesky_ex,
                         cross,
                         det,
                         diagonal,
                         eigh,
                         eigvalsh,
                         inv,
                         inv_ex,
                         logdet,
                         lstsq,
                         matmul,
                         matrix_exp,
                         matrix_norm,
                         matrix_power,
                         matrix_rank,
                         multi_dot,
                         norm,
                         pinv,
                         qr,
                         slogdet,
                         solve,
                         solve_ex,
                         solve_triangular,
                         svd,
                         svdvals,
                         vecdot,
                         vector_norm,
)

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "diagonal", "eigh", "eigvalsh",
    "inv", "inv_ex", "logdet", "lstsq", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
    "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
    "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm",
]
