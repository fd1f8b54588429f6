"""Parameters in the arena (NOTE [Parameters on huge pages] in ember/_arena.py): which arrays
move, that every alias stays one, that the copies are aligned separate arrays (storage,
serialization, deepcopy, shared memory) and that a chunk is unmapped when its arrays die."""
from __future__ import annotations

import copy
import gc
import io
import pickle
import sys
import weakref

import numpy as np
import pytest

import ember
from ember import _arena, nn

pytestmark = pytest.mark.skipif(not _arena.ON[0], reason="the arena is Linux-only (and "
                                "EMBER_PARAMETER_ARENA=0 turns it off)")


def _in_arena(t):
    """Whether tensor t's array was cut from an arena chunk (its root's base is the mmap's
    buffer, not an ndarray)."""
    root = t._data
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root.base is not None


def test_a_big_fresh_parameter_moves_aligned_with_its_values():
    ember.manual_seed(0)
    layer = nn.Linear(256, 512)  # a 512 KiB weight; the 2 KiB bias stays
    assert _in_arena(layer.weight) and not _in_arena(layer.bias)
    assert layer.weight._data.ctypes.data % 64 == 0
    assert layer.weight.storage_offset() == 0 and layer.weight.is_contiguous()
    assert layer.weight.untyped_storage().nbytes() == 512 * 256 * 4
    # kaiming_uniform_'s bound: the values were made before the move and kept
    w = layer.weight.detach().numpy()
    assert 0 < np.abs(w).max() <= 1 / np.sqrt(256) and w.std() > 0.01
    # it trains: the optimizer updates the arena array in place
    opt = ember.optim.SGD(layer.parameters(), lr=0.1)
    layer(ember.randn(4, 256)).sum().backward()
    before = w.copy()
    opt.step()
    assert not np.array_equal(layer.weight.detach().numpy(), before) and _in_arena(layer.weight)


def test_the_wrapped_tensor_keeps_sharing_memory():
    t = ember.randn(256, 256)
    p = nn.Parameter(t)
    assert _in_arena(p) and t._data is p._data
    t.add_(1)  # in place on either is seen by both, and the version counter is one
    np.testing.assert_array_equal(t.numpy(), p.detach().numpy())
    assert p._version == t._version == 1


@pytest.mark.parametrize("case", ["numpy alias", "view", "small", "off"])
def test_what_stays_where_it_is(case, monkeypatch):
    base = ember.randn(256, 256)
    if case == "numpy alias":
        arr = np.ones((256, 256), np.float32)
        data = ember.from_numpy(arr)
    elif case == "view":
        data = base[:128]
    elif case == "small":
        data = ember.randn(16, 16)
    else:
        monkeypatch.setattr(_arena, "ON", [False])
        data = ember.randn(256, 256)
    p = nn.Parameter(data)
    assert not _in_arena(p)
    assert np.shares_memory(p._data, data._data)
    if case == "numpy alias":
        arr[0, 0] = 7  # the NumPy array and the parameter are still one memory
        assert p[0, 0].item() == 7
    if case == "view":
        base[0, 0] = 5
        assert p[0, 0].item() == 5


def test_serialization_deepcopy_pickle_and_shared_memory():
    torch = pytest.importorskip("torch")
    ember.manual_seed(1)
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 512))
    assert all(_in_arena(m.weight) for m in (model[0], model[2]))
    buf = io.BytesIO()
    ember.save(model.state_dict(), buf)
    # one storage per parameter, of its own size: the chunk is not written
    assert len(buf.getvalue()) < 1.1 * sum(p.numel() * 4 for p in model.parameters()) + 20000
    buf.seek(0)
    loaded = torch.load(buf)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(loaded[k].numpy(), v.numpy())
    twin = copy.deepcopy(model)
    assert _in_arena(twin[0].weight) and not np.shares_memory(twin[0].weight._data,
                                                               model[0].weight._data)
    again = pickle.loads(pickle.dumps(model))
    x = ember.randn(3, 256)
    for other in (twin, again):
        np.testing.assert_array_equal(other(x).detach().numpy(), model(x).detach().numpy())
    model.share_memory()
    np.testing.assert_array_equal(model(x).detach().numpy(), twin(x).detach().numpy())


def test_a_chunk_is_unmapped_when_its_arrays_die(monkeypatch):
    monkeypatch.setattr(_arena, "_chunk", [None, 0, 0])  # a chunk of this test's own
    layer = nn.Linear(512, 512)
    chunk = weakref.ref(_arena._chunk[0])
    _arena._chunk[:] = [None, 0, 0]  # the arena lets go of it
    gc.collect()
    assert chunk() is not None  # the weight still holds it
    del layer
    gc.collect()
    assert chunk() is None


def test_refcount_rule_is_exact_here():
    # the move relies on CPython's exact reference counts (as the reuse pool does)
    assert sys.implementation.name != "cpython" or ember._backend._COUNTS_EXACT == (
        sys.version_info < (3, 14))
