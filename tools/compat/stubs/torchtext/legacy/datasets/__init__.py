from . import translation  # noqa: F401
from .translation import Multi30k  # noqa: F401
