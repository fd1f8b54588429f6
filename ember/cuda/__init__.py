"""``ember.cuda``: the CUDA namespace of a machine without CUDA.

ember computes on the CPU only. These functions answer truthfully (``is_available()`` is False,
``device_count()`` is 0, memory statistics are 0) so that device-agnostic programs written for
PyTorch run unchanged; the seeding functions are no-ops that leave the CPU generator untouched,
as PyTorch's are when CUDA is absent. Functions that need a device raise the same
``AssertionError("Torch not compiled with CUDA enabled")`` PyTorch raises on a CPU-only build
(kept verbatim so that answers online still apply), or ``RuntimeError`` where PyTorch does.
"""
from __future__ import annotations

from . import amp

__all__ = ["is_available", "device_count", "is_initialized", "init", "current_device",
           "set_device", "get_device_name", "get_device_capability", "get_device_properties",
           "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed", "is_bf16_supported",
           "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all",
           "mem_get_info", "current_stream", "device", "amp", "CUDAGraph", "Stream", "Event",
           "is_current_stream_capturing", "StreamContext", "stream", "default_stream", "graph"]

_NO_CUDA = ("Torch not compiled with CUDA enabled: ember has no CUDA backend, so no CUDA device "
            "is available on this machine (ember.cuda.is_available() is False). Guard GPU-only "
            "code with `if ember.cuda.is_available():` or use device='cpu'.")


def _lazy_init():
    raise AssertionError(_NO_CUDA)


class _CudaTensorType(type):
    """Legacy CUDA tensor types (``ember.cuda.FloatTensor``...): nothing is an instance, and
    building one raises the TypeError torch's CPU build raises."""

    def __instancecheck__(cls, obj):
        return False

    def __call__(cls, *args, **kwargs):
        raise TypeError(f"type ember.cuda.{cls.__name__} not available: ember has no CUDA "
                        "backend (Torch not compiled with CUDA enabled); use the CPU type "
                        f"ember.{cls.__name__} or ember.tensor(..., device='cpu').")

    def __repr__(cls):
        return f"<class 'ember.cuda.{cls.__name__}'>"


def _cuda_type(name):
    return _CudaTensorType(name, (), {"__module__": "ember.cuda", "is_cuda": True,
                                      "_cuda_legacy": True})


FloatTensor = _cuda_type("FloatTensor")
DoubleTensor = _cuda_type("DoubleTensor")
HalfTensor = _cuda_type("HalfTensor")
BFloat16Tensor = _cuda_type("BFloat16Tensor")
LongTensor = _cuda_type("LongTensor")
IntTensor = _cuda_type("IntTensor")
ShortTensor = _cuda_type("ShortTensor")
CharTensor = _cuda_type("CharTensor")
ByteTensor = _cuda_type("ByteTensor")
BoolTensor = _cuda_type("BoolTensor")


def is_available():
    """False: ember has no CUDA backend."""
    return False


def device_count():
    """0: no CUDA devices are visible to ember."""
    return 0


# NOTE [Private CUDA state]: reversible networks (Reformer-style blocks, as in lucidrains'
# linformer and reformer) read the module flag `torch.cuda._initialized` before saving CUDA RNG
# states, and fork-safety checks call `_is_in_bad_fork()`; on torch's CPU build both are False,
# and so they are here (never set: ember has no CUDA to initialise).
_initialized = False


def _is_in_bad_fork():
    return False


def is_initialized():
    return _initialized


def init():
    _lazy_init()


def is_bf16_supported(including_emulation=True):
    return False


# ------------------------------------------------------------------ seeding (no-ops, like torch)
def manual_seed(seed):
    """No-op without CUDA (the CPU generator is not touched); seed it with ember.manual_seed."""
    int(seed)  # the same argument check as a real seed call


def manual_seed_all(seed):
    int(seed)


def seed():
    """No-op without CUDA."""


def seed_all():
    """No-op without CUDA."""


def initial_seed():
    _lazy_init()


def get_rng_state(device="cuda"):
    _lazy_init()


def get_rng_state_all():
    return []


def set_rng_state(new_state, device="cuda"):
    """No-op without CUDA, as in PyTorch."""


def set_rng_state_all(new_states):
    """No-op without CUDA."""


# ------------------------------------------------------------------------------- devices
def current_device():
    _lazy_init()


def set_device(device):
    _lazy_init()


def get_device_name(device=None):
    _lazy_init()


def get_device_capability(device=None):
    _lazy_init()


def get_device_properties(device=None):
    _lazy_init()


def synchronize(device=None):
    """Raises like PyTorch on a CPU-only build (there is no device to wait for)."""
    _lazy_init()


def current_stream(device=None):
    _lazy_init()


def mem_get_info(device=None):
    _lazy_init()


class device:
    """``with ember.cuda.device(i):`` context; entering it raises, as on a CPU-only PyTorch."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        raise RuntimeError("ember has no CUDA support: cannot select a CUDA device on this "
                           "machine (ember.cuda.is_available() is False).")

    def __exit__(self, *exc):
        return False


# ------------------------------------------------------------------- memory (all zero on CPU)
def empty_cache():
    """No-op: there is no CUDA caching allocator."""


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


def reset_peak_memory_stats(device=None):
    """No-op: the peak statistics are always 0."""


def reset_max_memory_allocated(device=None):
    """No-op: the peak statistics are always 0."""


# Classes programs name in annotations and isinstance checks (transformers' generation code
# does at import time); making one raises RuntimeError, as on a CPU-only PyTorch build.
def _no_cuda_class(name, what):
    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"ember.cuda.{name}: ember has no CUDA backend, so {what} "
                           "(ember.cuda.is_available() is False).")
    return type(name, (), {"__init__": __init__, "__module__": __name__,
                           "__doc__": f"CUDA {what.split(' ')[0]}: not available in ember."})


CUDAGraph = _no_cuda_class("CUDAGraph", "graphs cannot be captured or replayed")
Stream = _no_cuda_class("Stream", "streams cannot be made")
Event = _no_cuda_class("Event", "events cannot be recorded")


def is_current_stream_capturing():
    """False: no CUDA graph is ever being captured."""
    return False


class StreamContext:
    """``with ember.cuda.StreamContext(stream):``; with ``None`` (what device-agnostic code
    passes when there is no CUDA stream) it does nothing, as in PyTorch."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            _lazy_init()
        return self.stream

    def __exit__(self, *exc):
        return False


def stream(stream):
    """``with ember.cuda.stream(s):``: a StreamContext (a no-op for ``None``)."""
    return StreamContext(stream)


def default_stream(device=None):
    _lazy_init()


class graph:
    """``with ember.cuda.graph(g):`` captures CUDA work into a CUDAGraph: not available in
    ember (RuntimeError)."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        raise RuntimeError("ember.cuda.graph: ember has no CUDA backend, so graphs cannot be "
                           "captured (ember.cuda.is_available() is False).")
