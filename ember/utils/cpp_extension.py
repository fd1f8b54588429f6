"""``ember.utils.cpp_extension``: the names programs reach for to build a C++/CUDA extension
just in time (PEFT's BOFT tries ``load`` for its block-diagonal CUDA kernel and falls back to
plain tensor code when that raises).

An extension built this way is C++ compiled against torch's own C++ library and called with
torch's tensors; ember has neither, so ``load`` and ``load_inline`` raise RuntimeError
(docs/DEVIATIONS.md) - the exception class torch raises when a build fails, which the programs
that can do without the extension catch. No CUDA or ROCm toolkit is used: their homes are None,
as torch's are on a machine without one.
"""
from __future__ import annotations

__all__ = ["CUDA_HOME", "ROCM_HOME", "load", "load_inline"]

CUDA_HOME = None
ROCM_HOME = None


def _refuse(fn: str, name) -> RuntimeError:
    return RuntimeError(f"{fn}: cannot build extension {name!r}: ember does not build or load "
                        "C++/CUDA extensions (they are compiled against torch's C++ library "
                        "and tensors); use the extension's pure-Python path if it has one")


def load(name, sources, *args, **kwargs):
    """Build and import a C++/CUDA extension from source files: raises RuntimeError in ember."""
    raise _refuse("cpp_extension.load", name)


def load_inline(name, cpp_sources, *args, **kwargs):
    """Build and import a C++/CUDA extension from source strings: raises RuntimeError in ember."""
    raise _refuse("cpp_extension.load_inline", name)
