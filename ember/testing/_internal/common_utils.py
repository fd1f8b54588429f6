"""``TestCase``: unittest's TestCase whose ``assertEqual`` compares tensors, and containers
holding them, as ``assert_close`` does (torch's test base class; the rest of torch's internal
test harness is not here)."""
from __future__ import annotations

import unittest
from collections.abc import Mapping

from ..._tensor import Tensor
from .._comparison import assert_close

__all__ = ["TestCase"]


def _holds_tensor(x) -> bool:
    if isinstance(x, Tensor):
        return True
    if isinstance(x, Mapping):
        return any(_holds_tensor(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return any(_holds_tensor(v) for v in x)
    return False


class TestCase(unittest.TestCase):
    def assertEqual(self, x, y, msg=None, *, atol=None, rtol=None, exact_dtype=True, **kwargs):
        """Tensors (also inside dicts, lists and tuples) compare within ``assert_close``'s
        dtype tolerances (or ``atol``/``rtol``); anything else as unittest compares it."""
        if _holds_tensor(x) or _holds_tensor(y):
            assert_close(x, y, rtol=rtol, atol=atol, check_dtype=exact_dtype, msg=msg)
        else:
            super().assertEqual(x, y, msg)
