"""ember.autograd.profiler: the legacy spelling of ember.profiler."""
from ..profiler import profile, record_function  # noqa: F401
