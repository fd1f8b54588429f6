"""Gap classes torchmetrics (1.9) found under the alias: ``Metric.clone()`` is
``copy.deepcopy(self)``, and a Metric keeps its ``update``/``compute`` wrapped as closures over
the bound methods in its instance ``__dict__``; its ``__getstate__`` drops them and its
``__setstate__`` wraps the copy's own methods again. ``copy.deepcopy`` of a Module must honour a
subclass's ``__getstate__``/``__setstate__`` as the default protocol does (before, ember's
``Module.__deepcopy__`` copied ``__dict__`` directly, so a cloned metric updated the original)."""
from __future__ import annotations

import copy
import pickle

import pytest
import torch

import ember
from ember.nn.utils import parametrize


def _counter_cls(lib):
    class Counter(lib.nn.Module):
        """torchmetrics' pattern: a wrapped bound method in __dict__, rebuilt on unpickling."""
        def __init__(self):
            super().__init__()
            self.register_buffer("total", lib.zeros(()))
            self.update = self._wrap(self.update)

        def update(self, x):
            self.total += x.sum()

        def _wrap(self, fn):
            def wrapped(*args):
                return fn(*args)
            return wrapped

        def __getstate__(self):
            return {k: v for k, v in self.__dict__.items() if k != "update"}

        def __setstate__(self, state):
            self.__dict__.update(state)
            self.update = self._wrap(self.update)

    return Counter


def test_deepcopy_honours_getstate_and_setstate():
    results = []
    for lib in (torch, ember):
        orig = _counter_cls(lib)()
        orig.update(lib.ones(3))
        clone = copy.deepcopy(orig)
        clone.update(lib.full((2,), 5.0))
        results.append((float(orig.total), float(clone.total)))
    assert results[1] == results[0] == (3.0, 13.0)


def test_deepcopy_of_a_module_copies_its_tensors_and_keeps_sharing():
    lin = ember.nn.Linear(2, 2)
    seq = ember.nn.Sequential(lin, lin)     # one module twice: shared in the copy too
    c = copy.deepcopy(seq)
    assert c[0] is c[1] and c[0] is not lin
    assert type(c[0].weight) is ember.nn.Parameter and c[0].weight is not lin.weight
    assert ember.equal(c[0].weight, lin.weight)


def test_parametrized_module_deepcopies_but_does_not_pickle():
    class Sym(ember.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

    m = ember.nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", Sym())
    c = copy.deepcopy(m)
    assert type(c).__name__ == "ParametrizedLinear" and ember.equal(c.weight, m.weight)
    assert c.parametrizations.weight.original is not m.parametrizations.weight.original
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)
