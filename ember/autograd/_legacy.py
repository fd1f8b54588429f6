"""Smaller names of ``torch.autograd``: the multithreading switch, ``SavedTensor``,
``NestedIOFunction`` and the legacy profiler's enums and records.

ember's backward pass runs on the calling thread, so the multithreading flag only records the
setting (torch uses it to decide whether backward may use worker threads per device).
"""
from __future__ import annotations

import enum

from .function import Function
from .grad_mode import _DecoratorContextManager

_multithreading = [True]


def is_multithreading_enabled() -> bool:
    """Whether backward may use several threads (recorded only; see the module docstring)."""
    return _multithreading[0]


class set_multithreading_enabled(_DecoratorContextManager):
    """Set the multithreaded-backward flag from construction until the ``with`` block ends.

    Example:
        >>> with set_multithreading_enabled(False):
        ...     is_multithreading_enabled()
        False
        >>> is_multithreading_enabled()
        True
    """

    def __init__(self, mode: bool) -> None:
        self.prev = _multithreading[0]
        self.mode = bool(mode)
        _multithreading[0] = self.mode

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _multithreading[0] = self.prev

    def _args(self):
        return (self.mode,)


def is_tensor_like(inp) -> bool:
    """True for tensors and for objects whose type defines ``__torch_function__``."""
    from .._tensor import Tensor
    return type(inp) is Tensor or isinstance(inp, Tensor) or hasattr(
        type(inp), "__torch_function__")


class SavedTensor:
    """A tensor saved for backward, packed by a pair of hooks.

    ``register_hooks(pack_hook, unpack_hook)`` packs the tensor now and unpacks it on every
    ``unpack()`` (torch allows registering once; so does this).
    """

    def __init__(self, tensor):
        self._value = tensor
        self._unpack_hook = None

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        if self._unpack_hook is not None:
            raise RuntimeError("SavedTensor.register_hooks: hooks can only be registered once; "
                               "got a second call.")
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("SavedTensor.register_hooks: expected two callables (pack_hook, "
                            f"unpack_hook); got {type(pack_hook).__name__} and "
                            f"{type(unpack_hook).__name__}")
        self._value = pack_hook(self._value)
        self._unpack_hook = unpack_hook

    def unpack(self):
        if self._unpack_hook is None:
            return self._value
        return self._unpack_hook(self._value)

    @property
    def data(self):
        return self.unpack()


class NestedIOFunction(Function):
    """Legacy base class whose subclasses define ``forward_extended``/``backward_extended``.

    Kept for backward compatibility only, as in torch (where calling one fails as well): write a
    :class:`Function` with static ``forward``/``backward`` instead.
    """

    def forward_extended(self, *input):
        raise NotImplementedError("NestedIOFunction.forward_extended: the subclass must define "
                                  "it; better, write an ember.autograd.Function instead.")

    def backward_extended(self, *grad_output):
        raise NotImplementedError("NestedIOFunction.backward_extended: the subclass must define "
                                  "it; better, write an ember.autograd.Function instead.")


class ProfilerState(enum.Enum):
    """What the legacy autograd profiler records (ember records CPU only)."""
    Disabled = 0
    CPU = 1
    CUDA = 2
    NVTX = 3
    ITT = 4
    PRIVATEUSE1 = 5
    KINETO = 6
    KINETO_GPU_FALLBACK = 7
    KINETO_PRIVATEUSE1_FALLBACK = 8
    KINETO_PRIVATEUSE1 = 9


class ProfilerConfig:
    """The settings a legacy profiling session runs with."""

    def __init__(self, state=ProfilerState.CPU, report_input_shapes=False, profile_memory=False,
                 with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None):
        self.state = state
        self.report_input_shapes = report_input_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config


class ProfilerEvent:
    """One record of the legacy profiler: accessors are methods, as in torch."""

    def __init__(self, name, kind="mark", thread_id=0, start_us=0.0, shapes=(),
                 cpu_memory_usage=0, flops=0, sequence_nr=-1, fwd_thread_id=0):
        self._name, self._kind, self._thread_id = name, kind, thread_id
        self._start_us, self._shapes = float(start_us), [list(s) for s in shapes]
        self._cpu_memory_usage, self._flops = cpu_memory_usage, flops
        self._sequence_nr, self._fwd_thread_id = sequence_nr, fwd_thread_id

    def name(self):
        return self._name

    def kind(self):
        return self._kind

    def thread_id(self):
        return self._thread_id

    def fwd_thread_id(self):
        return self._fwd_thread_id

    def start_us(self):
        return self._start_us

    def cpu_elapsed_us(self, other):
        """Microseconds from this event to ``other``."""
        return other._start_us - self._start_us

    def cuda_elapsed_us(self, other):
        raise RuntimeError("ProfilerEvent.cuda_elapsed_us: ember runs on the CPU only; the "
                           "event has no CUDA timing.")

    def shapes(self):
        return self._shapes

    def cpu_memory_usage(self):
        return self._cpu_memory_usage

    def cuda_memory_usage(self):
        return 0

    def flops(self):
        return self._flops

    def sequence_nr(self):
        return self._sequence_nr

    def has_cuda(self):
        return False

    def device(self):
        return -1

    def is_async(self):
        return False

    def is_remote(self):
        return False

    def node_id(self):
        return -1

    def handle(self):
        return 0

    def correlation_id(self):
        return 0

    def scope(self):
        return 0

    def stack(self):
        return []
