"""Headless stand-in: the corpus runs as scripts, so displays are no-ops."""
from . import display  # noqa: F401
