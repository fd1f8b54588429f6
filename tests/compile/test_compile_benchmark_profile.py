"""benchmarks/compile.py's --profile breakdown and --without rows run and report what they say
(the per-call CPU of the compiled NCF step, grouped; rows without one rewrite)."""
from __future__ import annotations

import importlib.util
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))


def _bench():
    path = os.path.join(HERE, "..", "..", "benchmarks", "compile.py")
    spec = importlib.util.spec_from_file_location("_compile_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_profile_ncf_lists_the_rewritten_calls_and_parts_summing_to_the_step(capsys):
    _bench()._profile("ncf", 2)
    out = capsys.readouterr().out
    for label in ("step", "Embedding backward of a product", "Linear + Relu", "Mul + Cat",
                  "Embedding x2 + Cat"):
        assert label in out
    shares = [float(m) for m in re.findall(r"^\s+[-\d.]+ ms\s+([-\d.]+) %", out, re.M)]
    assert len(shares) >= 5 and abs(sum(shares) - 100.0) < 0.5


def test_without_adds_a_row_per_rewrite(capsys):
    mod = _bench()
    res = mod._row("block_small", lambda lib, c: mod._block_step(lib, c, 2, 8, 16), 2, False,
                   without=["epilogue", "scatter"])
    assert {"ember eager", "ember.compile", "compile -epil", "compile -scat"} <= set(res)
    assert "compile -epil" in capsys.readouterr().out


def test_child_times_one_configuration_alone(capsys):
    import json
    _bench()._child("ncf", "ember.compile", 3)
    times = json.loads(capsys.readouterr().out.splitlines()[-1])["step_ms"]
    assert len(times) == 3 and all(t > 0 for t in times)


def test_per_process_rotates_the_configurations_and_pairs_the_rounds(monkeypatch, capsys):
    """--per-process: a child per configuration, the first of each round rotating; the ratio of
    medians and the paired per-round ratios from the children's median steps."""
    import json
    import subprocess
    import types
    mod = _bench()
    step_ms = {"ember eager": [6.0, 8.0], "ember.compile": [3.0, 2.0]}
    calls = []

    def fake_run(cmd, env, **kw):
        config = cmd[cmd.index("--child") + 2]
        calls.append((config, env.get("EMBER_COMPILE_BENCH_CHILD")))
        ms = step_ms[config][sum(c == config for c, _ in calls) - 1]
        return types.SimpleNamespace(stdout=json.dumps({"step_ms": [ms, ms + 1, ms - 1]}))

    monkeypatch.setattr(subprocess, "run", fake_run)
    samples = mod._per_process("ncf", 2, 3, with_torch=False)
    assert calls == [("ember eager", "ember"), ("ember.compile", "ember"),
                     ("ember.compile", "ember"), ("ember eager", "ember")]
    assert samples == step_ms
    out = capsys.readouterr().out
    # medians 7 / 2.5 = 2.80x; rounds 6/3 = 2.00, 8/2 = 4.00 -> paired median 3.00x
    assert "2.80x (ratio of medians); paired per round 3.00x: 2.00, 4.00" in out
