"""GPT-S autoregressive generation, ember vs PyTorch eager in one run (issue 21's inference row).

    python benchmarks/generate.py [--samples N] [--new 64] [--prompt 16] [--no-cache]

Both libraries run the SAME model and decoding source (examples/models/table1.py: the GPT-S of
SPEC.md section 7 and ``gpt_generate``) with identical weights copied from the torch model:
batch 1, a 16-token random prompt, 64 new tokens by greedy argmax under no_grad, with a key/value
cache (``--no-cache`` reruns the whole sequence every token, in both). One sample = one full
generation (prefill included); samples alternate between the libraries (who goes first
alternates), each after a short pause so the other library's spinning worker threads park.
tokens/s = new tokens / median seconds per generation; "ratio" = ember's tokens/s over torch's;
"paired" = the median over samples of torch_s / ember_s, sample s of each taken back to back.
Both libraries use the machine's 2 cores. On a busy machine the figures are smoke numbers.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import ember  # noqa: E402
from examples.models.table1 import _gpt_module, gpt_generate  # noqa: E402

SETTLE = 0.25  # seconds; longer than either library's worker-thread spin after its last op


def build(lib):
    lib.manual_seed(0)
    model = _gpt_module(lib)()
    model.eval()
    return model


def copy_weights(src, dst):
    """torch module -> ember module through NumPy (the tied weight is one entry twice)."""
    sd = {k: v.detach().numpy().copy() for k, v in src.state_dict().items()}
    dst.load_state_dict({k: ember.from_numpy(v) for k, v in sd.items()})


def runner(lib, model, prompt, new, use_cache):
    x = lib.from_numpy(prompt.copy())

    def run():
        with lib.no_grad():
            return gpt_generate(lib, model, x, new, use_cache)

    return run


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--prompt", type=int, default=16)
    ap.add_argument("--no-cache", action="store_true")
    args = ap.parse_args(argv)
    import torch
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
    times = {k: [] for k in runs}
    order = list(runs)
    for s in range(args.samples):
        for k in (order if s % 2 == 0 else order[::-1]):
            time.sleep(SETTLE)
            t0 = time.perf_counter()
            runs[k]()
            times[k].append(time.perf_counter() - t0)
    tps = {k: args.new / statistics.median(v) for k, v in times.items()}
    paired = statistics.median(t / e for t, e in zip(times["torch"], times["ember"], strict=True))
    mode = "KV cache" if use_cache else "no cache"
    print(f"GPT-S generation, batch 1, prompt {args.prompt}, {args.new} new tokens, greedy, "
          f"{mode}, {args.samples} paired samples; same tokens in both: {same}")
    for k in runs:
        print(f"  {k:6s} {tps[k]:8.1f} tok/s  (median {1e3 * statistics.median(times[k]):.1f} "
              f"ms, min {1e3 * min(times[k]):.1f}, max {1e3 * max(times[k]):.1f})")
    print(f"  ratio (ember/torch tok/s) {tps['ember'] / tps['torch']:.2f}   paired {paired:.2f}")
    return {"tok_s": tps, "ratio": tps["ember"] / tps["torch"], "paired": paired, "same": same}


if __name__ == "__main__":
    main()
