"""Datasets, samplers, DistributedSampler and collation (no worker processes)."""
from __future__ import annotations

import collections
import math

import numpy as np
import pytest

import ember
from ember.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    random_split,
)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i


class Stream(IterableDataset):
    def __init__(self, start, stop):
        self.start, self.stop = start, stop

    def __iter__(self):
        return iter(range(self.start, self.stop))

    def __len__(self):
        return self.stop - self.start


# ---------------------------------------------------------------------------- datasets
def test_tensor_dataset_indexing_and_len():
    x, y = ember.arange(12.0).reshape(4, 3), ember.arange(4)
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    np.testing.assert_array_equal(a.numpy(), [6.0, 7.0, 8.0])
    assert b.item() == 2
    a, _ = ds[-1]
    np.testing.assert_array_equal(a.numpy(), [9.0, 10.0, 11.0])


def test_tensor_dataset_size_mismatch_raises():
    with pytest.raises(AssertionError, match="Size mismatch"):   # torch's assert
        TensorDataset(ember.zeros(3, 2), ember.zeros(4))
    with pytest.raises(TypeError, match="argument 1"):
        TensorDataset(ember.zeros(3), [1, 2, 3])


def test_concat_dataset_maps_indices_across_parts():
    ds = Squares(3) + Squares(2)
    assert isinstance(ds, ConcatDataset)
    assert ds.cumulative_sizes == [3, 5]
    assert [ds[i] for i in range(5)] == [0, 1, 4, 0, 1]
    assert ds[-1] == 1
    with pytest.raises(IndexError):
        ds[5]
    with pytest.raises(ValueError, match="absolute value"):
        ds[-6]


def test_concat_dataset_rejects_iterable():
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([Stream(0, 2)])


def test_chain_dataset_chains_lazily_and_has_len():
    ds = Stream(0, 2) + Stream(5, 7)
    assert isinstance(ds, ChainDataset)
    assert list(ds) == [0, 1, 5, 6]
    assert len(ds) == 4


def test_subset_and_getitems():
    sub = Subset(Squares(10), [9, 2, 5])
    assert len(sub) == 3
    assert [sub[i] for i in range(3)] == [81, 4, 25]
    assert sub.__getitems__([0, 2]) == [81, 25]


def test_stack_dataset_tuple_and_dict():
    a, b = Squares(3), TensorDataset(ember.arange(3.0))
    assert StackDataset(a, b)[1][0] == 1
    d = StackDataset(sq=a, t=b)[2]
    assert d["sq"] == 4 and d["t"][0].item() == 2.0
    with pytest.raises(ValueError, match="Size mismatch"):
        StackDataset(Squares(2), Squares(3))
    with pytest.raises(ValueError, match="both types"):
        StackDataset(a, t=b)


def test_random_split_lengths_and_fractions_partition_the_data():
    g = ember.Generator().manual_seed(3)
    parts = random_split(Squares(10), [3, 7], generator=g)
    seen = sorted(parts[0].indices + parts[1].indices)
    assert [len(p) for p in parts] == [3, 7] and seen == list(range(10))
    parts = random_split(Squares(11), [0.5, 0.3, 0.2], generator=g)
    # floors 5, 3, 2; the remaining one goes to the first split
    assert [len(p) for p in parts] == [6, 3, 2]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(Squares(10), [3, 3])


def test_random_split_is_reproducible_with_generator():
    a = random_split(Squares(20), [10, 10], generator=ember.Generator().manual_seed(1))
    b = random_split(Squares(20), [10, 10], generator=ember.Generator().manual_seed(1))
    assert a[0].indices == b[0].indices


# ---------------------------------------------------------------------------- samplers
def test_sequential_and_random_sampler_permutation():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    s = RandomSampler(range(50), generator=ember.Generator().manual_seed(0))
    order = list(s)
    assert sorted(order) == list(range(50)) and order != list(range(50))
    assert len(s) == 50


def test_random_sampler_num_samples_and_replacement():
    s = RandomSampler(range(5), num_samples=12)
    out = list(s)
    assert len(out) == 12 and sorted(set(out)) == list(range(5))  # 2 full permutations + 2
    s = RandomSampler(range(3), replacement=True, num_samples=70,
                      generator=ember.Generator().manual_seed(0))
    out = list(s)
    assert len(out) == 70 and set(out) == {0, 1, 2}
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement"):
        RandomSampler(range(3), replacement=1)


