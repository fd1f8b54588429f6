"""GPT-S autoregressive generation, ember vs PyTorch eager in one run (issue 21's inference row).

    python benchmarks/generate.py [--samples N] [--new 64] [--prompt 16] [--no-cache]
    python benchmarks/generate.py --per-process 3 [--samples N]

Both libraries run the SAME model and decoding source (examples/models/table1.py: the GPT-S of
SPEC.md section 7 and ``gpt_generate``) with identical weights copied from the torch model:
batch 1, a 16-token random prompt, 64 new tokens by greedy argmax under no_grad, with a key/value
cache (``--no-cache`` reruns the whole sequence every token, in both). One sample = one full
generation (prefill included); samples alternate between the libraries (who goes first
alternates), each after a short pause so the other library's spinning worker threads park.
tokens/s = new tokens / median seconds per generation; "ratio" = ember's tokens/s over torch's;
"paired" = the median over samples of torch_s / ember_s, sample s of each taken back to back.
Both libraries use the machine's 2 cores. On a busy machine the figures are smoke numbers.

``--per-process P``: the protocol of table1.py's headline (NOTE [One library per process]
there): P pairs of fresh processes that each import ONE library, alternating (ember, torch,
torch, ember, ...); each process warms up, times ``--samples`` generations and reports their
median. ratio = median over processes of torch's time over median of ember's; "paired" = the
median of torch/ember over the back-to-back process pairs. Each process builds the model with
its own library's initialisation (the weights do not change the work: greedy decoding runs the
full 64 tokens either way), so the same-tokens check belongs to the in-process mode.

Every timed generation is bracketed by table1.py's quiet-core probe (NOTE [Quiet cores] there: a
fixed two-thread SGEMM; a generation with a slow probe before or after it is taken again, up to
its QUIET_RETRIES times); the output says how many were taken again. ``--no-quiet`` turns it off.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(1, os.path.dirname(os.path.abspath(__file__)))

from table1 import (  # noqa: E402  (benchmarks/table1.py: NOTE [Quiet cores])
    _PROBE,
    QUIET_RETRIES,
    _best_probe,
    _calibrate,
    _quietly,
    _retaken,
)

from examples.models.table1 import _gpt_module, gpt_generate  # noqa: E402

# ember is imported where it is used: a --per-process torch child imports torch only

SETTLE = 0.25  # seconds; longer than either library's worker-thread spin after its last op


def build(lib):
    lib.manual_seed(0)
    model = _gpt_module(lib)()
    model.eval()
    return model


def copy_weights(src, dst):
    """torch module -> ember module through NumPy (the tied weight is one entry twice)."""
    import ember
    sd = {k: v.detach().numpy().copy() for k, v in src.state_dict().items()}
    dst.load_state_dict({k: ember.from_numpy(v) for k, v in sd.items()})


def _timed(run, quiet):
    """(seconds of one run() after a pause, disturbed?): taken again after a slow probe."""
    def measure():
        t0 = time.perf_counter()
        run()
        return time.perf_counter() - t0

    return _quietly(measure, settle=SETTLE, quiet=quiet)


def _quiet_line(retaken, disturbed, quiet):
    if not quiet:
        return "quiet check (table1.py's NOTE [Quiet cores]): off"
    gflops = 2 * _PROBE.shape[0] ** 3 / _best_probe[0] / 1e9 if _best_probe[0] < float("inf") \
        else float("nan")
    return (f"quiet check (table1.py's NOTE [Quiet cores]): best probe {gflops:.0f} GFLOP/s; "
            f"{retaken} generations taken again after a slow probe; {disturbed} kept after "
            f"{QUIET_RETRIES} retries")


def runner(lib, model, prompt, new, use_cache):
    x = lib.from_numpy(prompt.copy())

    def run():
        with lib.no_grad():
            return gpt_generate(lib, model, x, new, use_cache)

    return run


def _one_library(args):
    """Child of --per-process: time one library's generations; print the median seconds."""
    if args._lib == "torch":
        import torch as lib
        lib.set_num_threads(2)
    else:
        import ember as lib
    prompt = np.random.default_rng(0).integers(0, 1024, (1, args.prompt)).astype(np.int64)
    run = runner(lib, build(lib), prompt, args.new, not args.no_cache)
    for _ in range(args.warmup + 1):
        run()
    if not args.no_quiet:
        _calibrate()
    times, disturbed = [], 0
    for _ in range(args.samples):
        t, bad = _timed(run, not args.no_quiet)
        times.append(t)
        disturbed += bad
    print(json.dumps({"lib": args._lib, "median_s": statistics.median(times),
                      "retaken": _retaken[0], "disturbed": disturbed,
                      "best_probe_s": _best_probe[0]}))


