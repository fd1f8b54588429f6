#!/usr/bin/env python
"""Run the compatibility corpus: real public PyTorch programs under torch or under ember.

    python tools/compat/run.py --mirrors DIR [--impl torch|ember] [--only GLOB] [-v]
                               [--seed N] [--jobs N] [--json FILE]

DIR holds the corpus's repositories as <owner>+<name>/ (tools/compat/fetch_mirrors.sh lays them
out). Each program is copied with its directory into a fresh temp dir, given locally generated data
(data.py), and run with small settings under a limit of CPU seconds (not wall seconds, which grow
with the machine's load), with no network. For `--impl ember`, shim/ goes first on PYTHONPATH,
so `import torch` and every `torch.*` submodule are ember's. stubs/ (offline stand-ins for
torchvision, tiktoken, ...) is on PYTHONPATH under both.

Per program: PASS/FAIL, the metric the program printed, and for a failure the last error line.
A program passes when it exits 0 and its metric meets the bar set from torch runs (corpus.py).
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402
import data  # noqa: E402

ROOT = HERE.parent.parent


# d2l's cells ask a notebook extension which framework tab is shown
_TAB = """
class _Tab:
    def selected(self, *names):
        return 'pytorch' in names or 'all' in names

    def interact_select(self, *args, **kwargs):
        pass


