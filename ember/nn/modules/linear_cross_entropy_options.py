"""``LinearCrossEntropyOptions``: settings of ``linear_cross_entropy``'s chunked path."""
from __future__ import annotations

import dataclasses

import ember

__all__ = ["LinearCrossEntropyOptions"]

_POLICIES = ("auto", "accurate", "balanced", "compact")


def _valid_chunking(method):
    if method is None or method == "auto":
        return True
    name, colon, factor = method.partition(":")
    factor = factor if colon else "1"
    return name == "aspect_ratio" and factor.isdigit() and int(factor) > 0


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """Opt-in settings for the chunked path of ``F.linear_cross_entropy`` (pass
    ``options=None`` there for the reference path).

    Fields (torch's): ``batch_chunk_size`` (rows per chunk, None for the heuristic),
    ``chunking_method`` ('auto', 'aspect_ratio', 'aspect_ratio:N' or None: chunks whose logits
    are about the input's size, N times smaller), ``acc_policy`` and ``acc_dtype`` (accumulation
    precision), ``allow_retain_graph``. Invalid values raise ValueError when constructed.

    Differs from torch: ``acc_policy`` / ``acc_dtype`` are validated but do not change the
    computation (ember accumulates in the input's dtype); ``allow_retain_graph`` is accepted,
    and a second backward through the chunked loss always works.

    Example:
        >>> LinearCrossEntropyOptions(batch_chunk_size=64).batch_chunk_size
        64
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}; expected one of "
                             f"{_POLICIES}.")
        if not _valid_chunking(self.chunking_method):
            raise ValueError(f"invalid chunking_method: {self.chunking_method!r}; expected "
                             "'auto', 'aspect_ratio', 'aspect_ratio:N' (N >= 1) or None.")
        size = self.batch_chunk_size
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or
                                 size <= 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        allowed = (ember.float16, ember.bfloat16, ember.float32, ember.float64)
        if self.acc_dtype is not None and self.acc_dtype not in allowed:
            raise ValueError(f"acc_dtype must be None or one of float16, bfloat16, float32, "
                             f"float64; got {self.acc_dtype!r}.")
