"""Headless stand-in: the corpus runs as scripts, so displays are no-ops."""
from . import display  # noqa: F401


def get_ipython():
    return None

version_info = (8, 0, 0)
__version__ = "8.0.0"