tab = _Tab()
"""


class _PreFailed(Exception):
    pass


# A program's time limit counts the CPU seconds it uses (RLIMIT_CPU, set in the child), not
# wall seconds: on a shared machine wall time grows with everyone else's load, and a program
# that passed alone timed out in a loaded run (yunjey/birnn: 42 s alone, over 150 s loaded).
# A wall-clock cap of WALL_FACTOR times the limit still ends a program that hangs (blocked on
# I/O or a lock uses no CPU).
WALL_FACTOR = 5


def _cpu_limit(seconds: float):
    def set_limit():
        soft = int(seconds) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))
    return set_limit


def _run(cmd, prog, **kw):
    return subprocess.run(cmd, **kw, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=prog.timeout * WALL_FACTOR,
                          preexec_fn=_cpu_limit(prog.timeout))




def _extract_d2l(md: Path) -> str:
    """The PyTorch cells of a d2l chapter: cells tagged `%%tab pytorch` or `all`, or untagged.
    Chapters in d2l's older markup tag cells with a `#@tab ...` first line instead, and there an
    untagged cell is MXNet's (the book's original framework), so it is left out."""
    text = md.read_text()
    cells = re.findall(r"```\{\.python \.input[^}]*\}\n(.*?)```", text, re.S)
    old_markup = re.search(r"^#@tab ", text, re.M) is not None
    out = []
    for cell in cells:
        lines = cell.splitlines()
        marker = next((m for m in ("%%tab", "#@tab") if lines and lines[0].startswith(m)), None)
        if marker:
            tabs = lines[0][len(marker):].replace(",", " ").split()
            if "pytorch" not in tabs and "all" not in tabs:
                continue
            lines = lines[1:]
        elif old_markup:
            continue
        # notebook magics, shell escapes and the tab chooser are not Python
        lines = [ln for ln in lines if not ln.lstrip().startswith(("%", "tab.", "!"))]
        out.append("\n".join(lines))
    return _TAB + "\n\n".join(out) + "\n"


_HELP = re.compile(r"^\s*[\w.*]+\?{1,2}\s*$")  # IPython's help syntax: `torch.*Tensor?`
_PY_CELL_MAGICS = ("%%time", "%%capture", "%%prun")  # cell magics whose body is Python


def _extract_ipynb(path: Path) -> str:
    """A notebook's code cells in order, as one script: IPython magics (`%...`), shell
    lines (`!...`) and help requests (`name?`) dropped, and whole cells under a cell magic
    that is not Python (`%%bash`). A cell's bare last expression (shown by Jupyter) is
    evaluated and discarded, which is what running it as a statement does."""
    nb = json.loads(path.read_text())
    cells = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        lines = (src if isinstance(src, str) else "".join(src)).splitlines()
        if lines and lines[0].startswith("%%") and not lines[0].startswith(_PY_CELL_MAGICS):
            continue  # %%bash, %%html...: the cell is not Python
        cells.append("\n".join(ln for ln in lines if not ln.lstrip().startswith(("%", "!"))
                               and not _HELP.match(ln)))
    return "\n\n".join(cells) + "\n"


def _extract_md_block(path: Path, block: int | tuple) -> str:
    """The `block`-th ```python code block of a markdown file (a README's usage example), or
    several blocks joined when `block` is a tuple."""
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(), re.S)
    if isinstance(block, tuple):  # an example that continues the one before it
        return "\n".join(blocks[b] for b in block)
    return blocks[block]


def _script_path(prog) -> str:
    """The file that runs (and that substitutions edit): a notebook's extracted .py, or a
    README example's."""
    if prog.kind == "ipynb":
        return str(Path(prog.script).with_suffix(".py"))
    if prog.kind == "md":
        return str(Path(prog.script).with_name(f"_compat_block{prog.block}.py"))
    return prog.script


def _environment(impl: str, tmp: Path, prog, seed: int, compile_models=False) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH", "PYTORCH"))}
    paths = [str(HERE / "stubs")]
    if impl == "ember":
        paths = [str(HERE / "shim"), str(ROOT)] + paths
    if prog.pythonpath:
        paths += [str(tmp / p) for p in prog.pythonpath]
    env.update({
        "PYTHONPATH": os.pathsep.join(paths),
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
        "NUMBA_NUM_THREADS": "1",
        "COMPAT_SEED": str(seed),
        "PYTHONHASHSEED": "0",
        # no network: any library that honours proxies fails fast instead of hanging
        "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
        "HF_HUB_OFFLINE": "1",
        # stubs/requests answers downloads of files a data generator wrote here
        "COMPAT_SERVE_DIR": str(tmp / prog.cwd / "_compat_serve"),
    })
    env.update(prog.env)
    if compile_models:  # shim/compat_compile.py
        env["COMPAT_COMPILE"] = "1"
    return env


def run_one(prog, mirrors: Path, impl: str, seed: int, verbose: int,
            compile_models=False) -> dict:
    src_dir = mirrors / prog.repo.replace("/", "+")
    with tempfile.TemporaryDirectory(prefix="compat-") as tmp_s:
        tmp = Path(tmp_s)
        # the program's repository files it imports come along; the rest of the repo does not
        for rel in prog.copy:
            s = src_dir / rel
            if not s.exists():
                return {"status": "MISSING", "metric": None, "error": f"{s} not found",
                        "seconds": 0.0}
            d = tmp / rel
            d.parent.mkdir(parents=True, exist_ok=True)
            if s.is_dir():
                shutil.copytree(s, d, dirs_exist_ok=True)
            else:
                shutil.copy2(s, d)
        # a dependency that lives in another corpus repository (a package the program imports
        # but that is not installed): "owner/name:path" is copied to <tmp>/<path>
        for dep in prog.also:
            dep_repo, rel = dep.split(":", 1)
            s = mirrors / dep_repo.replace("/", "+") / rel
            if not s.exists():
                return {"status": "MISSING", "metric": None, "error": f"{s} not found",
                        "seconds": 0.0}
            shutil.copytree(s, tmp / rel, dirs_exist_ok=True)
        if prog.kind == "ipynb":  # the notebook's code cells become the script
            nb = tmp / prog.script
            nb.with_suffix(".py").write_text(_extract_ipynb(nb))
        if prog.kind == "md":  # one usage example of a README becomes the script
            (tmp / _script_path(prog)).write_text(
                _extract_md_block(tmp / prog.script, prog.block))
        for old, new, *where in prog.subs:
            # (old, new) edits the script; (old, new, path) another copied file (a library
            # module of the repository, e.g. a hard-coded .cuda())
            rel = where[0] if where else _script_path(prog)
            target = tmp / rel
            text = target.read_text()
            if old not in text:
                return {"status": "FAIL", "metric": None, "seconds": 0.0,
                        "error": f"substitution target {old!r} not in {rel}"}
            target.write_text(text.replace(old, new))
        cwd = tmp / prog.cwd
        cwd.mkdir(parents=True, exist_ok=True)
        for gen in prog.data:
            getattr(data, gen)(cwd, seed)
        if prog.kind == "d2l":
            script = cwd / "_chapter.py"
            script.write_text(_extract_d2l(src_dir / prog.script) + prog.epilogue)
            cmd = [sys.executable, str(script)]
        elif prog.kind == "pytest":
            cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                   str(tmp / prog.script)] + prog.args
        else:
            script = tmp / _script_path(prog)
            if prog.epilogue:
                text = script.read_text() + "\n" + prog.epilogue
                script = script.with_name("_compat_" + script.name)
                script.write_text(text)
            cmd = [sys.executable, str(script)] + prog.args + prog.extra_args
        env = _environment(impl, tmp, prog, seed, compile_models)
        t0 = time.perf_counter()
        try:
            for pre in prog.pre:
                first = _run([sys.executable, str(tmp / pre[0])] + pre[1:], prog, cwd=cwd,
                             env=env)
                if first.returncode != 0:
                    raise _PreFailed(first.stderr or first.stdout)
            proc = _run(cmd, prog, cwd=cwd, env=env)
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
            if rc == -signal.SIGXCPU:
                err += f"\ntimeout: CPU time limit of {prog.timeout} s exceeded"
        except _PreFailed as exc:
            rc, out, err = 1, "", f"first step failed: {exc}"
        except subprocess.TimeoutExpired as exc:
            rc = -9
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            err = f"timeout: wall-clock cap of {prog.timeout * WALL_FACTOR} s exceeded"
        seconds = time.perf_counter() - t0
    metric = None
    hits = re.findall(prog.metric, out + "\n" + err, re.M) if prog.metric else []
    if hits:
        last = hits[-1]
        metric = float(last[0] if isinstance(last, tuple) else last)
    ok = rc == 0 and (prog.bar is None or (metric is not None and prog.meets(metric)))
    error = ""
    if rc != 0:
        lines = [ln for ln in (err or out).strip().splitlines() if ln.strip()]
        error = lines[-1] if lines else f"exit {rc}"
    elif not ok:
        error = f"metric {metric} misses bar {prog.bar_text()}"
    if verbose > 1 or verbose and not ok:
        print(out[-3000:], "\n---- stderr ----\n", err[-5000:], file=sys.stderr)
    return {"status": "PASS" if ok else "FAIL", "metric": metric, "error": error,
            "seconds": round(seconds, 1), "rc": rc}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", required=True, type=Path)
    ap.add_argument("--impl", choices=("torch", "ember"), default="ember")
    ap.add_argument("--only", default="*", help="glob over program names (comma-separated)")
    ap.add_argument("--seed", type=int, default=0,
                    help="seed of the generated data; also added to every seed the program "
                         "sets (stubs/compat_seedshift.py), for the spread behind a bar")
    ap.add_argument("--json", type=Path, help="append results to this JSON-lines file")
    ap.add_argument("--compile", action="store_true",
                    help="ember only: every outermost module call goes through ember.compile "
                         "(shim/compat_compile.py)")
    ap.add_argument("-v", "--verbose", action="count", default=0,
                    help="print a failing program's output (-vv: every program's)")
    args = ap.parse_args(argv)
    globs = args.only.split(",")
    progs = [p for p in corpus.PROGRAMS if any(fnmatch.fnmatch(p.name, g) for g in globs)]
    passed = 0
    for prog in progs:
        res = run_one(prog, args.mirrors, args.impl, args.seed, args.verbose,
                      args.compile and args.impl == "ember")
        passed += res["status"] == "PASS"
        metric = "-" if res["metric"] is None else f"{res['metric']:.4g}"
        print(f"{res['status']:4} {prog.name:44} {metric:>10} {res['seconds']:6.1f}s  "
              f"{res['error'][:160]}", flush=True)
        if args.json:
            with open(args.json, "a") as fh:
                fh.write(json.dumps({"name": prog.name, "impl": args.impl, "seed": args.seed,
                                     **res}) + "\n")
    print(f"{args.impl}: {passed}/{len(progs)} passed")
    return 0 if passed == len(progs) else 1


if __name__ == "__main__":
    sys.exit(main())
