"""``ember.torch_version``: ``TorchVersion``, the string type of ``ember.__version__``.

NOTE [The version ember reports]
Programs branch on the PyTorch version (`if torch.__version__ >= "2.0":`,
`version.parse(torch.__version__) < version.parse("2.4")`) to pick the API they call. ember
implements PyTorch 2.13's API, so it reports that release with its own version as the PEP 440
local label: "2.13.0+ember0.1.0". Comparisons look at the numeric release only, as torch's do
(a string, a tuple of ints or anything whose str() is a version), then the local label: as in
PEP 440, "2.13.0+ember0.1.0" is above "2.13.0" and "2.13" but below "2.13.1".
"""
from __future__ import annotations

import operator
import re

__all__ = ["TorchVersion"]

_RELEASE = re.compile(r"\s*v?(\d+(?:\.\d+)*)")


def _parse(v) -> tuple:
    """(release tuple, local label) of a version string or tuple."""
    if isinstance(v, tuple):
        return tuple(int(p) for p in v), ""
    m = _RELEASE.match(str(v))
    if m is None:
        raise ValueError(f"TorchVersion: {v!r} is not a version string such as '2.1'")
    local = str(v).partition("+")[2]
    return tuple(int(p) for p in m.group(1).split(".")), local


def _keys(a, b) -> tuple:
    (ra, la), (rb, lb) = _parse(a), _parse(b)
    n = max(len(ra), len(rb))
    ra, rb = ra + (0,) * (n - len(ra)), rb + (0,) * (n - len(rb))
    return (ra, la != "", la), (rb, lb != "", lb)


class TorchVersion(str):
    """A version string that compares by its numeric release: "2.13.0+x" > "2.9" is True."""

    def _cmp(self, other, op):
        if not isinstance(other, (str, tuple)) and type(other).__name__ != "Version":
            return NotImplemented        # numbers, None: a TypeError, as torch's
        try:
            a, b = _keys(self, other)
        except (TypeError, ValueError):  # not a version: plain string order, as torch's
            return op(str(self), str(other))
        return op(a, b)

    def __lt__(self, other):
        return self._cmp(other, operator.lt)

    def __le__(self, other):
        return self._cmp(other, operator.le)

    def __gt__(self, other):
        return self._cmp(other, operator.gt)

    def __ge__(self, other):
        return self._cmp(other, operator.ge)

    def __eq__(self, other):
        if isinstance(other, str) and str.__eq__(self, other):
            return True
        return self._cmp(other, operator.eq) if isinstance(other, tuple) else False

    __hash__ = str.__hash__
