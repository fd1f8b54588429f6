"""Out-of-range indices raise torch's exception type for each index op (issue 20)."""
from __future__ import annotations

import pytest

import ember


def _calls(lib):
    x = lib.ones(3, 2)
    i = lib.tensor([5])
    return {
        "index_select": lambda: x.index_select(0, i),
        "index_select_negative": lambda: x.index_select(0, lib.tensor([-1])),
        "index_select_0d": lambda: lib.tensor(1.0).index_select(0, lib.tensor([1])),
        "index_add": lambda: x.index_add(0, i, lib.ones(1, 2)),
        "index_copy": lambda: x.index_copy(0, i, lib.ones(1, 2)),
        "index_fill": lambda: x.index_fill(0, i, 1.0),
        "gather": lambda: x.gather(0, lib.tensor([[5, 0]])),
        "scatter": lambda: x.scatter(0, lib.tensor([[5, 0]]), 1.0),
        "take": lambda: x.take(lib.tensor([9])),
        "getitem": lambda: x[lib.tensor([3])],
        "embedding": lambda: lib.nn.functional.embedding(lib.tensor([3]), x),
    }


def test_index_select_out_of_range_raises_index_error():
    with pytest.raises(IndexError, match=r"index_select\(\): index 5 is out of bounds"):
        ember.ones(3, 2).index_select(0, ember.tensor([5]))


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(_calls(ember)))
def test_out_of_range_exception_type_matches_torch(name):
    torch = pytest.importorskip("torch")
    types = []
    for lib in (ember, torch):
        with pytest.raises((IndexError, RuntimeError)) as info:
            _calls(lib)[name]()
        types.append(info.type)
    assert types[0] is types[1]
