"""Compare: Measurements laid out as tables, one per label, a row per sub_label and a column
per description, medians in one unit per table."""
from __future__ import annotations

from .common import _unit


class Compare:
    def __init__(self, results):
        self._results = list(results)
        self._trim = False
        self._colorize = False

    def extend_results(self, results):
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim = True

    def colorize(self, rowwise=False):
        self._colorize = True

    def highlight_warnings(self):
        pass

    def __str__(self):
        tables = {}
        for m in self._results:
            tables.setdefault(m.task_spec.label or m.task_spec.stmt, []).append(m)
        out = []
        for label, ms in tables.items():
            scale, unit = _unit(min(m.median for m in ms))
            cols = list(dict.fromkeys(m.task_spec.description or "" for m in ms))
            rows = list(dict.fromkeys(m.task_spec.sub_label or "" for m in ms))
            cell = {(m.task_spec.sub_label or "", m.task_spec.description or ""): m for m in ms}
            width = max([len(r) for r in rows] + [1])
            out.append(f"[{'-' * 2} {label} {'-' * 2}]")
            out.append(" " * width + " | " + " | ".join(f"{c:>12}" for c in cols))
            for r in rows:
                vals = [f"{cell[(r, c)].median / scale:12.1f}" if (r, c) in cell else " " * 12
                        for c in cols]
                out.append(f"{r:<{width}} | " + " | ".join(vals))
            out.append(f"\nTimes are in {'microseconds' if unit == 'us' else unit} ({unit}).\n")
        return "\n".join(out)

    def print(self):
        print(str(self))
