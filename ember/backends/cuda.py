"""``ember.backends.cuda``: CUDA backend flags of a machine without CUDA.

``matmul.allow_tf32`` is tied to ``ember.set_float32_matmul_precision`` (True means "high"), the
other flags are plain settable values with PyTorch's defaults; none changes CPU results.
"""
from __future__ import annotations

import contextlib

__all__ = ["is_built", "matmul", "flash_sdp_enabled", "enable_flash_sdp",
           "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled",
           "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp", "sdp_kernel",
           "preferred_linalg_library", "preferred_blas_library"]


def is_built():
    """False: ember was not built with CUDA."""
    return False


class cuBLASModule:
    """``ember.backends.cuda.matmul``: allow_tf32 and the reduced-precision reduction flags."""

    _FLAGS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
              "allow_fp16_accumulation")

    def __init__(self):
        object.__setattr__(self, "_values", {
            "allow_fp16_reduced_precision_reduction": True,
            "allow_bf16_reduced_precision_reduction": True,
            "allow_fp16_accumulation": False})

    def __getattr__(self, name):
        if name == "allow_tf32":
            from .._compile import get_float32_matmul_precision
            return get_float32_matmul_precision() != "highest"
        if name in self._FLAGS:
            return self._values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            from .._compile import set_float32_matmul_precision
            set_float32_matmul_precision("high" if value else "highest")
            return
        if name in self._FLAGS:
            self._values[name] = bool(value)
            return
        raise AttributeError(f"Unknown attribute {name}")


matmul = cuBLASModule()

# scaled_dot_product_attention kernel choices: settable, read back, no effect on CPU results
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_flash_sdp(enabled):
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_math_sdp(enabled):
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled):
    _sdp["cudnn"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Deprecated PyTorch context manager choosing attention kernels; restores on exit."""
    old = dict(_sdp)
    _sdp.update(flash=bool(enable_flash), math=bool(enable_math),
                mem_efficient=bool(enable_mem_efficient), cudnn=bool(enable_cudnn))
    try:
        yield
    finally:
        _sdp.update(old)


def preferred_linalg_library(backend=None):
    """No-op selector (ember uses NumPy/SciPy's LAPACK); returns "default"."""
    return "default"


def preferred_blas_library(backend=None):
    """No-op selector (ember uses NumPy's BLAS); returns "default"."""
    return "default"
