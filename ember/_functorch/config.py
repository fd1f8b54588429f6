"""Knobs of torch's functorch/AOTAutograd (``torch._functorch.config``), with torch 2.13's
defaults: settable and readable, no effect on ``ember.compile``; assigning one that does not
exist raises AttributeError, as in torch (see ember._inductor.config)."""
from __future__ import annotations

import sys

from .._inductor.config import _Knobs

# the knobs programs set (caches, recomputation and memory budget, RNG functionalization)
enable_autograd_cache = True
enable_remote_autograd_cache = None
force_autograd_cache = False
strict_autograd_cache = False
bundled_autograd_cache = False
functionalize_rng_ops = False
graphsafe_rng_functionalization = True
donated_buffer = True
activation_memory_budget = 1.0
activation_memory_budget_solver = "dp"
activation_memory_budget_runtime_estimator = "flops"
aggressive_recomputation = False
recompute_views = False
ban_recompute_used_far_apart = True
ban_recompute_long_fusible_chains = True
ban_recompute_materialized_backward = True
ban_recompute_not_in_allowlist = True
ban_recompute_reductions = True
treat_parameters_as_free_to_save = True
max_dist_from_bw = 1000
cse = True
static_weight_shapes = True
view_replay_for_aliased_outputs = True
debug_assert = False
debug_partitioner = False
fake_tensor_allow_meta = True
fake_tensor_allow_unsafe_data_ptr_access = True
fake_tensor_crossref = False
fake_tensor_propagate_real_tensors = False
unlift_effect_tokens = False
enable_activation_offloading = False
torch_compile_graph_format = "svg"

sys.modules[__name__].__class__ = _Knobs
