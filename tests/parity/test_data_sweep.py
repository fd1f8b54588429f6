"""A differential sweep against torch 2.13 of torch.utils.data, as training scripts use it:
DataLoader (batch_size None, drop_last, shuffle with a generator, the sampler/batch_sampler
conflicts and their ValueErrors, default_collate of dicts, named tuples, tuples, strings, NumPy
arrays and Python numbers, default_convert, pin_memory on the CPU, len() of loaders, workers
and their options), random_split, Subset, ConcatDataset, ChainDataset, TensorDataset,
StackDataset and the samplers (Sequential, Random, SubsetRandom, WeightedRandom, Batch,
Distributed).

A case is a function of a Lib (``_sweep_results``): both libraries must raise the same exception
type or return the same results. A shuffled order need not equal torch's (the random streams
differ): such cases return what must agree, that the order is a permutation of the data and
that one seed repeats it. ``raised(...)`` cases compare an error's type and which of its key
phrases the message lacks. Divergences kept on purpose are in KNOWN with a reason (and in
docs/DEVIATIONS.md).
"""
from __future__ import annotations

import collections
import collections.abc

import numpy as np
import pytest
from _sweep import assert_verdict, raised, warned
from _sweep_results import divergence

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.parity, pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

CASES: list = []


def case(group, what, fn):
    CASES.append((group, what, fn))


def D(L):
    return L.mod.utils.data


def TD(L, n=10):
    """A TensorDataset of n float rows and int64 labels."""
    return D(L).TensorDataset(L.T(np.arange(n * 2.0).reshape(n, 2)), L.T(np.arange(n) % 3))


def listed(loader):
    return list(loader)


def gen(L, seed):
    return L.mod.Generator().manual_seed(seed)


def _order(batches):
    """The sample order a loader of range(n) gave (its batches flattened)."""
    return [int(v) for b in batches for v in (b.tolist() if hasattr(b, "tolist") else [b])]


def _shuffled(make, n=20):
    """What two libraries' shuffled runs share: a permutation, repeated by its seed."""
    def run(L):
        a, b, c = _order(make(L, 0)), _order(make(L, 0)), _order(make(L, 1))
        return sorted(a) == list(range(n)), a == b, a != c, len(a)
    return run


# --------------------------------------------------------------------------- DataLoader
for _bs in (1, 3, 10, 11):
    for _dl in (False, True):
        case("DataLoader", f"batch_size {_bs} drop_last {_dl}", lambda L, bs=_bs, dl=_dl: (
            lambda ld: (listed(ld), len(ld)))(D(L).DataLoader(TD(L), batch_size=bs,
                                                                 drop_last=dl)))
case("DataLoader", "default batch_size 1", lambda L: listed(D(L).DataLoader(TD(L, 3))))
case("DataLoader", "batch_size None", lambda L: (lambda ld: (listed(ld), len(ld)))(
    D(L).DataLoader(TD(L, 4), batch_size=None)))
case("DataLoader", "batch_size None numpy", lambda L: listed(D(L).DataLoader(
    [np.arange(3.0), np.arange(3)], batch_size=None)))
case("DataLoader", "batch_size None drop_last", lambda L: raised(
    lambda: D(L).DataLoader(TD(L), batch_size=None, drop_last=True), "mutually exclusive"))
case("DataLoader", "batch_size 0", lambda L: raised(
    lambda: D(L).DataLoader(TD(L), batch_size=0)))
case("DataLoader", "range dataset", lambda L: listed(D(L).DataLoader(range(7), batch_size=3)))
case("DataLoader", "list of floats", lambda L: listed(D(L).DataLoader([0.5, 1.5, 2.5],
                                                                      batch_size=2)))
case("DataLoader", "shuffle with generator", _shuffled(lambda L, s: D(L).DataLoader(
    range(20), batch_size=4, shuffle=True, generator=gen(L, s))))
case("DataLoader", "shuffle under manual_seed", _shuffled(lambda L, s: (
    L.mod.manual_seed(s), listed(D(L).DataLoader(range(20), batch_size=4, shuffle=True)))[1]))
case("DataLoader", "shuffle False keeps order", lambda L: _order(D(L).DataLoader(
    range(9), batch_size=4, shuffle=False)))
case("DataLoader", "sampler with shuffle", lambda L: raised(
    lambda: D(L).DataLoader(range(4), sampler=D(L).SequentialSampler(range(4)), shuffle=True),
    "sampler option is mutually exclusive with shuffle"))
for _what, _kw in (("batch_size", {"batch_size": 2}), ("shuffle", {"shuffle": True}),
                   ("sampler", {"sampler": [0, 1]}), ("drop_last", {"drop_last": True})):
    case("DataLoader", f"batch_sampler with {_what}", lambda L, kw=_kw: raised(
        lambda: D(L).DataLoader(range(4), batch_sampler=[[0, 1], [2, 3]], **kw),
        "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
        "drop_last"))
