"""``ember.export.exported_program``: torch's module path of the ``ExportedProgram`` class."""
from __future__ import annotations

from ember.export import ExportedProgram

__all__ = ["ExportedProgram"]
