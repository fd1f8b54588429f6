"""GPT-S generation (generate.py's workload, ember only) with the no-record fast paths of NOTE
[Unwatched no-grad views] off and on, in one process: paired A/B of the nineteenth session's
helper "gen".

    python benchmarks/generate_ab.py [--samples 10] [--new 64]

"off" makes every caller's ``unwatched()`` answer False, so view/reshape/permute/transpose/
unbind, cat, layer_norm, small linear products, same-shape add/mul and attention take the Op
path they took before (their only other branch), and small_linear's one-row form is off.
``--switch new`` switches only the twenty-first session's paths (same-shape add/mul: NOTE
[Unrecorded same-shape ops]; attention; the one-row product) and leaves the older ones on;
``--switch gemv1`` only the one-row product's single BLAS thread (NOTE [One thread for a one-row
product] in ember/ops/nn/linear.py; off by default, "on" turns it on); ``--switch parts`` only
the one-row products in parts on OpenBLAS's threads (NOTE [One-row products in parts] in
ember/ops/_kernels/gemv.py; on by default, "off" runs them as np.dot). ``--switch all`` (the
default) switches the no-record paths and the one-row form, and leaves the thread setting as it
is.
Samples alternate off/on (who goes first alternates), each after a pause and
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

_OLD = ("ember.ops.views", "ember.ops.join", "ember.nn.functional._norm",
        "ember.nn.functional._linear")
_NEW = ("ember.ops.elementwise", "ember.nn.functional._attention")


def main(argv=None):
    ap = common_args(argparse.ArgumentParser(description=__doc__.split("\n")[0]))
    ap.add_argument("--switch", choices=("all", "new", "gemv1", "parts"), default="all",
                    help="what off turns off (see the module's doc)")
    args = ap.parse_args(argv)
    import ember
    from ember.ops import registry
    from ember.ops.nn import linear

    users = {"all": _OLD + _NEW, "new": _NEW, "gemv1": (), "parts": ()}[args.switch]

    def fast(on):
        for name in users:
            sys.modules[name].unwatched = registry.unwatched if on else (lambda: False)
        if args.switch == "gemv1":
            linear._GEMV_ONE_THREAD[0] = on
        elif args.switch == "parts":
            linear._GEMV_PARTS[0] = on
        else:
            linear._ONE_ROW[0] = on

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
          f"cache, {args.samples} paired samples, switch {args.switch}; "
          f"same tokens off/on: "
          f"{np.array_equal(tokens[False], tokens[True])}")
    print(f"  fast paths off {med[False]:.1f} ms, on {med[True]:.1f} ms; paired off/on "
          f"{paired:.3f}")
    print("  " + _quiet_line(_retaken[0], disturbed, True))


if __name__ == "__main__":
    main()