case("DataLoader", "batch_sampler lists", lambda L: (lambda ld: (listed(ld), len(ld)))(
    D(L).DataLoader(range(10, 20), batch_sampler=[[0, 1], [5], [9, 2, 3]])))
case("DataLoader", "batch_sampler with batch_size None", lambda L: listed(D(L).DataLoader(
    range(10), batch_sampler=[[0, 1]], batch_size=None)))
case("DataLoader", "sampler list", lambda L: listed(D(L).DataLoader(range(10, 20),
                                                                    sampler=[3, 1, 4],
                                                                    batch_size=2)))
case("DataLoader", "sampler object", lambda L: listed(D(L).DataLoader(
    range(10, 20), sampler=D(L).SequentialSampler(range(5)), batch_size=2, drop_last=True)))
case("DataLoader", "persistent_workers without workers", lambda L: raised(
    lambda: D(L).DataLoader(range(4), persistent_workers=True),
    "persistent_workers option needs num_workers > 0"))
case("DataLoader", "negative num_workers", lambda L: raised(
    lambda: D(L).DataLoader(range(4), num_workers=-1), "num_workers"))
case("DataLoader", "negative timeout", lambda L: raised(
    lambda: D(L).DataLoader(range(4), timeout=-1), "timeout"))
case("DataLoader", "prefetch_factor without workers", lambda L: raised(
    lambda: D(L).DataLoader(range(4), prefetch_factor=2), "prefetch_factor"))
case("DataLoader", "pin_memory on the CPU", lambda L: (lambda out: (
    out[0], out[1]))(warned(lambda: listed(D(L).DataLoader(TD(L, 4), batch_size=2,
                                                            pin_memory=True)))))
case("DataLoader", "attributes", lambda L: (lambda ld: (
    ld.batch_size, ld.drop_last, ld.num_workers, ld.pin_memory, ld.timeout,
    type(ld.sampler).__name__, type(ld.batch_sampler).__name__, ld.prefetch_factor,
    ld.persistent_workers, ld.collate_fn is D(L).default_collate))(
        D(L).DataLoader(range(5), batch_size=2)))
case("DataLoader", "attributes shuffle", lambda L: (lambda ld: (
    type(ld.sampler).__name__, ld.batch_sampler.batch_size, ld.batch_sampler.drop_last))(
        D(L).DataLoader(range(5), batch_size=2, shuffle=True, drop_last=True)))
case("DataLoader", "attributes batch_size None", lambda L: (lambda ld: (
    ld.batch_size, ld.batch_sampler, ld.collate_fn is D(L).default_convert))(
        D(L).DataLoader(range(5), batch_size=None)))
case("DataLoader", "custom collate_fn", lambda L: listed(D(L).DataLoader(
    range(5), batch_size=2, collate_fn=lambda b: [v * 10 for v in b])))
case("DataLoader", "setting batch_size after", lambda L: raised(
    lambda: setattr(D(L).DataLoader(range(5)), "batch_size", 3), "batch_size"))
case("DataLoader", "iterates twice", lambda L: (lambda ld: (listed(ld), listed(ld)))(
    D(L).DataLoader(range(5), batch_size=2)))
case("DataLoader", "next of iter", lambda L: next(iter(D(L).DataLoader(TD(L), batch_size=4))))


class _Iterable:
    """An IterableDataset yielding 0..n-1, with or without __len__ (made per library)."""

    @staticmethod
    def make(L, n=7, with_len=True, length=None):
        class It(D(L).IterableDataset):
            def __iter__(self):
                return iter(range(n))
        if with_len:
            It.__len__ = lambda self: n if length is None else length
        return It()


for _bs, _dl in ((None, False), (1, False), (3, False), (3, True)):
    case("DataLoader IterableDataset", f"len batch_size {_bs} drop_last {_dl}",
         lambda L, bs=_bs, dl=_dl: (lambda ld: (len(ld), listed(ld)))(D(L).DataLoader(
             _Iterable.make(L), batch_size=bs, drop_last=dl)))
case("DataLoader IterableDataset", "no len", lambda L: raised(
    lambda: len(D(L).DataLoader(_Iterable.make(L, with_len=False), batch_size=2))))
case("DataLoader IterableDataset", "iterate without len", lambda L: listed(D(L).DataLoader(
    _Iterable.make(L, with_len=False), batch_size=3)))
case("DataLoader IterableDataset", "shuffle refused", lambda L: raised(
    lambda: D(L).DataLoader(_Iterable.make(L), shuffle=True), "IterableDataset", "shuffle"))
