"""benchmarks/conv_layers.py finds every convolution of a Table 1 model, with its count (the
timing itself is the script's business: no timings are asserted here)."""
from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "benchmarks")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import conv_layers  # noqa: E402


def test_resnet50_layers_are_all_53_convolutions():
    found = conv_layers._configs("resnet50")
    assert sum(found.values()) == 53  # stem + 16 bottlenecks x 3 + 4 downsampling 1x1
    stem = ((8, 3, 64, 64), 64, (7, 7), (2, 2), (3, 3), 1, False)
    assert found[stem] == 1
    # the four 3x3 convolutions of stage 3 after its first block run on 4x4 maps
    assert found[((8, 256, 4, 4), 256, (3, 3), (1, 1), (1, 1), 1, False)] == 5


def test_mobilenet_v2_layers_count_the_depthwise_ones():
    found = conv_layers._configs("mobilenet_v2")
    assert sum(found.values()) == 52  # stem, 17 blocks (the first without expansion), head
    depthwise = sum(n for key, n in found.items() if key[5] > 1)
    assert depthwise == 17
    assert all(key[5] == key[0][1] for key in found if key[5] > 1)  # one channel per group


def test_time_layers_runs_forward_and_backward_of_each_config():
    import ember
    configs = [(((2, 4, 6, 6), 4, (3, 3), (1, 1), (1, 1), 4, False), 2),
               (((2, 3, 8, 8), 5, (3, 3), (2, 2), (1, 1), 1, True), 1)]
    rows = conv_layers._time_layers(ember, configs, reps=1, cpu=True)
    assert [(key, n) for key, n, _, _ in rows] == [
        ("(2, 4, 6, 6) -> 4, k3x3 s1 p1 g4", 2), ("(2, 3, 8, 8) -> 5, k3x3 s2 p1", 1)]
    assert all(fwd >= 0 and both >= 0 for _, _, fwd, both in rows)
