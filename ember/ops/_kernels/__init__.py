"""numba compute kernels: pure functions on NumPy arrays, used by ember.ops (never the reverse)."""
