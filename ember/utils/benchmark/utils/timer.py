"""Timer: time a Python statement (given as source text, like the timeit module) and return a
Measurement. ``num_threads`` is set for the measurement and restored afterwards."""
from __future__ import annotations

import enum
import timeit as _timeit

from .common import Measurement, TaskSpec


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def timer() -> float:
    return _timeit.default_timer()


class Timer:
    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Timer: only Python statements can be timed in ember; got "
                             f"language={language!r}")
        if not isinstance(stmt, str):
            raise ValueError(f"Timer: stmt must be a string of Python source; got "
                             f"{type(stmt).__name__}")
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                   label=label, sub_label=sub_label, description=description,
                                   env=env, num_threads=num_threads)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer,
                                    globals=dict(globals or {}))

    def _blocks(self, number, count):
        import ember
        prev = ember.get_num_threads()
        ember.set_num_threads(self._task_spec.num_threads)
        try:
            return [self._timer.timeit(number) for _ in range(count)]
        finally:
            ember.set_num_threads(prev)

    def timeit(self, number=1000000):
        """One block of ``number`` runs (after one warm-up run)."""
        self._blocks(1, 1)
        return Measurement(number, self._blocks(number, 1), self._task_spec)

    def _block_size(self, block_time):
        number = 1
        while True:
            t = self._blocks(number, 1)[0]
            if t >= block_time or number >= 10 ** 9:
                return number
            number *= 10

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of a size taking >= 10 ms each, until ``min_run_time`` seconds are spent."""
        number = self._block_size(0.01)
        times, total = [], 0.0
        while total < min_run_time or not times:
            t = self._blocks(number, 1)[0]
            if callback is not None:
                callback(number, t)
            times.append(t)
            total += t
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Blocks until the interquartile range is under ``threshold`` of the median (and
        ``min_run_time`` spent), or ``max_run_time`` seconds are spent."""
        number = self._block_size(0.01)
        times, total = [], 0.0
        while True:
            t = self._blocks(number, 1)[0]
            if callback is not None:
                callback(number, t)
            times.append(t)
            total += t
            m = Measurement(number, times, self._task_spec)
            if total >= max_run_time:
                return m
            if total >= min_run_time and len(times) > 3 and m.iqr <= threshold * m.median:
                return m

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("Timer.repeat: use timeit or blocked_autorange (as torch "
                                  "also leaves it unimplemented)")

    def autorange(self, callback=None):
        raise NotImplementedError("Timer.autorange: use blocked_autorange")
