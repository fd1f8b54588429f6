"""Measurement (what a Timer returns) and TaskSpec (what was timed)."""
from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        if self.label is None:
            return self.stmt
        return f"{self.label}: {self.sub_label}" if self.sub_label else self.label


def _unit(seconds):
    for scale, name in ((1e-9, "ns"), (1e-6, "us"), (1e-3, "ms")):
        if seconds < scale * 1000:
            return scale, name
    return 1.0, "s"


class Measurement:
    """Block times of one statement: ``raw_times`` are seconds per block of
    ``number_per_run`` executions; ``times`` are seconds per execution."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run = int(number_per_run)
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    def __getattr__(self, name):
        # stmt, label, sub_label, description, env, num_threads, title come from the task
        if name != "task_spec" and "task_spec" in self.__dict__ and \
                hasattr(self.__dict__["task_spec"], name):
            return getattr(self.__dict__["task_spec"], name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self) -> list:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        return float(np.median(self.times))

    @property
    def mean(self) -> float:
        return float(np.mean(self.times))

    @property
    def iqr(self) -> float:
        q1, q3 = np.percentile(self.times, [25, 75])
        return float(q3 - q1)

    @property
    def has_warnings(self) -> bool:
        return len(self.times) > 1 and self.iqr > 0.1 * self.median

    @property
    def significant_figures(self) -> int:
        if len(self.times) < 2 or self.iqr == 0:
            return 4
        return max(1, min(4, int(np.floor(np.log10(self.median / self.iqr))) + 1))

    def __repr__(self):
        spec = self.task_spec
        scale, unit = _unit(self.median)
        lines = [f"<{type(self).__module__}.Measurement object at {hex(id(self))}>", spec.title]
        if spec.description:
            lines.append(spec.description)
        n = len(self.times)
        value = f"{self.median / scale:.{self.significant_figures}g} {unit}"
        if n == 1:
            lines.append(f"  {value}")
            lines.append(f"  1 measurement, {self.number_per_run} runs , "
                         f"{spec.num_threads} thread{'s' if spec.num_threads > 1 else ''}")
        else:
            lines.append(f"  Median: {value}")
            lines.append(f"  IQR:    {self.iqr / scale:.2f} ({self.times[0] / scale:.2f} to "
                         f"{max(self.times) / scale:.2f})")
            lines.append(f"  {n} measurements, {self.number_per_run} runs per measurement, "
                         f"{spec.num_threads} thread{'s' if spec.num_threads > 1 else ''}")
        if self.has_warnings:
            lines.append(f"  WARNING: Interquartile range is {100 * self.iqr / self.median:.1f}%"
                         " of the median measurement.")
        return "\n".join(lines)
