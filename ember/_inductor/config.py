"""Knobs of torch's inductor backend (``torch._inductor.config``), with torch 2.13's defaults.

They are settable and readable so that programs tuning inductor keep running; none changes what
``ember.compile`` does. As in torch, assigning a knob that does not exist raises AttributeError
(a misspelt knob is a bug in the program, not a new setting).
"""
from __future__ import annotations

import sys
import types


class _Knobs(types.ModuleType):
    """A module (or sub-namespace) whose set of attribute names is fixed after creation."""

    def __setattr__(self, name: str, value) -> None:
        if name.startswith("_") or name in self.__dict__:
            super().__setattr__(name, value)
            return
        raise AttributeError(f"{self.__name__}.{name} does not exist")


def _group(name: str, **knobs) -> _Knobs:
    group = _Knobs(f"{__name__}.{name}")
    group.__dict__.update(knobs)
    return group


# the knobs programs set most (tuning, caches, fusion, debugging)
coordinate_descent_tuning = False
max_autotune = False
max_autotune_gemm = False
max_autotune_pointwise = False
epilogue_fusion = True
aggressive_fusion = False
group_fusion = False
max_fusion_size = 64
freezing = False
fx_graph_cache = True
force_disable_caches = False
autotune_remote_cache = None
debug = False
benchmark_kernel = False
shape_padding = True
cpp_wrapper = False
fallback_random = False
conv_1x1_as_mm = False
use_mixed_mm = True
force_fuse_int_mm_with_mul = False
size_asserts = True
implicit_fallbacks = True
joint_graph_constant_folding = True
split_reductions = True
unroll_reductions_threshold = 8
layout_optimization = True
emulate_precision_casts = False
worker_start_method = "subprocess"

triton = _group("triton", cudagraphs=False, cudagraph_trees=True, unique_kernel_names=True,
                autotune_pointwise=True, descriptive_names="original_aten",
                persistent_reductions=True)
cpp = _group("cpp", threads=-1, simdlen=None, enable_kernel_profile=False)

sys.modules[__name__].__class__ = _Knobs
