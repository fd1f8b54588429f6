"""``grouped_mm``: the matrix products of a Mixture-of-Experts layer, one per group of rows.

Each expert has its own weight matrix and receives a different number of tokens. The tokens are
laid out one expert after another in one 2-D operand, and ``offs`` (int32, cumulative) says where
each expert's rows end. Four layouts, as torch's:

==========  ==============  =====  ===================================================
mat_a       mat_b           offs   result
==========  ==============  =====  ===================================================
(T, K)      (G, K, N)       (G,)   (T, N): rows offs[g-1]:offs[g] of a times b[g]
(G, M, K)   (G, K, N)       None   (G, M, N): a batched product
(M, T)      (T, N)          (G,)   (G, M, N): columns/rows offs[g-1]:offs[g] (the weight
                                   gradient of the first layout)
(G, M, K)   (K, T)          (G,)   (M, T): a[g] times columns offs[g-1]:offs[g] of b
==========  ==============  =====  ===================================================

NOTE [Grouped products as ember ops]: the function is a composition of slices, ``matmul`` and
``cat``, so its gradients (and their gradients) come from those ops and ``ember.compile`` sees
ordinary ops. A loop of G products costs G calls; an MoE layer has tens of experts, and each
product is a whole GEMM, so the calls are not what a step spends its time on. Rows (or columns)
past ``offs[-1]`` belong to no group: their results and gradients are zeros (torch leaves them
unwritten, so they hold whatever the memory held). Offsets that decrease or run past the
operand raise here; torch does not check them.
"""
from __future__ import annotations

import ember

from ._utils import _check_tensor

__all__ = ["grouped_mm"]

_FLOATS = ("float32", "bfloat16", "float16")


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Grouped matrix products for Mixture-of-Experts layers (see the module docstring).

    Example:
        >>> import ember
        >>> a = ember.ones(5, 2)                      # 5 tokens: 2 for expert 0, 3 for expert 1
        >>> b = ember.stack([ember.eye(2), 2 * ember.eye(2)])
        >>> offs = ember.tensor([2, 5], dtype=ember.int32)
        >>> ember.nn.functional.grouped_mm(a, b, offs=offs)[:, 0]
        tensor([1., 1., 2., 2., 2.])
    """
    ends = _check(mat_a, mat_b, offs, bias, out_dtype)
    return _grouped_products(mat_a, mat_b, ends)


def _grouped_mm(input, mat2, offs=None, bias=None, out_dtype=None):
    """``torch._grouped_mm``, the private form some MoE code calls: grouped_mm with positional
    offs, bias and out_dtype."""
    return grouped_mm(input, mat2, offs=offs, bias=bias, out_dtype=out_dtype)


def _check(a, b, offs, bias, out_dtype):
    """torch's conditions, as RuntimeErrors naming the op; returns offs as a list of ints."""
    _check_tensor("grouped_mm", a, "mat_a")
    _check_tensor("grouped_mm", b, "mat_b")
    for name, x in (("mat_a", a), ("mat_b", b)):
        if x.ndim not in (2, 3):
            raise RuntimeError(f"grouped_mm: {name} has to be 2-D or 3-D, got shape "
                               f"{tuple(x.shape)}")
        if str(x.dtype).split(".")[-1] not in _FLOATS:
            raise RuntimeError(f"grouped_mm: expected {name} to be float32, bfloat16 or float16, "
                               f"got {x.dtype}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"grouped_mm: mat_a and mat_b must have the same dtype, got "
                           f"{a.dtype} and {b.dtype}")
    if bias is not None:
        raise RuntimeError("grouped_mm: bias is not supported (torch 2.13 does not support it "
                           "either); add it to the result")
    if out_dtype is not None and out_dtype != a.dtype:
        raise RuntimeError(f"grouped_mm: out_dtype must match mat_a's dtype {a.dtype}, got "
                           f"{out_dtype}")
    k_a = a.shape[-1]
    k_b = b.shape[-2] if b.ndim == 3 else b.shape[0]
    if a.ndim == 2 and b.ndim == 2:
        k_a, k_b = a.shape[1], b.shape[0]  # the jagged dimension: both must have it whole
    if k_a != k_b:
        raise RuntimeError(f"grouped_mm: the contraction dimensions of mat_a {tuple(a.shape)} and "
                           f"mat_b {tuple(b.shape)} must match")
    if a.ndim == 3 and b.ndim == 3:
        if offs is not None:
            raise RuntimeError("grouped_mm: offs must be None when both mat_a and mat_b are 3-D")
        if a.shape[0] != b.shape[0]:
            raise RuntimeError(f"grouped_mm: the group counts of mat_a {tuple(a.shape)} and "
                               f"mat_b {tuple(b.shape)} must match")
        return None
    if offs is None:
        raise RuntimeError("grouped_mm: offs is required when mat_a or mat_b is 2-D")
    _check_tensor("grouped_mm", offs, "offs")
    if offs.dtype != ember.int32:
        raise RuntimeError(f"grouped_mm: offs must be int32, got {offs.dtype}")
    if offs.ndim != 1:
        raise RuntimeError(f"grouped_mm: offs must be 1-D, got shape {tuple(offs.shape)}")
    groups = b.shape[0] if b.ndim == 3 else a.shape[0] if a.ndim == 3 else len(offs)
    if len(offs) != groups:
        raise RuntimeError(f"grouped_mm: offs has {len(offs)} groups but the 3-D operand "
                           f"has {groups}")
    ends = [int(e) for e in offs.tolist()]
    # the jagged dimension: a's rows (2-D x 3-D), b's columns (3-D x 2-D), or the shared K
    length = a.shape[0] if b.ndim == 3 else b.shape[1] if a.ndim == 3 else a.shape[1]
    previous = 0
    for end in ends:
        if end < previous or end > length:
            raise RuntimeError(f"grouped_mm: offs must be non-decreasing and at most {length} "
                               f"(the jagged dimension's length), got {ends}")
        previous = end
    return ends


def _grouped_products(a, b, ends):
    """The products (no checks: the tests run it in float64 for gradcheck)."""
    if ends is None:
        return ember.matmul(a, b)
    starts = [0] + ends[:-1]
    spans = list(zip(starts, ends))
    if a.ndim == 2 and b.ndim == 2:
        if not spans:
            return a.new_zeros((0, a.shape[0], b.shape[1]))
        return ember.stack([a[:, s:e] @ b[s:e] for s, e in spans])
    if b.ndim == 3:  # rows of a by group
        parts = [a[s:e] @ b[g] for g, (s, e) in enumerate(spans)]
        rest = a.shape[0] - (ends[-1] if ends else 0)
        if rest:
            parts.append(a.new_zeros((rest, b.shape[2])))
        return ember.cat(parts, 0) if parts else a.new_zeros((0, b.shape[2]))
    parts = [a[g] @ b[:, s:e] for g, (s, e) in enumerate(spans)]  # columns of b by group
    rest = b.shape[1] - (ends[-1] if ends else 0)
    if rest:
        parts.append(a.new_zeros((a.shape[1], rest)))
    return ember.cat(parts, 1) if parts else a.new_zeros((a.shape[1], 0))