case("DataLoader IterableDataset", "sampler refused", lambda L: raised(
    lambda: D(L).DataLoader(_Iterable.make(L), sampler=[0, 1]), "IterableDataset",
    "sampler"))
case("DataLoader IterableDataset", "batch_sampler refused", lambda L: raised(
    lambda: D(L).DataLoader(_Iterable.make(L), batch_sampler=[[0, 1]]), "IterableDataset"))
case("DataLoader IterableDataset", "len shorter than data", lambda L: warned(
    lambda: listed(D(L).DataLoader(_Iterable.make(L, length=4), batch_size=2)), "length"))


def _worker_case(L):
    def init(worker_id):
        info = D(L).get_worker_info()
        assert info.id == worker_id and info.num_workers == 2

    class Ds(D(L).Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            return i * 2

    ld = D(L).DataLoader(Ds(), batch_size=2, num_workers=2, worker_init_fn=init)
    return listed(ld), D(L).get_worker_info()


case("DataLoader workers", "worker_init_fn and order", _worker_case)


def _worker_iterable(L):
    class Split(D(L).IterableDataset):
        def __iter__(self):
            info = D(L).get_worker_info()
            return iter(range(info.id, 6, info.num_workers))
    return sorted(v for b in D(L).DataLoader(Split(), batch_size=None, num_workers=2)
                  for v in [int(b)])


case("DataLoader workers", "IterableDataset split by worker", _worker_iterable)


def _worker_seeds(L):
    """Each worker's seed (WorkerInfo.seed, initial_seed()) from a seeded generator: repeated
    by the seed, distinct per worker, the library's initial_seed in each."""
    class Seeds(D(L).Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            info = D(L).get_worker_info()
            return info.id, info.seed, L.mod.initial_seed(), type(info.dataset).__name__

    def run(seed):
        ld = D(L).DataLoader(Seeds(), batch_size=None, num_workers=2, generator=gen(L, seed))
        return sorted({tuple(int(v) if not isinstance(v, str) else v for v in s) for s in ld})
    a, b, c = run(0), run(0), run(1)
    return (a == b, a != c, len({s[1] for s in a}), all(s[1] == s[2] for s in a),
            [s[3] for s in a])


case("DataLoader workers", "worker seeds", _worker_seeds)
case("DataLoader workers", "worker_init_fn not called without workers", lambda L: (lambda seen: (
    listed(D(L).DataLoader(range(3), worker_init_fn=seen.append)), seen)[1])([]))
case("DataLoader", "collate_fn None", lambda L: listed(D(L).DataLoader(
    range(4), batch_size=2, collate_fn=None)))
case("DataLoader workers", "worker error raised in parent", lambda L: raised(
    lambda: listed(D(L).DataLoader([1, "a"], batch_size=2, num_workers=1,
                                   collate_fn=lambda b: b[0] + b[1]))))

def _dict_dataset(L):
    class Ds(D(L).Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": np.full(2, i, np.float32), "y": i, "name": f"s{i}", "w": i / 2}
    return Ds()


case("DataLoader", "dict samples", lambda L: listed(D(L).DataLoader(_dict_dataset(L),
                                                                    batch_size=2)))
case("DataLoader", "dict samples batch_size None", lambda L: listed(D(L).DataLoader(
    _dict_dataset(L), batch_size=None))[:2])
case("DataLoader", "len of map-style without len", lambda L: raised(lambda: len(D(L).DataLoader(
    type("NoLen", (D(L).Dataset,), {"__getitem__": lambda self, i: i})()))))
case("DataLoader", "generator attribute", lambda L: (lambda g: D(L).DataLoader(
    range(3), generator=g).generator is g)(gen(L, 0)))
case("DataLoader", "sampler with generator", _shuffled(lambda L, s: listed(D(L).DataLoader(
    range(20), batch_size=5, sampler=D(L).RandomSampler(range(20), generator=gen(L, s))))))
case("DataLoader", "persistent workers iterated twice", lambda L: (lambda ld: (
    listed(ld), listed(ld)))(D(L).DataLoader(range(6), batch_size=2, num_workers=1,
                                             persistent_workers=True)))
case("DataLoader", "workers prefetch_factor", lambda L: listed(D(L).DataLoader(
    range(7), batch_size=3, num_workers=2, prefetch_factor=1)))
case("DataLoader", "workers shuffle generator", _shuffled(lambda L, s: listed(D(L).DataLoader(
    range(20), batch_size=5, shuffle=True, num_workers=2, generator=gen(L, s)))))

case("DataLoader", "batch_size float", lambda L: raised(
    lambda: D(L).DataLoader(range(4), batch_size=2.0), "batch_size"))
case("DataLoader", "batch_size negative", lambda L: raised(
    lambda: D(L).DataLoader(range(4), batch_size=-1), "batch_size"))
case("DataLoader", "len of iterator", lambda L: len(iter(D(L).DataLoader(range(7),
                                                                          batch_size=2))))
case("DataLoader", "exhausted iterator", lambda L: (lambda it: (
    [next(it) for _ in range(2)], raised(lambda: next(it))))(iter(D(L).DataLoader(
        range(3), batch_size=2))))
case("DataLoader", "drop_last len of 0", lambda L: (lambda ld: (len(ld), listed(ld)))(
    D(L).DataLoader(range(3), batch_size=5, drop_last=True)))
case("DataLoader", "empty dataset", lambda L: (lambda ld: (len(ld), listed(ld)))(
    D(L).DataLoader([], batch_size=2)))
case("DataLoader", "empty dataset shuffle", lambda L: raised(
    lambda: D(L).DataLoader([], batch_size=2, shuffle=True), "num_samples"))
case("DataLoader", "sampler generator object", lambda L: listed(D(L).DataLoader(
    range(10, 20), sampler=iter([2, 0]), batch_size=2)))
case("DataLoader", "tensor dataset of tensors", lambda L: listed(D(L).DataLoader(
    L.T(np.arange(6.0).reshape(3, 2)), batch_size=2)))
case("DataLoader", "multiprocessing_context without workers", lambda L: raised(
    lambda: D(L).DataLoader(range(4), multiprocessing_context="spawn"),
    "multiprocessing_context"))
case("DataLoader", "bad multiprocessing_context", lambda L: raised(
    lambda: D(L).DataLoader(range(4), num_workers=1, multiprocessing_context="nope")))

# --------------------------------------------------------------------------- collate
Point = collections.namedtuple("Point", "x y")


def coll(L, batch):
    return D(L).default_collate(batch)


_BATCHES = {
    "ints": [1, 2, 3], "floats": [1.5, 2.5], "bools": [True, False],
    "mixed int float": [1, 2.5], "strings": ["a", "bc"], "bytes": [b"a", b"b"],
    "tuples": [(1, 2.0), (3, 4.0)], "lists": [[1, 2], [3, 4]],
    "dicts": [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}],
    "nested dict": [{"x": {"y": 1}}, {"x": {"y": 2}}],
    "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
    "numpy float32": [np.ones(2, np.float32), np.zeros(2, np.float32)],
    "numpy int32": [np.arange(3, dtype=np.int32)] * 2,
    "numpy scalars": [np.float64(1.5), np.float64(2.5)],
    "numpy int scalars": [np.int16(1), np.int16(2)],
    "numpy bool": [np.array([True]), np.array([False])],
    "numpy 0-d": [np.array(1.5), np.array(2.5)],
    "None": [None, None],
    "dict with string": [{"name": "a", "v": 1}, {"name": "b", "v": 2}],
    "tuple with numpy": [(np.arange(2.0), 1), (np.arange(2.0), 0)],
}
for _what, _batch in _BATCHES.items():
    case("default_collate", _what, lambda L, b=_batch: coll(L, b))
case("default_collate", "tensors", lambda L: coll(L, [L.T([1.0, 2.0]), L.T([3.0, 4.0])]))
case("default_collate", "int tensors 0-d", lambda L: coll(L, [L.T(1), L.T(2)]))
case("default_collate", "tensors mixed shapes", lambda L: raised(
    lambda: coll(L, [L.T([1.0, 2.0]), L.T([3.0])]), "stack"))
case("default_collate", "lists of unequal length", lambda L: raised(
    lambda: coll(L, [[1, 2], [3]]), "each element in list of batch should be of equal size"))
case("default_collate", "numpy object arrays", lambda L: raised(
    lambda: coll(L, [np.array(["a"], dtype=object)] * 2), "default_collate"))
case("default_collate", "numpy string arrays", lambda L: raised(
    lambda: coll(L, [np.array(["a", "b"])] * 2)))
case("default_collate", "unknown object", lambda L: raised(
    lambda: coll(L, [object(), object()]), "default_collate"))
case("default_collate", "empty batch", lambda L: raised(lambda: coll(L, [])))
case("default_collate", "tensors of different dtypes", lambda L: coll(
    L, [L.T([1, 2]), L.T([1.5, 2.5])]))
case("default_collate", "namedtuple type kept", lambda L: type(coll(
    L, [Point(1, 2), Point(3, 4)])).__name__)
case("default_collate", "tuple stays list", lambda L: type(coll(L, [(1, 2), (3, 4)])).__name__)
case("default_collate", "dict subclass", lambda L: type(coll(L, [
    collections.OrderedDict(a=1), collections.OrderedDict(a=2)])).__name__)
case("default_collate", "defaultdict", lambda L: coll(L, [
    collections.defaultdict(int, a=1), collections.defaultdict(int, a=2)]))

_CONVERT = {
    "numpy": np.arange(3.0), "numpy int": np.arange(3, dtype=np.int16),
    "list of numpy": [np.arange(2.0), np.ones(2, np.float32)], "int": 3, "float": 1.5,
    "string": "abc", "tuple": (np.arange(2), "x"), "dict": {"a": np.arange(2.0), "b": 1},
    "namedtuple": Point(np.arange(2.0), 1), "numpy scalar": np.float32(1.5),
    "numpy string array": np.array(["a", "b"]), "numpy object array": np.array([1, "a"],
                                                                                dtype=object),
    "None": None,
}
for _what, _v in _CONVERT.items():
    case("default_convert", _what, lambda L, v=_v: D(L).default_convert(v))
case("default_collate", "numpy arrays of different shapes", lambda L: raised(
    lambda: coll(L, [np.zeros(2), np.zeros(3)])))
case("default_collate", "dict missing key", lambda L: raised(
    lambda: coll(L, [{"a": 1, "b": 2}, {"a": 3}])))
case("default_collate", "tensors requiring grad", lambda L: (lambda b: (
    b.requires_grad, type(b.grad_fn).__name__ if b.grad_fn else None))(coll(
        L, [L.G([1.0, 2.0]), L.G([3.0, 4.0])])))
case("default_collate", "custom collate_fn_map", lambda L: D(L)._utils.collate.collate(
    [1.5, 2.5], collate_fn_map={float: lambda b, *, collate_fn_map=None: sum(b)}))
case("default_collate", "set", lambda L: raised(lambda: coll(L, [{1, 2}, {3, 4}])))
case("default_convert", "tensor passes", lambda L: (lambda t: D(L).default_convert(t) is t)(
    L.T([1.0])))

# --------------------------------------------------------------------------- random_split
for _what, _lengths in (("ints", [3, 7]), ("fractions", [0.5, 0.5]),
                        ("fractions remainder", [0.3, 0.3, 0.4]),
                        ("fractions round robin", [0.33, 0.33, 0.34]),
                        ("fractions of 7", [0.5, 0.5]), ("zero part", [0, 10]),
                        ("fraction zero", [0.0, 1.0])):
    def _split(L, lengths=_lengths, n=(7 if "of 7" in _what else 10)):
        parts = D(L).random_split(range(n), lengths, generator=gen(L, 0))
        again = D(L).random_split(range(n), lengths, generator=gen(L, 0))
        items = [sorted(int(v) for v in p) for p in parts]
        return ([len(p) for p in parts], sorted(v for p in items for v in p) == list(range(n)),
                [list(p) for p in parts] == [list(p) for p in again],
                [type(p).__name__ for p in parts])
    case("random_split", _what, _split)
for _what, _lengths, _phrase in (
        ("sum too small", [3, 6], "Sum of input lengths does not equal the length of the input"),
        ("sum too big", [5, 6], "Sum of input lengths does not equal the length of the input"),
        ("fractions above 1", [0.6, 0.6], "Sum of input lengths"),
        ("negative fraction", [1.2, -0.2], "Fraction at index 1 is not between 0 and 1"),
        ("negative length", [12, -2], "")):
    case("random_split", _what, lambda L, ln=_lengths, ph=_phrase: raised(
        lambda: D(L).random_split(range(10), ln, generator=gen(L, 0)), *([ph] if ph else [])))
case("random_split", "global stream", lambda L: (lambda a, b: a == b)(
    *[(L.mod.manual_seed(3), [list(p) for p in D(L).random_split(range(10), [4, 6])])[1]
      for _ in range(2)]))
case("random_split", "fractions warning for empty part", lambda L: warned(
    lambda: [len(p) for p in D(L).random_split(range(3), [0.1, 0.9], generator=gen(L, 1))],
    "empty"))
case("random_split", "subset indices", lambda L: (lambda parts: (
    type(parts[0].indices).__name__, parts[0].dataset is not None))(D(L).random_split(
        TD(L), [4, 6], generator=gen(L, 0))))

# --------------------------------------------------------------------------- datasets
case("Subset", "getitem len", lambda L: (lambda s: (len(s), s[0], s[-1], list(s)))(
    D(L).Subset(range(10, 20), [5, 0, 3])))
case("Subset", "of Subset", lambda L: list(D(L).Subset(D(L).Subset(range(10, 20), [5, 0, 3]),
                                                       [2, 1])))
case("Subset", "tensor indices", lambda L: list(D(L).Subset(range(10, 20), L.T([1, 2]))))
case("Subset", "getitems", lambda L: D(L).Subset(TD(L), [3, 4]).__getitems__([0, 1]))
case("Subset", "index out of range", lambda L: raised(lambda: D(L).Subset(range(3), [1])[2]))
case("Subset", "TensorDataset rows", lambda L: D(L).Subset(TD(L), [9, 0])[0])
case("ConcatDataset", "len and items", lambda L: (lambda c: (
    len(c), c[0], c[3], c[-1], c[-4], c.cumulative_sizes, list(c)))(
        D(L).ConcatDataset([range(3), range(10, 12), range(20, 24)])))
case("ConcatDataset", "negative index too far", lambda L: raised(
    lambda: D(L).ConcatDataset([range(3), range(2)])[-6],
    "absolute value of index should not exceed dataset length"))
case("ConcatDataset", "index too far", lambda L: raised(
    lambda: D(L).ConcatDataset([range(3), range(2)])[5]))
case("ConcatDataset", "empty", lambda L: raised(lambda: D(L).ConcatDataset([]),
                                                "datasets should not be an empty iterable"))
case("ConcatDataset", "iterable refused", lambda L: raised(
    lambda: D(L).ConcatDataset([_Iterable.make(L)]), "does not support IterableDataset"))
case("ConcatDataset", "add operator", lambda L: (lambda c: (type(c).__name__, len(c), c[4]))(
    TD(L, 3) + TD(L, 4)))
case("ConcatDataset", "with TensorDataset", lambda L: D(L).ConcatDataset([TD(L, 2),
                                                                          TD(L, 3)])[3])
case("ChainDataset", "iterates", lambda L: list(D(L).ChainDataset([
    _Iterable.make(L, 3), _Iterable.make(L, 2)])))
case("ChainDataset", "len", lambda L: len(D(L).ChainDataset([_Iterable.make(L, 3),
                                                             _Iterable.make(L, 2)])))
case("ChainDataset", "len without len", lambda L: raised(lambda: len(D(L).ChainDataset([
    _Iterable.make(L, 3, with_len=False)]))))
case("ChainDataset", "map-style refused", lambda L: raised(
    lambda: list(D(L).ChainDataset([range(3)])), "ChainDataset only supports IterableDataset"))
case("ChainDataset", "add operator", lambda L: (lambda c: (type(c).__name__, list(c)))(
    _Iterable.make(L, 2) + _Iterable.make(L, 3)))
case("TensorDataset", "items", lambda L: (lambda d: (len(d), d[2], d[-1], len(d.tensors)))(
    TD(L)))
case("TensorDataset", "size mismatch", lambda L: raised(
    lambda: D(L).TensorDataset(L.mod.zeros(3, 2), L.mod.zeros(4)), "Size mismatch"))
case("TensorDataset", "no tensors", lambda L: raised(lambda: len(D(L).TensorDataset())))
case("TensorDataset", "no tensors items", lambda L: D(L).TensorDataset()[0])
case("TensorDataset", "0-d tensor", lambda L: raised(lambda: D(L).TensorDataset(L.T(1.0))))
case("TensorDataset", "list argument", lambda L: raised(
    lambda: D(L).TensorDataset(L.mod.zeros(2), [1, 2])))
case("TensorDataset", "one tensor", lambda L: D(L).TensorDataset(L.T([[1.0], [2.0]]))[1])
case("TensorDataset", "slice index", lambda L: TD(L)[1:3])
case("TensorDataset", "tensor index", lambda L: TD(L)[L.T([0, 2])])
case("StackDataset", "tuple", lambda L: (lambda s: (len(s), s[1]))(
    D(L).StackDataset(range(3), [10, 11, 12])))
case("StackDataset", "dict", lambda L: (lambda s: (len(s), s[2]))(
    D(L).StackDataset(a=range(3), b=TD(L, 3))))
case("StackDataset", "size mismatch", lambda L: raised(
    lambda: D(L).StackDataset(range(3), range(4)), "Size mismatch"))
case("StackDataset", "args and kwargs", lambda L: raised(
    lambda: D(L).StackDataset(range(3), b=range(3))))
case("StackDataset", "empty", lambda L: raised(lambda: D(L).StackDataset()))
case("StackDataset", "getitems", lambda L: D(L).StackDataset(range(3), [10, 11, 12])
     .__getitems__([0, 2]))
case("Dataset", "base getitem", lambda L: raised(lambda: D(L).Dataset()[0]))
case("Dataset", "len of base", lambda L: raised(lambda: len(D(L).Dataset())))
case("IterableDataset", "subclass without __iter__", lambda L: raised(
    lambda: type("NoIter", (D(L).IterableDataset,), {})(), "abstract"))
case("IterableDataset", "isinstance Iterable", lambda L: isinstance(
    _Iterable.make(L), collections.abc.Iterable))
case("IterableDataset", "iter of base", lambda L: raised(lambda: iter(D(L).IterableDataset())))

# --------------------------------------------------------------------------- samplers
case("SequentialSampler", "basic", lambda L: (lambda s: (list(s), len(s)))(
    D(L).SequentialSampler(range(5))))
case("RandomSampler", "permutation", _shuffled(lambda L, s: list(D(L).RandomSampler(
    range(20), generator=gen(L, s)))))
case("RandomSampler", "len", lambda L: len(D(L).RandomSampler(range(7))))
for _n in (5, 30):
    case("RandomSampler", f"replacement num_samples {_n}", lambda L, n=_n: (lambda s: (
        len(s), len(list(s)), all(0 <= i < 7 for i in list(s)),
        list(D(L).RandomSampler(range(7), True, n, generator=gen(L, 3))) == list(
            D(L).RandomSampler(range(7), True, n, generator=gen(L, 3)))))(
        D(L).RandomSampler(range(7), replacement=True, num_samples=n)))
case("RandomSampler", "num_samples without replacement", lambda L: (lambda s: (
    len(s), sorted(list(s)).count(0), len(set(list(s)))))(D(L).RandomSampler(
        range(4), num_samples=10, generator=gen(L, 0))))
case("RandomSampler", "num_samples fewer", lambda L: (lambda s: (len(s), len(set(s))))(
    list(D(L).RandomSampler(range(10), num_samples=4, generator=gen(L, 0)))))
case("RandomSampler", "num_samples 0", lambda L: raised(
    lambda: D(L).RandomSampler(range(4), num_samples=0), "num_samples should be a positive"))
case("RandomSampler", "num_samples float", lambda L: raised(
    lambda: D(L).RandomSampler(range(4), num_samples=2.0), "num_samples"))
case("RandomSampler", "replacement not bool", lambda L: raised(
    lambda: D(L).RandomSampler(range(4), replacement=1), "replacement should be a boolean"))
case("RandomSampler", "element type", lambda L: type(next(iter(D(L).RandomSampler(
    range(4))))).__name__)
case("SubsetRandomSampler", "permutation of indices", lambda L: (lambda a, b: (
    sorted(a), a == b, len(D(L).SubsetRandomSampler([5, 2, 9]))))(
        list(D(L).SubsetRandomSampler([5, 2, 9, 7], generator=gen(L, 0))),
        list(D(L).SubsetRandomSampler([5, 2, 9, 7], generator=gen(L, 0)))))
case("SubsetRandomSampler", "tensor indices", lambda L: (lambda a: (
    type(a[0]).__name__, sorted(int(v) for v in a)))(list(D(L).SubsetRandomSampler(
        L.T([4, 1, 3]), generator=gen(L, 0)))))
case("Sampler", "base iter", lambda L: raised(lambda: iter(D(L).Sampler())))
case("Sampler", "data_source argument", lambda L: warned(lambda: type(D(L).Sampler(
    range(3))).__name__))
case("SubsetRandomSampler", "element type", lambda L: type(next(iter(
    D(L).SubsetRandomSampler([5, 2])))).__name__)


def _weighted(L, weights, n, replacement=True):
    s = D(L).WeightedRandomSampler(weights, n, replacement=replacement, generator=gen(L, 0))
    a = list(s)
    b = list(D(L).WeightedRandomSampler(weights, n, replacement=replacement,
                                        generator=gen(L, 0)))
    return len(s), len(a), a == b, sorted(set(a)) if n >= 50 else None, type(a[0]).__name__


case("WeightedRandomSampler", "list weights", lambda L: _weighted(L, [0.0, 1.0, 3.0], 200))
case("WeightedRandomSampler", "tensor weights", lambda L: _weighted(L, L.T([1.0, 0.0, 2.0]),
                                                                    100))
case("WeightedRandomSampler", "frequencies", lambda L: (lambda a: round(
    a.count(2) / len(a), 1))(list(D(L).WeightedRandomSampler([1.0, 1.0, 2.0], 4000,
                                                             generator=gen(L, 0)))))
case("WeightedRandomSampler", "no replacement", lambda L: (lambda a: sorted(a))(list(
    D(L).WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], 4, replacement=False))))
