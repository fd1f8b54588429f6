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
