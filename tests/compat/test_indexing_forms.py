"""Every index form torch accepts, in read, write and index_put_(accumulate=True), against torch
on the same data: ints, slices, None, Ellipsis, bools, lists, range, NumPy arrays, 0-d tensors,
integer and boolean tensors, and mixes of them (property-based with hypothesis)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

SHAPE = (4, 5, 3)


def _component(draw, size, lib):
    """One index component for a dim of `size`, built for `lib` (ember or torch) from the
    same drawn description, so both see the same index."""
    kind = draw(st.sampled_from(["int", "negint", "slice", "list", "range", "ndarray",
                                 "tensor0d", "longtensor", "booltensor", "full"]))
    if kind == "int":
        return draw(st.integers(0, size - 1))
    if kind == "negint":
        return -draw(st.integers(1, size))
    if kind == "slice":
        start = draw(st.one_of(st.none(), st.integers(-size, size)))
        stop = draw(st.one_of(st.none(), st.integers(-size, size)))
        step = draw(st.one_of(st.none(), st.integers(1, 3)))
        return slice(start, stop, step)
    if kind == "full":
        return slice(None)
    idx = draw(st.lists(st.integers(-size, size - 1), min_size=1, max_size=3))
    if kind == "list":
        return ("list", idx)
    if kind == "range":
        lo = draw(st.integers(0, size - 1))
        return ("range", lo, draw(st.integers(lo, size)))
    if kind == "ndarray":
        return ("ndarray", idx)
    if kind == "tensor0d":
        return ("tensor0d", idx[0])
    if kind == "longtensor":
        return ("longtensor", idx)
    mask = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    return ("booltensor", mask)


def _build(desc, lib):
    if not isinstance(desc, tuple):
        return desc
    kind, *rest = desc
    if kind == "list":
        return list(rest[0])
    if kind == "range":
        return range(rest[0], rest[1])
    if kind == "ndarray":
        return np.array(rest[0], dtype=np.int64)
    if kind == "tensor0d":
        return lib.tensor(rest[0])
    if kind == "longtensor":
        return lib.tensor(rest[0], dtype=lib.int64)
    return lib.tensor(rest[0], dtype=lib.bool)


@st.composite
def index_descs(draw):
    """A key: per-dim components, optionally with None inserted and a leading/trailing `...`.
    At most two advanced components, so the result shape stays small and legal."""
    n_dims = draw(st.integers(1, 3))
    comps = [_component(draw, SHAPE[d], None) for d in range(n_dims)]
    adv = [c for c in comps if isinstance(c, tuple) and c[0] in ("list", "ndarray", "longtensor")]
    if len(adv) > 1:   # mixed advanced lists must broadcast: give them the same length
        length = len(adv[0][1])
        comps = [(c[0], (c[1] * length)[:length]) if c in adv else c for c in comps]
    if sum(isinstance(c, tuple) and c[0] == "booltensor" for c in comps) > 1:
        comps = [c if not (isinstance(c, tuple) and c[0] == "booltensor") else slice(None)
                 for c in comps]
    if draw(st.booleans()):
        comps.insert(draw(st.integers(0, len(comps))), None)
    if n_dims < 3 and draw(st.booleans()):
        comps = [Ellipsis] + comps if draw(st.booleans()) else comps + [Ellipsis]
    return comps


def _key(descs, lib):
    built = tuple(_build(d, lib) for d in descs)
    return built[0] if len(built) == 1 and not isinstance(built[0], tuple) else built


def _pair(seed=0):
    a = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE) + 0.5
    return ember.tensor(a), torch.tensor(a)


def _outcome(fn):
    try:
        return ("ok", fn())
    except (IndexError, RuntimeError, ValueError, TypeError) as exc:
        return ("error", type(exc))


_SETTINGS = settings(max_examples=150, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(index_descs())
def test_index_read_matches_torch(descs):
    ours, ref = _pair()
    got = _outcome(lambda: ours[_key(descs, ember)].numpy())
    want = _outcome(lambda: ref[_key(descs, torch)].numpy())
    assert got[0] == want[0], (descs, got, want)
    if got[0] == "ok":
        np.testing.assert_array_equal(got[1], want[1])
    else:
        assert got[1] is want[1] or issubclass(want[1], got[1]) or issubclass(got[1], want[1])


@_SETTINGS
@given(index_descs(), st.sampled_from(["scalar", "0d", "row", "full"]))
def test_index_write_broadcasts_value_like_torch(descs, value_kind):
    ours, ref = _pair()
    target = _outcome(lambda: tuple(ref[_key(descs, torch)].shape))
    if target[0] != "ok":
        return
    shape = target[1]
    if value_kind == "scalar":
        values = (-1.0, -1.0)
    elif value_kind == "0d":
        values = (ember.tensor(-2.0, dtype=ember.float64), torch.tensor(-2.0, dtype=torch.float64))
    else:
        vshape = shape[-1:] if value_kind == "row" else shape
        v = -np.arange(int(np.prod(vshape)), dtype=np.float64).reshape(vshape) - 3
        values = (ember.tensor(v), torch.tensor(v))

    def write(t, lib, value):
        t[_key(descs, lib)] = value
        return t.numpy()
    got = _outcome(lambda: write(ours, ember, values[0]))
    want = _outcome(lambda: write(ref, torch, values[1]))
    assert got[0] == want[0], (descs, got, want)
    if got[0] == "ok":
        np.testing.assert_array_equal(got[1], want[1])


@_SETTINGS
@given(st.lists(st.integers(-4, 3), min_size=1, max_size=6),
       st.lists(st.integers(-5, 4), min_size=1, max_size=6),
       st.sampled_from(["scalar", "0d", "row", "full"]))
def test_index_put_accumulate_duplicates_like_torch(rows, cols, value_kind):
    n = min(len(rows), len(cols))
    rows, cols = rows[:n], cols[:n]
    ours, ref = _pair()
    if value_kind == "scalar" or value_kind == "0d":
        v = np.array(1.5)
    elif value_kind == "row":
        v = np.arange(3, dtype=np.float64)
    else:
        v = np.arange(n * 3, dtype=np.float64).reshape(n, 3)
    ours.index_put_((ember.tensor(rows), ember.tensor(cols)), ember.tensor(v), accumulate=True)
    ref.index_put_((torch.tensor(rows), torch.tensor(cols)), torch.tensor(v), accumulate=True)
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


@pytest.mark.parametrize("make_index", [
    lambda lib: (range(4), lib.tensor([0, 1, 2, 0])),
    lambda lib: (np.array([0, 3]), slice(None), lib.tensor(1)),
    lambda lib: ([0, 2], Ellipsis, [1, 0]),
    lambda lib: (lib.tensor([True, False, True, False]), 1),
    lambda lib: (None, range(1, 3), None),
    lambda lib: (lib.tensor(2), range(0, 5, 2)),
])
def test_index_regressions_from_real_programs(make_index):
    # x[range(n), y] = v is how several tutorials write one-hot targets
    ours, ref = _pair()
    ours[make_index(ember)] = 7.0
    ref[make_index(torch)] = 7.0
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())
    np.testing.assert_array_equal(ours[make_index(ember)].numpy(), ref[make_index(torch)].numpy())


def test_index_range_gradient_reaches_source():
    x = ember.arange(12.0).reshape(4, 3).requires_grad_()
    x[range(4), ember.tensor([0, 1, 2, 0])].sum().backward()
    expected = np.zeros((4, 3))
    expected[range(4), [0, 1, 2, 0]] = 1
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@pytest.mark.parametrize("key", [(Ellipsis, slice(0, 0), range(4)), (slice(0, 0), [9]),
                                 (Ellipsis, [7]), ([5],), (slice(0, 0), [9], slice(None))])
@pytest.mark.parametrize("value_kind", ["read", "scalar", "fits", "misfit"])
def test_out_of_bounds_index_selecting_nothing_is_an_empty_selection_like_torch(key, value_kind):
    """torch checks an index only for the elements it moves: an out-of-bounds integer index
    beside an empty slice selects nothing (read: empty result; write: no-op) instead of raising;
    the same index selecting something still raises IndexError."""
    ours, ref = _pair()

    def run(t, lib):
        if value_kind == "read":
            return t[key].numpy()
        value = {"scalar": -1.0, "fits": lib.ones(1, dtype=lib.float64),
                 "misfit": lib.ones(2, 7, dtype=lib.float64)}[value_kind]
        t[key] = value
        return t.numpy()
    got, want = _outcome(lambda: run(ours, ember)), _outcome(lambda: run(ref, torch))
    assert got[0] == want[0], (key, got, want)
    if got[0] == "ok":
        np.testing.assert_array_equal(got[1], want[1])
    else:
        assert got[1] is want[1], (key, got, want)
