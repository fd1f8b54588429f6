"""GPT-S generation (generate.py's workload, ember only) with the no-record fast paths of NOTE
[Unwatched no-grad views] off and on, in one process: paired A/B of the nineteenth session's
helper "gen".

    python benchmarks/generate_ab.py [--samples 10] [--new 64]

"off" makes every caller's ``unwatched()`` answer False, so view/reshape/permute/transpose/
unbind, cat, layer_norm and small linear products take the Op path they took before (their only
other branch). Samples alternate off/on (who goes first alternates), each after a pause and
inside table1.py's quiet-core probe gate, like generate.py's. Prints each side's median ms, the
paired median of off/on (> 1: the fast paths are quicker) and whether both sides produced the
same tokens.
"""
from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np
from generate import _quiet_line, _timed, build, common_args, runner
from table1 import _calibrate, _retaken

_USERS = ("ember.ops.views", "ember.ops.join", "ember.nn.functional._norm",
          "ember.nn.functional._linear")


def main(argv=None):
    args = common_args(argparse.ArgumentParser(description=__doc__.split("\n")[0])).parse_args(
        argv)
    import ember
    from ember.ops import registry

    def fast(on):
        for name in _USERS:
            sys.modules[name].unwatched = registry.unwatched if on else (lambda: False)

    prompt = np.random.default_rng(0).integers(0, 1024, (1, args.prompt)).astype(np.int64)
    run = runner(ember, build(ember), prompt, args.new, True)
    tokens = {}
    for on in (False, True):
        fast(on)
        tokens[on] = run().numpy()
        for _ in range(args.warmup):
            run()
    _calibrate()
    times = {False: [], True: []}
    disturbed = 0
    for s in range(args.samples):
        for on in ((False, True) if s % 2 == 0 else (True, False)):
            fast(on)
            t, bad = _timed(run, True)
            times[on].append(t)
            disturbed += bad
    fast(True)
    med = {k: 1e3 * statistics.median(v) for k, v in times.items()}
    paired = statistics.median(a / b for a, b in zip(times[False], times[True], strict=True))
    print(f"GPT-S generation (ember), batch 1, prompt {args.prompt}, {args.new} new tokens, KV "
          f"cache, {args.samples} paired samples; same tokens off/on: "
          f"{np.array_equal(tokens[False], tokens[True])}")
    print(f"  fast paths off {med[False]:.1f} ms, on {med[True]:.1f} ms; paired off/on "
          f"{paired:.3f}")
    print("  " + _quiet_line(_retaken[0], disturbed, True))


if __name__ == "__main__":
    main()
