"""gpt-fast's decode step (pytorch-labs/gpt-fast's model.py from the compatibility corpus),
eager and compiled, under ember and under torch, one configuration per process.

    python benchmarks/gpt_fast_decode.py --mirrors DIR [--steps 40] [--rounds 2]

DIR is the corpus mirror directory (tools/compat/fetch_mirrors.sh); the model is its model.py
in the stories15M configuration (6 layers, dim 288, vocab 32000) with random weights, batch 1,
a KV cache of 128 positions, and gpt-fast's sampling (temperature 0.8, top-k 200, the
exponential-race multinomial). Compiled means ``torch.compile(decode_one_token,
mode="reduce-overhead", fullgraph=True)`` as gpt-fast's generate.py does. Each configuration
runs in a fresh process (ember through the corpus's torch shim); reported: the median of the
step times after the first five.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_REPO = "pytorch-labs+gpt-fast"


def _child(model_dir, compiled, steps):
    sys.path.insert(0, model_dir)
    import torch
    from model import ModelArgs, Transformer  # gpt-fast's model.py

    torch.manual_seed(0)
    model = Transformer(ModelArgs(block_size=256, n_layer=6, n_head=6, dim=288,
                                  vocab_size=32000))
    model.setup_caches(1, 128)
    model.eval()

    def decode_one_token(model, x, input_pos, temperature=0.8, top_k=200):
        logits = model(x, input_pos)[:, -1] / temperature
        v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
        logits = torch.where(logits < v.select(-1, -1).unsqueeze(-1), -float("inf"), logits)
        probs = torch.nn.functional.softmax(logits, dim=-1)
        q = torch.empty_like(probs).exponential_(1)
        return torch.argmax(probs / q, dim=-1, keepdim=True).to(dtype=torch.int)

    step = torch.compile(decode_one_token, mode="reduce-overhead", fullgraph=True) \
        if compiled else decode_one_token
    x = torch.tensor([[1]], dtype=torch.int)
    times = []
    with torch.no_grad():
        for i in range(steps):
            t0 = time.perf_counter()
            x = step(model, x.view(1, -1), torch.tensor([i]))
            times.append(time.perf_counter() - t0)
    print(statistics.median(times[5:]) * 1e3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", required=True, help="the corpus mirror directory")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    model_dir = str(Path(args.mirrors) / _REPO)
    if args.child:
        _child(model_dir, args.child[1] == "compiled", args.steps)
        return
    if not Path(model_dir, "model.py").exists():
        sys.exit(f"gpt_fast_decode: no {_REPO}/model.py under {args.mirrors}")
    print(f"gpt-fast decode step, stories15M configuration, batch 1, cache 128, {args.steps} "
          f"steps; load average {os.getloadavg()[0]:.2f}")
    results = {}
    for _ in range(args.rounds):
        for impl in ("ember", "torch"):
            for mode in ("eager", "compiled"):
                env = dict(os.environ)
                if impl == "ember":
                    env["PYTHONPATH"] = os.pathsep.join(
                        [str(ROOT / "tools" / "compat" / "shim"), str(ROOT)])
                out = subprocess.run([sys.executable, __file__, "--mirrors", args.mirrors,
                                      "--steps", str(args.steps), "--child", impl, mode],
                                     env=env, capture_output=True, text=True, check=True)
                results.setdefault((impl, mode), []).append(float(out.stdout.split()[-1]))
    for (impl, mode), ms in results.items():
        print(f"  {impl:6s} {mode:9s} median {statistics.median(ms):7.2f} ms a step  "
              f"(per process: {', '.join(f'{m:.2f}' for m in ms)})")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
