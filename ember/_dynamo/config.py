"""Settings of ember.compile, named as torch._dynamo.config's."""
from __future__ import annotations

cache_size_limit = 8        # specialisations kept per compiled function before LRU eviction
recompile_limit = cache_size_limit
error_on_recompile = False  # raise RecompileError instead of recompiling
suppress_errors = False     # a failing backend falls back to eager instead of raising
disable = False             # run every compiled function eagerly
eager_on_recompile = False  # a new signature of an already compiled function runs eagerly
verbose = False
