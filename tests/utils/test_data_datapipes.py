"""DataPipes (ember.utils.data.IterDataPipe & co.): functional chaining, batching, shuffling,
determinism guards and runtime type validation, against torch where it has the same pipes."""
from __future__ import annotations

import typing

import pytest

import ember
from ember.utils import data
from ember.utils.data.datapipes.iter import IterableWrapper
from ember.utils.data.datapipes.map import SequenceWrapper


def test_iter_pipes_chain_through_functional_names():
    pipe = IterableWrapper(range(10)).map(lambda x: x * 2).filter(lambda x: x % 3 == 0).batch(2)
    out = list(pipe)
    assert out == [[0, 6], [12, 18]] and isinstance(out[0], data.DataChunk)
    assert list(IterableWrapper(range(5)).batch(2, drop_last=True).unbatch()) == [0, 1, 2, 3]
    assert list(IterableWrapper([[[1], [2]], [[3]]]).unbatch(unbatch_level=-1)) == [1, 2, 3]
    assert list(IterableWrapper(range(3)).zip(IterableWrapper("ab"))) == [(0, "a"), (1, "b")]
    assert list(IterableWrapper([1]).concat(IterableWrapper([2, 3]))) == [1, 2, 3]
    assert len(IterableWrapper(range(5)).batch(2)) == 3
    assert "map" in dir(IterableWrapper([]))


def test_map_column_and_collate():
    rows = IterableWrapper([(1, 10), (2, 20)])
    assert list(rows.map(lambda v: -v, input_col=1)) == [(1, -10), (2, -20)]
    assert list(rows.map(lambda a, b: a + b, input_col=[0, 1], output_col=-1)) == [
        (1, 10, 11), (2, 20, 22)]
    batch = next(iter(IterableWrapper([ember.tensor(1.0), ember.tensor(2.0)]).batch(2).collate()))
    assert batch.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="output_col"):
        rows.map(abs, output_col=1)


def test_shuffle_is_seeded_by_ember_and_keeps_items():
    pipe = IterableWrapper(range(20)).shuffle(buffer_size=5)
    ember.manual_seed(3)
    first = list(pipe)
    ember.manual_seed(3)
    assert list(pipe) == first and sorted(first) == list(range(20)) and first != list(range(20))
    assert list(pipe.set_shuffle(False)) == list(range(20))


def test_sharding_filter_splits_between_instances():
    pipes = [IterableWrapper(range(7)).sharding_filter() for _ in range(2)]
    for i, p in enumerate(pipes):
        p.apply_sharding(2, i)
    assert list(pipes[0]) == [0, 2, 4, 6] and list(pipes[1]) == [1, 3, 5]


def test_map_pipes_index_and_chain():
    m = SequenceWrapper([1, 2, 3, 4, 5]).map(lambda x: x + 1)
    assert m[0] == 2 and len(m) == 5 and list(m) == [2, 3, 4, 5, 6]
    b = m.batch(2)
    assert len(b) == 3 and b[2] == [6]
    with pytest.raises(IndexError, match="out of bound"):
        b[3]
    assert m.zip(SequenceWrapper("abcde"))[1] == (3, "b")
    assert len(m.concat(SequenceWrapper([0]))) == 6
    ember.manual_seed(0)
    assert sorted(m.shuffle()) == [2, 3, 4, 5, 6]


def test_dataloader_iterates_a_datapipe():
    pipe = IterableWrapper(range(6)).map(float)
    batches = list(data.DataLoader(pipe, batch_size=4))
    assert [b.tolist() for b in batches] == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0]]


def test_functional_datapipe_registers_a_new_stage():
    @data.functional_datapipe("surface_double_it")
    class Doubler(data.IterDataPipe):
        def __init__(self, source):
            self.source = source

        def __iter__(self):
            for x in self.source:
                yield 2 * x

    assert list(IterableWrapper([1, 2]).surface_double_it()) == [2, 4]
    with pytest.raises(Exception, match="already taken"):
        data.functional_datapipe("surface_double_it")(Doubler)
    with pytest.raises(TypeError, match="IterDataPipe or MapDataPipe"):
        data.functional_datapipe("surface_bad")(int)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        IterableWrapper([]).nope


def test_non_deterministic_refused_inside_guarantee():
    @data.non_deterministic
    class Random(data.IterDataPipe):
        def __iter__(self):
            yield 1

    @data.non_deterministic(lambda flag: flag)
    class Maybe(data.IterDataPipe):
        def __init__(self, flag):
            self.flag = flag

    assert list(Random()) == [1]
    with data.guaranteed_datapipes_determinism():
        with pytest.raises(TypeError, match="Random is non-deterministic"):
            Random()
        assert Maybe(False).flag is False
        with pytest.raises(TypeError, match="non-deterministic with the inputs"):
            Maybe(True)
    assert Maybe(True).flag is True
    with pytest.raises(TypeError, match="Only `IterDataPipe`"):
        data.non_deterministic(int)


def test_runtime_validation_checks_declared_item_type():
    class Ints(data.IterDataPipe[int]):
        def __init__(self, items):
            self.items = items

        @data.runtime_validation
        def __iter__(self):
            yield from self.items

    assert list(Ints([1, 2])) == [1, 2]
    with pytest.raises(RuntimeError, match="Expected an instance as subtype"):
        list(Ints([1, "x"]))
    with data.runtime_validation_disabled():
        assert list(Ints([1, "x"])) == [1, "x"]

    def run(self):
        yield from ()

    with pytest.raises(TypeError, match="Can not decorate function run"):
        data.runtime_validation(run)


def test_argument_validation_checks_pipe_arguments():
    class Ints(data.IterDataPipe[int]):
        def __iter__(self):
            yield 1

    class Strs(data.IterDataPipe[str]):
        def __iter__(self):
            yield "a"

    @data.argument_validation
    def consume(pipe: data.IterDataPipe[int], n: int = 1):
        return n

    assert consume(Ints()) == 1
    with pytest.raises(TypeError, match="Expected argument 'pipe' as a IterDataPipe"):
        consume([1])
    with pytest.raises(TypeError, match="subtype of hint"):
        consume(Strs())
    assert typing.get_origin(data.IterDataPipe[int]) is data.IterDataPipe


def test_datachunk():
    chunk = data.DataChunk([1, 2])
    assert chunk == [1, 2] and chunk.items == [1, 2] and chunk.as_str("  ") == "  [1, 2]"
    assert list(chunk.raw_iterator()) == [1, 2]


@pytest.mark.parity
def test_datapipes_match_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.data.datapipes.iter import IterableWrapper as TorchWrapper

    def build(wrapper):
        return list(wrapper(range(11)).map(abs).filter(bool).batch(3).unbatch().batch(4))

    assert build(IterableWrapper) == [list(b) for b in build(TorchWrapper)]
    assert issubclass(torch.utils.data.IterDataPipe, torch.utils.data.IterableDataset)
    assert issubclass(data.IterDataPipe, data.IterableDataset)
