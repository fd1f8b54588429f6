"""``ember.version``: build facts programs print or branch on, named as ``torch.version``'s.

ember is a CPU library without CUDA, ROCm or XPU builds, so those are None, as they are in a CPU
build of torch."""
from __future__ import annotations

from . import __version__ as __version__  # ember's own version, set first in ember/__init__

debug = False
cuda: str | None = None
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
git_version: str | None = None   # ember is not built from a recorded git revision
