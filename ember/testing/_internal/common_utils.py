"""``TestCase``: unittest's TestCase whose ``assertEqual`` compares tensors, and containers
holding them, as ``assert_close`` does (torch's test base class; the rest of torch's internal
test harness is not here)."""
from __future__ import annotations

import unittest
from collections.abc import Mapping

from ..._tensor import Tensor
from .._comparison import assert_close

__all__ = ["TestCase"]


class TestCase(unittest.TestCase):
    def assertEqual(self, x, y, msg=None, *, atol=None, rtol=None, exact_dtype=True, **kwargs):
        """Dicts and lists compare item by item (a list equals a tuple of the same items);
        tensors within ``assert_close``'s dtype tolerances (or ``atol``/``rtol``), their dtypes
        equal unless ``exact_dtype=False``; a number against a tensor or a number by value;
        anything else (None, strings) as unittest compares it."""
        if isinstance(x, Mapping) and isinstance(y, Mapping):
            super().assertEqual(set(x), set(y), msg or "the keys of the mappings differ")
            for key in x:
                self.assertEqual(x[key], y[key], msg, atol=atol, rtol=rtol,
                                 exact_dtype=exact_dtype)
        elif isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
            super().assertEqual(len(x), len(y), msg or "the sequences' lengths differ")
            for a, b in zip(x, y):
                self.assertEqual(a, b, msg, atol=atol, rtol=rtol, exact_dtype=exact_dtype)
        elif isinstance(x, Tensor) and isinstance(y, Tensor):
            assert_close(x, y, rtol=rtol, atol=atol, check_dtype=exact_dtype, msg=msg)
        elif isinstance(x, (Tensor, *_NUMBERS)) and isinstance(y, (Tensor, *_NUMBERS)):
            assert_close(x, y, rtol=rtol, atol=atol, check_dtype=False, msg=msg)
        else:
            super().assertEqual(x, y, msg)


_NUMBERS = (bool, int, float, complex)