case("WeightedRandomSampler", "no replacement too many", lambda L: raised(
    lambda: list(D(L).WeightedRandomSampler([1.0, 2.0], 3, replacement=False))))
case("WeightedRandomSampler", "num_samples 0", lambda L: raised(
    lambda: D(L).WeightedRandomSampler([1.0], 0), "num_samples should be a positive"))
case("WeightedRandomSampler", "replacement not bool", lambda L: raised(
    lambda: D(L).WeightedRandomSampler([1.0], 1, replacement=0), "replacement"))
case("WeightedRandomSampler", "2-d weights", lambda L: raised(
    lambda: D(L).WeightedRandomSampler([[1.0, 2.0]], 1), "weights should be a 1d sequence"))
case("WeightedRandomSampler", "negative weights", lambda L: raised(
    lambda: list(D(L).WeightedRandomSampler([1.0, -1.0], 2))))
case("WeightedRandomSampler", "weights attribute", lambda L: D(L).WeightedRandomSampler(
    [1, 2], 3).weights)
for _bs, _dl in ((3, False), (3, True), (5, False), (1, True), (20, True)):
    case("BatchSampler", f"batch_size {_bs} drop_last {_dl}", lambda L, bs=_bs, dl=_dl: (
        lambda s: (list(s), len(s)))(D(L).BatchSampler(range(10), bs, dl)))
