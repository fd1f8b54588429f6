#!/usr/bin/env python
"""The spread of each program's metric over torch runs with different seeds, as corpus.SPREAD.

    python tools/compat/spread.py [--keep] SEED=RUN.txt [SEED=RUN.txt ...]

Each RUN.txt is run.py's stdout for `--impl torch --seed SEED`. Prints the SPREAD literal for
corpus.py ({program: {seed: metric}}, exit-0 runs with a metric only) and, on stderr, every
program whose bar a torch seed misses (the bar then needs more margin, or a reason). With --keep
the seeds already in corpus.SPREAD stay and the given runs add to them (a new seed without
rerunning the old ones)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus
from report import _LINE


def main(argv) -> int:
    keep = "--keep" in argv
    argv = [a for a in argv if a != "--keep"]
    spread: dict = {k: dict(v) for k, v in corpus.SPREAD.items()} if keep else {}
    for arg in argv:
        seed, _, path = arg.partition("=")
        for line in Path(path).read_text().splitlines():
            m = _LINE.match(line)
            if not m or m.group(3) == "-":
                continue
            # a FAIL with a metric is a bar miss (exit 0); other FAILs print no metric
            if m.group(1) == "FAIL" and not m.group(4).startswith("metric "):
                continue
            spread.setdefault(m.group(2), {})[int(seed)] = float(m.group(3))
    print("SPREAD = {")
    for p in corpus.PROGRAMS:
        if p.name in spread:
            vals = ", ".join(f"{s}: {v:.4g}" for s, v in sorted(spread[p.name].items()))
            print(f"    {p.name!r}: {{{vals}}},")
            if p.bar and not all(p.meets(v) for v in spread[p.name].values()):
                print(f"{p.name}: bar {p.bar_text()} missed by a torch seed: {spread[p.name]}",
                      file=sys.stderr)
    print("}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
