"""ember.utils.benchmark: Timer runs the statement with the given globals the asked number of
times, Measurement's statistics follow from its raw block times, Compare tabulates."""
import pytest

import ember
from ember.utils.benchmark import Compare, Measurement, TaskSpec, Timer


def test_timeit_runs_the_statement_number_times_plus_warmup():
    calls = []
    m = Timer(stmt="f()", globals={"f": lambda: calls.append(1)}).timeit(7)
    assert len(calls) == 8 and m.number_per_run == 7 and len(m.times) == 1
    assert m.times[0] == pytest.approx(m.raw_times[0] / 7)
    assert m.stmt == "f()" and m.num_threads == 1


def test_setup_and_globals_and_threads_restored():
    before = ember.get_num_threads()
    m = Timer("y = x * 2", setup="x = ember.ones(4)", globals={"ember": ember},
              num_threads=1, label="mul", sub_label="4", description="ones").timeit(3)
    assert ember.get_num_threads() == before
    assert m.title == "mul: 4"
    text = repr(m)
    assert "mul: 4" in text and "1 measurement, 3 runs , 1 thread" in text


def test_measurement_statistics_from_raw_times():
    m = Measurement(10, [1.0, 2.0, 3.0, 4.0], TaskSpec(stmt="s", setup="pass"))
    assert m.times == [0.1, 0.2, 0.3, 0.4]
    assert m.median == pytest.approx(0.25) and m.mean == pytest.approx(0.25)
    assert m.iqr == pytest.approx(0.15)
    assert m.has_warnings
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = m.nope


def test_blocked_autorange_reaches_min_run_time_and_calls_back():
    seen = []
    m = Timer("sum(range(100))").blocked_autorange(callback=lambda n, t: seen.append((n, t)),
                                                   min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and len(seen) == len(m.raw_times)
    assert all(n == m.number_per_run for n, _ in seen)


def test_compare_tabulates_by_label_row_and_column():
    ms = [Timer("a+b", globals={"a": 1, "b": 2}, label="add", sub_label=r,
                description=c).timeit(10) for r in ("small", "large") for c in ("x", "y")]
    text = str(Compare(ms))
    assert "add" in text and "small" in text and "large" in text and "Times are in" in text


def test_timer_rejects_cpp_and_callables():
    from ember.utils.benchmark import Language
    with pytest.raises(ValueError, match="only Python"):
        Timer("x", language=Language.CPP)
    with pytest.raises(ValueError, match="string"):
        Timer(lambda: None)


@pytest.mark.parity
def test_names_and_signatures_match_torch():
    pytest.importorskip("torch")
    import inspect

    import torch.utils.benchmark as tb
    for name in ("timeit", "blocked_autorange", "adaptive_autorange"):
        want = list(inspect.signature(getattr(tb.Timer, name)).parameters)
        assert list(inspect.signature(getattr(Timer, name)).parameters) == want
    assert list(inspect.signature(Timer.__init__).parameters) == \
        list(inspect.signature(tb.Timer.__init__).parameters)