case("BatchSampler", "over a sampler", lambda L: list(D(L).BatchSampler(
    D(L).SequentialSampler(range(5)), 2, False)))
for _what, _args, _phrase in (("batch_size 0", (0, False), "batch_size should be a positive"),
                              ("batch_size bool", (True, False), "batch_size should be a posi"),
                              ("batch_size float", (2.0, False), "batch_size"),
                              ("drop_last int", (2, 1), "drop_last should be a boolean")):
    case("BatchSampler", _what, lambda L, a=_args, ph=_phrase: raised(
        lambda: D(L).BatchSampler(range(4), *a), ph))


def DS(L, n=10, **kw):
    return D(L).distributed.DistributedSampler(range(n), **kw)


for _n, _reps, _dl in ((10, 3, False), (10, 3, True), (9, 3, False), (2, 4, False),
                       (2, 4, True), (11, 2, False)):
    case("DistributedSampler", f"n {_n} replicas {_reps} drop_last {_dl}",
         lambda L, n=_n, r=_reps, dl=_dl: [
             (list(s), len(s), s.num_samples, s.total_size) for s in
             [DS(L, n, num_replicas=r, rank=k, shuffle=False, drop_last=dl) for k in range(r)]])
case("DistributedSampler", "shuffle partitions", lambda L: (lambda parts: (
    sorted(v for p in parts for v in p), [len(p) for p in parts]))(
        [list(DS(L, 12, num_replicas=3, rank=k, seed=5)) for k in range(3)]))