def test_random_sampler_follows_manual_seed():
    ember.manual_seed(5)
    a = list(RandomSampler(range(30)))
    ember.manual_seed(5)
    assert list(RandomSampler(range(30))) == a


def test_subset_random_sampler_permutes_given_indices():
    s = SubsetRandomSampler([10, 20, 30, 40], generator=ember.Generator().manual_seed(0))
    assert sorted(s) == [10, 20, 30, 40] and len(s) == 4


def test_weighted_random_sampler_respects_weights():
    g = ember.Generator().manual_seed(0)
    out = list(WeightedRandomSampler([0.0, 1.0, 3.0], 4000, generator=g))
    counts = collections.Counter(out)
    assert counts[0] == 0
    assert 0.2 < counts[1] / 4000 < 0.3
    no_rep = list(WeightedRandomSampler([1.0, 1.0, 1.0, 1.0], 4, replacement=False))
    assert sorted(no_rep) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="1d sequence"):
        WeightedRandomSampler([[1.0, 2.0]], 2)
    with pytest.raises(ValueError, match="num_samples"):
        WeightedRandomSampler([1.0], -1)


def test_batch_sampler_drop_last_and_len():
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3
    assert len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="batch_size"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last"):
        BatchSampler(range(3), 2, None)


@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_partitions_evenly(drop_last):
    n, replicas = 10, 3
    parts = [list(DistributedSampler(range(n), replicas, r, shuffle=False,
                                     drop_last=drop_last)) for r in range(replicas)]
    sizes = {len(p) for p in parts}
    assert len(sizes) == 1
    expected = n // replicas if drop_last else math.ceil(n / replicas)
    assert sizes == {expected}
    flat = sorted(i for p in parts for i in p)
    if drop_last:
        assert len(set(flat)) == len(flat)  # no duplicates
    else:
        assert set(flat) == set(range(n))  # padded by repeating the start


def test_distributed_sampler_set_epoch_changes_order_consistently():
    s0 = DistributedSampler(range(40), 2, 0, seed=7)
    s1 = DistributedSampler(range(40), 2, 1, seed=7)
    e0 = list(s0) + list(s1)
    assert sorted(e0) == list(range(40))
    s0.set_epoch(1)
    s1.set_epoch(1)
    e1 = list(s0) + list(s1)
    assert sorted(e1) == list(range(40)) and e1 != e0
    with pytest.raises(ValueError, match="Invalid rank 2"):
        DistributedSampler(range(4), 2, 2)


@pytest.mark.parity
def test_distributed_sampler_matches_torch_without_shuffle():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    from torch.utils.data import DistributedSampler as TorchDS
    for n, replicas, drop in [(10, 3, False), (10, 3, True), (4, 8, False)]:
        for rank in range(replicas):
            ours = list(DistributedSampler(range(n), replicas, rank, shuffle=False,
                                           drop_last=drop))
            ref = list(TorchDS(range(n), replicas, rank, shuffle=False, drop_last=drop))
            assert ours == ref, (n, replicas, drop, rank)
    del torch


# ---------------------------------------------------------------------------- collation
def test_default_collate_nested_structures():
    Point = collections.namedtuple("Point", "x y")
    batch = [{"img": ember.full((2,), float(i)), "label": i, "name": f"s{i}",
              "pt": Point(i, 0.5 * i), "arr": np.full(3, i, np.int32), "pair": (i, -i)}
             for i in range(3)]
    out = default_collate(batch)
    assert out["img"].shape == (3, 2)
    np.testing.assert_array_equal(out["img"].numpy()[:, 0], [0.0, 1.0, 2.0])
    assert out["label"].dtype == ember.int64 and out["label"].tolist() == [0, 1, 2]
    assert out["name"] == ["s0", "s1", "s2"]
    assert isinstance(out["pt"], Point) and out["pt"].y.dtype == ember.float64
    assert out["arr"].dtype == ember.int32 and out["arr"].shape == (3, 3)
    assert isinstance(out["pair"], list) and out["pair"][1].tolist() == [0, -1, -2]


