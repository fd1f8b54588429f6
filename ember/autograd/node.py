"""The graph's node types that the Tensor class itself needs: ``Node`` (what ``grad_fn``
returns), ``AccumulateGrad`` (the node at a leaf) and the hook handle, plus the anomaly flags.

NOTE [Tensor and autograd imports]: this module and grad_mode.py import nothing from ember, so
``_tensor.py`` can import them, and function.py / engine.py import ``Tensor`` from
``_tensor.py`` at load time: the module graph has no cycle. One ordering remains, from the
package: importing ``ember.autograd.<anything>`` first runs ``ember/autograd/__init__.py``,
which imports function.py, which needs ``_tensor.py`` complete; so ``ember/__init__.py``
imports ``ember.autograd`` before ``ember._tensor``.
"""
from __future__ import annotations

import itertools

import numpy as np

try:
    import ml_dtypes as _ml

    _BF16 = np.dtype(_ml.bfloat16)
except ImportError:  # pragma: no cover
    _BF16 = None


def _is_float(dt):
    """Floating or complex NumPy dtype, bfloat16 (kind 'V' in ml_dtypes) included: these carry
    grads."""
    return dt.kind in "fc" or dt == _BF16


class Anomaly:
    enabled = False
    check_nan = True


class Node:
    """A backward function in the graph (what ``tensor.grad_fn`` returns)."""

    next_functions: tuple = ()
    _pre_hooks = None    # {output_nr: [hook(grad) -> grad or None]} from Tensor.register_hook
    _node_prehooks = None  # [hook(grad_outputs) -> grad_outputs or None]
    _post_hooks = None   # [hook(grad_inputs, grad_outputs)]
    _trace = None        # forward stack text, kept when anomaly detection is on
    num_outputs = 1
    # defaults the engine reads on every node (class attributes: no getattr(..., default),
    # whose miss raises and catches an AttributeError inside, on AccumulateGrad nodes)
    _seq = 0             # creation order (set on op nodes): the newest ready node runs first
    _out_meta = None     # [(shape, dtype)] per output (set on op nodes): gradients are checked

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    def apply(self, grads):  # pragma: no cover - overridden
        raise NotImplementedError

    def __call__(self, *grads):
        return self.apply(list(grads))

    def release(self):
        pass

    def __getattr__(self, name):
        # only reached when normal lookup misses: torch's per-op saved values by name
        if name.startswith(("_saved_", "_raw_saved_")):
            from .saved_attrs import lookup
            return lookup(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        from .saved_attrs import saved_names
        return sorted(set(super().__dir__()) | set(saved_names(self)))

    @property
    def metadata(self):
        """A dict for the program's own notes about this node (kept with the node)."""
        meta = self.__dict__.get("_metadata")
        if meta is None:
            meta = self.__dict__["_metadata"] = {}
        return meta

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) runs after this node computed its input gradients; it
        may return replacement grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(fn)
        return RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) runs before this node; it may return replacement gradients."""
        if self._node_prehooks is None:
            self._node_prehooks = []
        self._node_prehooks.append(fn)
        return RemovableHandle(self._node_prehooks, fn)

    def _add_tensor_hook(self, output_nr, fn):
        if self._pre_hooks is None:
            self._pre_hooks = {}
        hooks = self._pre_hooks.setdefault(output_nr, [])
        if hooks and getattr(hooks[-1], "_retains_grad", False):
            # .grad of a tensor that retains it is what its hooks made of the gradient, also
            # those registered after retain_grad() (torch runs the retain step last)
            hooks.insert(len(hooks) - 1, fn)
        else:
            hooks.append(fn)
        return RemovableHandle(hooks, fn)


class RemovableHandle:
    """Returned by register_*hook; ``remove()`` unregisters the hook. (Named as torch's
    handle class, which programs print and compare by name.)"""

    _ids = itertools.count()

    def __init__(self, hooks, fn):
        self.hooks, self.fn, self.id = hooks, fn, next(self._ids)

    def remove(self):
        for i, h in enumerate(self.hooks):
            if h is self.fn:
                del self.hooks[i]
                return

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_RemovableHandle = RemovableHandle  # the name ember's modules import


class AccumulateGrad(Node):
    """The node at a leaf tensor: adds the incoming gradient into ``leaf.grad``."""

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = ()

    def apply(self, grads):  # accumulation itself lives in the engine (it knows create_graph)
        return ()