case("DistributedSampler", "shuffle seed and epoch", lambda L: (lambda s: (
    list(s) == list(DS(L, 12, num_replicas=3, rank=1, seed=5)),
    (s.set_epoch(1), list(s) != list(DS(L, 12, num_replicas=3, rank=1, seed=5)))[1],
    s.epoch))(DS(L, 12, num_replicas=3, rank=1, seed=5)))
case("DistributedSampler", "invalid rank", lambda L: raised(
    lambda: DS(L, num_replicas=2, rank=2), "Invalid rank"))
case("DistributedSampler", "negative rank", lambda L: raised(
    lambda: DS(L, num_replicas=2, rank=-1), "Invalid rank"))
case("DistributedSampler", "no process group", lambda L: raised(lambda: DS(L)))
case("DistributedSampler", "in a DataLoader", lambda L: listed(D(L).DataLoader(
    range(10), batch_size=2, sampler=DS(L, num_replicas=2, rank=1, shuffle=False))))
case("DistributedSampler", "import path", lambda L: D(L).DistributedSampler is
     D(L).distributed.DistributedSampler)

# ============================================================================ the harness
# (group, case) -> why the difference is deliberate (docs/DEVIATIONS.md, data loading)
KNOWN: dict = {
    ("random_split", "negative length"):
        "ember refuses a negative length (ValueError); torch splits by it anyway when the "
        "lengths still sum to the dataset's (here one subset of 12 indices from 10 and an "
        "empty one)",
    ("Sampler", "data_source argument"):
        "ember's Sampler still takes the data_source argument torch 2.13 removed (programs "
        "written for earlier versions pass it to super().__init__), a superset kept",
    ("TensorDataset", "list argument"):
        "ember names the argument that is not a tensor (TypeError); torch fails on its .size() "
        "with an AttributeError",
}

# (group, case) -> found by this sweep and not yet decided: fix ember and drop the entry, or
# move it to KNOWN with a reason. Each still diverges (checked like KNOWN).
PENDING: set = set()

IDS = [f"{group}-{what}" for group, what, _ in CASES]


@pytest.mark.parametrize("group,what,fn", CASES, ids=IDS)
def test_data_against_torch(group, what, fn):
    assert_verdict(divergence(fn), (group, what), f"{group} ({what})", KNOWN, PENDING)