def test_default_collate_numbers_bools_and_numpy_scalars():
    assert default_collate([1.5, 2.5]).dtype == ember.float64
    assert default_collate([True, False]).dtype == ember.bool
    assert default_collate([np.float32(1), np.float32(2)]).dtype == ember.float32
    od = default_collate([collections.OrderedDict(a=1), collections.OrderedDict(a=2)])
    assert isinstance(od, collections.OrderedDict)


def test_default_collate_ragged_tensors_name_the_entry():
    batch = [{"x": ember.zeros(3)}, {"x": ember.zeros(3)}, {"x": ember.zeros(4)}]
    with pytest.raises(RuntimeError, match=r"\['x'\].*\(3,\) at entry 0 and \(4,\) at entry 2"):
        default_collate(batch)
    with pytest.raises(RuntimeError, match="equal size.*entry 1"):
        default_collate([[1, 2], [1, 2, 3]])


def test_default_collate_rejects_unsupported_types():
    with pytest.raises(TypeError, match="found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="numpy arrays"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_default_collate_keeps_gradient_path():
    a = ember.ones(2, requires_grad=True)
    b = default_collate([a, a * 2])
    b.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 3.0])


def test_default_convert_converts_numpy_only():
    out = default_convert({"a": np.ones(2), "b": (np.int64(3), "s"), "c": 1.0})
    assert isinstance(out["a"], ember.Tensor) and out["a"].dtype == ember.float64
    assert isinstance(out["b"], list) and out["b"][0].item() == 3 and out["b"][1] == "s"
    assert out["c"] == 1.0
    strings = np.array(["x"])
    assert default_convert(strings) is strings


@pytest.mark.parity
def test_default_collate_matches_torch():
    pytest.importorskip("torch", reason="torch oracle not installed")
    from torch.utils.data import default_collate as torch_collate
    rng = np.random.default_rng(0)
    samples = [(rng.standard_normal((2, 3)).astype(np.float32), int(i), float(i) / 3)
               for i in range(4)]
    ours = default_collate(samples)
    ref = torch_collate(samples)
    assert isinstance(ours, list) and isinstance(ref, list)
    for o, r in zip(ours, ref):
        assert str(o.dtype).split(".")[-1] == str(r.dtype).split(".")[-1]
        np.testing.assert_array_equal(o.numpy(), r.numpy())


def test_dataset_checks_raise_torchs_types():
    """torch's asserts and lookups: AssertionError for an empty ConcatDataset and a map-style
    dataset in a ChainDataset, IndexError for an empty batch and a TensorDataset of nothing;
    an IterableDataset subclass without __iter__ cannot be made (abstract, as torch's)."""
    with pytest.raises(AssertionError, match="should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(ChainDataset([range(3)]))
    with pytest.raises(IndexError, match="no tensors"):
        len(TensorDataset())
    with pytest.raises(IndexError, match="empty batch"):
        ember.utils.data.default_collate([])
    with pytest.raises(TypeError, match="abstract"):
        type("NoIter", (ember.utils.data.IterableDataset,), {})()


def test_default_collate_numbers_keep_their_values():
    """[1, 2.5] collated to int64 truncated 2.5: the batch's dtype is tensor(batch)'s."""
    out = ember.utils.data.default_collate([1, 2.5])
    assert out.dtype == ember.float32 and out.tolist() == [1.0, 2.5]
    assert ember.utils.data.default_collate([True, False]).dtype == ember.bool
    assert ember.utils.data.default_collate([3, 4]).dtype == ember.int64
    assert ember.utils.data.default_collate([2.5, 1]).dtype == ember.float64


def test_sampler_argument_errors_name_the_argument():
    from ember.utils.data import BatchSampler
    from ember.utils.data.distributed import DistributedSampler
    with pytest.raises(ValueError, match="drop_last should be a boolean value, but got "
                                         "drop_last=1"):
        BatchSampler(range(4), 2, 1)
    # no process group: torch's ValueError from its default-group lookup
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(4))


def test_torch_private_collate_import_paths():
    """Programs import the collate functions from torch.utils.data._utils.collate."""
    from ember.utils.data._utils import collate as C
    from ember.utils.data._utils.worker import get_worker_info
    assert C.default_collate is ember.utils.data.default_collate
    assert get_worker_info() is None
    out = C.collate([1.5, 2.5], collate_fn_map={float: lambda b, *, collate_fn_map=None: sum(b)})
    assert out == 4.0
