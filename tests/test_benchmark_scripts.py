"""The benchmark scripts (benchmarks/table1.py, benchmarks/small_batch.py) keep running: their
per-process protocol on one small workload for one step, and their pure helpers. No timings are
asserted (speed is reported by the scripts, not tested)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "benchmarks")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import table1  # noqa: E402


def test_ratio_of_medians_is_torch_median_over_ember_median():
    # ember steps 1, 2, 9 s (median 2); torch 3, 4, 5 s (median 4): ember twice as fast
    assert table1.ratio_of_medians([1.0, 9.0, 2.0], [5.0, 3.0, 4.0]) == 2.0
    assert table1.ratio_of_medians([], [1.0]) != table1.ratio_of_medians([], [1.0])  # nan


def test_paired_ratio_is_median_of_per_sample_ratios():
    assert table1.paired_ratio([1.0, 2.0, 4.0], [3.0, 2.0, 2.0]) == 1.0  # ratios 3, 1, 0.5
    with pytest.raises(ValueError):
        table1.paired_ratio([1.0, 2.0], [1.0])


def test_summarize_runs_takes_the_median_over_runs():
    def run(ratio, paired):
        return {"w": {"per_process": {"ratio": ratio}, "in_process": {"paired_ratio": paired}}}

    s = table1.summarize_runs([run(1.0, 2.0), run(3.0, 1.0), run(1.2, 5.0)])
    assert s["w"]["ratio"] == 1.2 and s["w"]["paired"] == 2.0
    assert s["w"]["ratios"] == [1.0, 3.0, 1.2]


def test_suite_counts_follow_the_spec_and_overrides():
    assert table1.TABLE1.counts("ncf") == (20, 30, 10)
    assert table1.TABLE1.counts("vgg19") == (3, 20, 1)
    assert table1.TABLE1.counts("ncf", steps=1, warmup=0, quick=True) == (0, 1, 1)


@pytest.mark.parity
def test_table1_per_process_mode_runs_one_step(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "r.json"
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run(
        [sys.executable, os.path.join(BENCH, "table1.py"), "--only", "ncf", "--quick",
         "--steps", "1", "--warmup", "0", "--no-quiet", "--json", str(out)],
        capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (run,) = json.loads(out.read_text())["runs"]
    pp = run["ncf"]["per_process"]
    assert len(pp["ember"]["samples_s"]) == 1 and len(pp["torch"]["samples_s"]) == 1
    assert pp["ratio"] > 0 and len(pp["pair_ratios"]) == 1
    assert "ratio (per-process, headline)" in proc.stdout
