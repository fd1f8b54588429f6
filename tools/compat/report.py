#!/usr/bin/env python
"""Write docs/COMPAT.md's table from two run.py outputs (one per implementation).

    python tools/compat/report.py --torch TORCH.txt [MORE.txt] --ember EMBER.txt [MORE.txt]

Each input is run.py's stdout (`PASS|FAIL name metric seconds error`); with several files per
implementation a later file's line for a program replaces an earlier one. A program absent
from every file shows as "not run"."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus

_LINE = re.compile(r"^(PASS|FAIL|MISSING)\s+(\S+)\s+(\S+)\s+[\d.]+s\s*(.*)$")


def _read(paths):
    out = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            m = _LINE.match(line)
            if m:
                out[m.group(2)] = (m.group(1), m.group(3), m.group(4).strip())
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--torch", required=True, nargs="+")
    ap.add_argument("--ember", required=True, nargs="+")
    args = ap.parse_args()
    theirs, ours = _read(args.torch), _read(args.ember)
    # a run that exited 0 is judged against the corpus's current bar (bars are set from torch
    # runs, sometimes after the run that measured a program)
    for res in (theirs, ours):
        for p in corpus.PROGRAMS:
            r = res.get(p.name)
            if r and r[2].startswith("metric ") and r[1] != "-":
                ok = p.bar is None or p.meets(float(r[1]))
                res[p.name] = ("PASS" if ok else "FAIL", r[1],
                               "" if ok else f"metric {r[1]} misses bar {p.bar_text()}")
    counts = {impl: (sum(v[0] == "PASS" for v in res.values()), len(res))
              for impl, res in (("torch", theirs), ("ember", ours))}
    print(f"**{len(corpus.PROGRAMS)} programs. torch: {counts['torch'][0]} pass of "
          f"{counts['torch'][1]} run; ember: {counts['ember'][0]} pass of {counts['ember'][1]} "
          "run.**\n")
    print("| program | repo @ commit | covers | bar | torch seeds (spread) | torch | ember | pass "
          "| ember's failure |")
    print("|---|---|---|---|---|---|---|---|---|")
    for p in corpus.PROGRAMS:
        t = theirs.get(p.name)
        e = ours.get(p.name)
        commit = p.commit[:10] if not p.commit.startswith("per") else \
            corpus.TUTORIAL_FILES.get(p.script, "?")[:10]
        cell_t = "not run" if t is None else f"{t[0]} {t[1]}"
        cell_e = "not run" if e is None else f"{e[0]} {e[1]}"
        ok = "yes" if e and e[0] == "PASS" else ("-" if e is None else "no")
        err = "" if e is None or e[0] == "PASS" else e[2].replace("|", "\\|")[:90]
        seeds = corpus.SPREAD.get(p.name, {})
        spread = "-" if not seeds else (
            f"{min(seeds.values()):.4g}..{max(seeds.values()):.4g} ({len(seeds)})")
        print(f"| {p.name} | {p.repo} @ {commit} | {p.covers} | {p.bar_text()} | {spread} | "
              f"{cell_t} | {cell_e} | {ok} | {err} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