def _per_process(args):
    cmd = [sys.executable, os.path.abspath(__file__), "--samples", str(args.samples),
           "--warmup", str(args.warmup), "--new", str(args.new), "--prompt", str(args.prompt)]
    cmd += ["--no-cache"] if args.no_cache else []
    cmd += ["--no-quiet"] if args.no_quiet else []
    med = {"ember": [], "torch": []}
    retaken = disturbed = 0
    pairs = []
    for p in range(args.per_process):
        got = {}
        for lib in (("ember", "torch") if p % 2 == 0 else ("torch", "ember")):
            out = subprocess.run(cmd + ["--_lib", lib], capture_output=True, text=True,
                                 timeout=900, cwd=ROOT)
            if out.returncode:
                raise RuntimeError(f"generate.py --_lib {lib} failed:\n{out.stderr[-2000:]}")
            res = json.loads(out.stdout.strip().splitlines()[-1])
            got[lib] = res["median_s"]
            med[lib].append(got[lib])
            retaken += res["retaken"]
            disturbed += res["disturbed"]
            _best_probe[0] = min(_best_probe[0], res["best_probe_s"])
        pairs.append(got["torch"] / got["ember"])
    tps = {k: args.new / statistics.median(v) for k, v in med.items()}
    mode = "KV cache" if not args.no_cache else "no cache"
    print(f"GPT-S generation, batch 1, prompt {args.prompt}, {args.new} new tokens, greedy, "
          f"{mode}; one library per process, {args.per_process} process pairs x "
          f"{args.samples} samples")
    for k, v in med.items():
        print(f"  {k:6s} {tps[k]:8.1f} tok/s  (per-process medians "
              f"{', '.join(f'{1e3 * x:.1f}' for x in v)} ms)")
    print(f"  ratio (ember/torch tok/s) {tps['ember'] / tps['torch']:.2f}   paired "
          f"{statistics.median(pairs):.2f} (per pair {', '.join(f'{r:.2f}' for r in pairs)})")
    print("  " + _quiet_line(retaken, disturbed, not args.no_quiet))
    return {"tok_s": tps, "ratio": tps["ember"] / tps["torch"],
            "paired": statistics.median(pairs), "retaken": retaken, "disturbed": disturbed}


def common_args(ap):
    """The workload's options (also generate_ab.py's)."""
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--prompt", type=int, default=16)
    return ap


def main(argv=None):
    ap = common_args(argparse.ArgumentParser(description=__doc__.split("\n")[0]))
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--no-quiet", action="store_true",
                    help="no quiet-core probe around the timed generations")
    ap.add_argument("--per-process", type=int, default=0, metavar="P",
                    help="P pairs of fresh one-library processes (the headline protocol)")
    ap.add_argument("--_lib", choices=("ember", "torch"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._lib:
        return _one_library(args)
    if args.per_process:
        return _per_process(args)
    import torch

    import ember
    torch.set_num_threads(2)
    prompt = np.random.default_rng(0).integers(0, 1024, (1, args.prompt)).astype(np.int64)
    t_model, e_model = build(torch), build(ember)
    copy_weights(t_model, e_model)
    use_cache = not args.no_cache
    runs = {"ember": runner(ember, e_model, prompt, args.new, use_cache),
            "torch": runner(torch, t_model, prompt, args.new, use_cache)}
    out = {k: fn() for k, fn in runs.items()}
    same = np.array_equal(out["ember"].numpy(), out["torch"].numpy())
    for fn in runs.values():
        for _ in range(args.warmup):
            fn()
    if not args.no_quiet:
        _calibrate()
    times = {k: [] for k in runs}
    order = list(runs)
    disturbed = 0
    for s in range(args.samples):
        for k in (order if s % 2 == 0 else order[::-1]):
            t, bad = _timed(runs[k], not args.no_quiet)
            times[k].append(t)
            disturbed += bad
    tps = {k: args.new / statistics.median(v) for k, v in times.items()}
    paired = statistics.median(t / e for t, e in zip(times["torch"], times["ember"], strict=True))
    mode = "KV cache" if use_cache else "no cache"
    print(f"GPT-S generation, batch 1, prompt {args.prompt}, {args.new} new tokens, greedy, "
          f"{mode}, {args.samples} paired samples; same tokens in both: {same}")
    for k in runs:
        print(f"  {k:6s} {tps[k]:8.1f} tok/s  (median {1e3 * statistics.median(times[k]):.1f} "
              f"ms, min {1e3 * min(times[k]):.1f}, max {1e3 * max(times[k]):.1f})")
    print(f"  ratio (ember/torch tok/s) {tps['ember'] / tps['torch']:.2f}   paired {paired:.2f}")
    print("  " + _quiet_line(_retaken[0], disturbed, not args.no_quiet))
    return {"tok_s": tps, "ratio": tps["ember"] / tps["torch"], "paired": paired, "same": same,
            "retaken": _retaken[0], "disturbed": disturbed}


if __name__ == "__main__":
    main()
