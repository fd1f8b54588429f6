"""``ember.version``: build facts programs print or branch on, named as ``torch.version``'s.

ember is a CPU library without CUDA, ROCm or XPU builds, so those are None, as they are in a CPU
build of torch."""
from __future__ import annotations

from . import _EMBER_RELEASE
from . import __version__ as __version__  # NOTE [The version ember reports]

ember = _EMBER_RELEASE  # ember's own release (pip's version of the package)

debug = False
cuda: str | None = None
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
git_version: str | None = None   # ember is not built from a recorded git revision
