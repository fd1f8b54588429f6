"""The pieces of ``torch._tensor_str`` programs reach for: the live print options
(``PRINT_OPTS.threshold``...), ``get_printoptions()`` and the ``printoptions(...)`` context
manager. The options themselves are ember/_format.py's module globals."""
from __future__ import annotations

import contextlib

from . import _format
from ._info import set_printoptions

__all__ = ["PRINT_OPTS", "get_printoptions", "printoptions", "set_printoptions"]

_GLOBALS = {"precision": "PRECISION", "threshold": "THRESHOLD", "edgeitems": "EDGEITEMS",
            "linewidth": "LINEWIDTH", "sci_mode": "SCI_MODE"}


class _PrintOptions:
    """A view of the current options under torch's attribute names; writing one changes how
    tensors print from then on, as writing torch's ``PRINT_OPTS`` does."""

    def __getattr__(self, name):
        if name not in _GLOBALS:
            raise AttributeError(f"PRINT_OPTS has no option {name!r}; the options are "
                                 f"{list(_GLOBALS)}")
        return getattr(_format, _GLOBALS[name])

    def __setattr__(self, name, value):
        if name not in _GLOBALS:
            raise AttributeError(f"PRINT_OPTS has no option {name!r}; the options are "
                                 f"{list(_GLOBALS)}")
        setattr(_format, _GLOBALS[name], value)

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in get_printoptions().items())
        return f"_PrintOptions({fields})"


PRINT_OPTS = _PrintOptions()


def get_printoptions() -> dict:
    """The current print options as a dict (the keywords set_printoptions takes)."""
    return {name: getattr(_format, var) for name, var in _GLOBALS.items()}


@contextlib.contextmanager
def printoptions(**kwargs):
    """Print with ``set_printoptions(**kwargs)`` inside the block, the old options after.

    Example:
        >>> import ember
        >>> with ember._tensor_str.printoptions(precision=1):
        ...     print(ember.tensor([1.25]))
        tensor([1.2])
    """
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)
