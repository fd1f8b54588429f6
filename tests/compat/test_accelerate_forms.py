"""Gap classes Accelerate (1.15) found under the alias: ``DataLoaderDispatcher`` imports
``torch.utils.data.datapipes.iter.combinatorics.ShufflerIterDataPipe`` (to read a shuffling
pipe's state), so ``datapipes.iter`` must be a package with torch's submodules, which name the
same classes ``iter`` exports."""
from __future__ import annotations

import importlib

import pytest
import torch

import ember

_NAMES = [("combinatorics", "ShufflerIterDataPipe", "Shuffler"),
          ("callable", "MapperIterDataPipe", "Mapper"),
          ("callable", "CollatorIterDataPipe", "Collator"),
          ("combining", "ConcaterIterDataPipe", "Concater"),
          ("combining", "ZipperIterDataPipe", "Zipper"),
          ("grouping", "BatcherIterDataPipe", "Batcher"),
          ("grouping", "UnBatcherIterDataPipe", "UnBatcher"),
          ("selecting", "FilterIterDataPipe", "Filter"),
          ("sharding", "ShardingFilterIterDataPipe", "ShardingFilter"),
          ("utils", "IterableWrapperIterDataPipe", "IterableWrapper")]


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
@pytest.mark.parametrize("sub, name, short", _NAMES)
def test_iter_submodules_name_the_classes_iter_exports(lib, sub, name, short):
    base = f"{lib.__name__}.utils.data.datapipes.iter"
    mod = importlib.import_module(f"{base}.{sub}")
    assert getattr(mod, name) is getattr(importlib.import_module(base), short)


def test_shuffler_state_reads_as_in_torch():
    pipes = [lib.utils.data.datapipes.iter.IterableWrapper(range(8)).shuffle()
             for lib in (torch, ember)]
    for p in pipes:
        p.set_shuffle(False)
    assert [p._enabled for p in pipes] == [False, False]
    assert [list(p) for p in pipes] == [list(range(8))] * 2
