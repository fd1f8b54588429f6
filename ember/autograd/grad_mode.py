"""Grad mode: whether ops record the graph. Per thread, as in torch.

Each thread starts with grad mode on, inference mode off and forward-mode AD enabled, whatever
the thread that started it had set (torch's rule too). See NOTE [Per-thread autograd state].
"""
from __future__ import annotations

import functools
import inspect
import threading

# NOTE [Per-thread autograd state]
# Grad mode, inference mode, forward-AD enablement (here), the autocast state (ember/amp/_state.py)
# and the saved-tensor hooks stack (ember/autograd/graph.py) live in threading.local objects, as
# torch keeps them thread-local: a `no_grad()` block in an inference thread does not stop another
# thread's training from recording, and backward's switch of grad mode to `create_graph` for the
# duration of the pass only affects the thread running it. The class attributes are the defaults a
# new thread reads until it sets its own value. Like torch, the process keeps global: anomaly
# mode, forward-AD dual levels, the default dtype, the default generator, deterministic-algorithm
# and thread-count settings (docs/DEVIATIONS.md lists none of these: torch shares them too).
# Cost: reading an attribute of a threading.local is a dict lookup more than a plain object's;
# the per-op figures before/after are in benchmarks/RESULTS.md
# (python benchmarks/overhead.py; python benchmarks/overhead.py --grad-mode-read).


class _State(threading.local):
    enabled = True      # record autograd graph
    inference = False   # inference_mode active
    fw_enabled = True   # forward-mode AD tangents propagate


_state = _State()


class _SavedHooks(threading.local):
    """The saved-tensor hooks of this thread (ember.autograd.graph.saved_tensors_hooks)."""

    stack: tuple = ()        # active (pack_hook, unpack_hook) pairs, innermost last
    disabled_message: str | None = None  # set inside disable_saved_tensors_hooks


_saved_hooks = _SavedHooks()


def is_grad_enabled() -> bool:
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


class _DecoratorContextManager:
    """Base for the grad-mode managers: usable as `with` and as a decorator."""

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)

        return wrapper

    def _wrap_generator(self, fn):
        """A generator function whose body runs in the mode at every step (torch's rule): the
        mode is entered around each resumption, never held while the caller runs."""

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            gen = fn(*args, **kwargs)
            sent, thrown = None, None
            while True:
                try:
                    with self.__class__(*self._args()):
                        value = gen.throw(thrown) if thrown is not None else gen.send(sent)
                except StopIteration as stop:
                    return stop.value
                sent, thrown = None, None
                try:
                    sent = yield value
                except GeneratorExit:
                    with self.__class__(*self._args()):
                        gen.close()
                    raise
                except BaseException as exc:  # thrown into us: pass it on to fn's body
                    thrown = exc

        return wrapper

    def _args(self):
        return ()

    def clone(self):
        return self.__class__(*self._args())


class no_grad(_DecoratorContextManager):
    """Disable graph recording inside the block (tensors computed here have no grad_fn)."""

    def __init__(self, orig_func=None):
        self._fn = orig_func  # allows bare @no_grad without parentheses in some code
        self.prev = True

    def __new__(cls, orig_func=None):
        if callable(orig_func) and not isinstance(orig_func, _DecoratorContextManager):
            return cls()(orig_func)
        return super().__new__(cls)

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = False

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False


class enable_grad(_DecoratorContextManager):
    """Enable graph recording inside the block (for use inside no_grad)."""

    def __new__(cls, orig_func=None):
        if callable(orig_func):
            return cls()(orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func=None):
        self.prev = True

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = True

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode to `mode`; takes effect immediately and is undone on exit of a `with`."""

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self.prev = _state.enabled
        _state.enabled = self.mode

    def _args(self):
        return (self.mode,)

    def __enter__(self):
        _state.enabled = self.mode

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False


class inference_mode(_DecoratorContextManager):
    """Like no_grad (ember records no graph either way); ``mode=False`` turns grad mode on
    and inference mode off inside the block, as torch's does."""

    def __new__(cls, mode=True):
        if callable(mode):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)
        self.prev = (True, False)

    def _args(self):
        return (self.mode,)

    def __enter__(self):
        self.prev = (_state.enabled, _state.inference)
        # inference_mode(False) is a normal grad-recording block even inside inference_mode
        _state.enabled, _state.inference = not self.mode, self.mode

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self.prev
        return False
