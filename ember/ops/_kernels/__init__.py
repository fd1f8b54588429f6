"""numba compute kernels: pure functions on NumPy arrays, imported by ember.ops (never the reverse)."""
