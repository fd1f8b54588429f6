"""float16/bfloat16 reductions round like torch's: accumulated in float32 and rounded to the half
type once (NOTE [Half-precision accumulation] in ember/ops/reduce.py). The reduction sweep found
bfloat16 sums 2 ulps from torch's; NumPy accumulated bfloat16 in bfloat16 and float16 in float16
along every axis but a contiguous last one."""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

# long rows, so that a half-type accumulator drifts by many ulps (a bfloat16 sum of 300 values
# of ~1 is already past 256, where bfloat16's spacing is 2)
VALUES = np.round(np.random.default_rng(3).standard_normal((4, 300)), 2)

CALLS = [
    ("sum", lambda L, x: x.sum()),
    ("sum dim 0", lambda L, x: x.sum(0)),
    ("sum dim 1", lambda L, x: x.sum(1)),
    ("sum of a transpose", lambda L, x: x.t().sum(1)),
    ("nansum", lambda L, x: L.nansum(x, 1)),
    ("mean", lambda L, x: x.mean()),
    ("mean dim 0", lambda L, x: x.mean(0)),
    ("nanmean", lambda L, x: L.nanmean(x)),
    ("cumsum", lambda L, x: x.cumsum(1)),
    ("cumsum dim 0", lambda L, x: x.cumsum(0)),
    ("cumprod", lambda L, x: (1 + x / 100).cumprod(1)),
    ("logsumexp", lambda L, x: L.logsumexp(x, 1)),
    ("logcumsumexp", lambda L, x: L.logcumsumexp(x, 1)),
    ("vector_norm", lambda L, x: L.linalg.vector_norm(x)),
    ("vector_norm ord 3 dim 1", lambda L, x: L.linalg.vector_norm(x, 3, 1)),
    ("sum float32 with dtype=", lambda L, x: x.float().sum(0, dtype=x.dtype)),
]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("what, call", CALLS, ids=[w for w, _ in CALLS])
def test_half_reduction_rounds_as_torch(what, call, dtype):
    got = []
    for lib in (ember, torch):
        x = lib.tensor(VALUES).to(getattr(lib, dtype))
        y = call(lib, x)
        assert y.dtype == getattr(lib, dtype)
        got.append(y.float().numpy())
    # every element equal: the float32 sums differ in their last float32 bits at most, and
    # none of these lands on a half-type rounding boundary
    np.testing.assert_array_equal(*got)


def test_half_type_counts_grow_past_the_accumulator_limit():
    # a bfloat16 accumulator stops at 256 (256 + 1 rounds back to 256), a float16 one at 2048
    ones = ember.ones(1000, dtype=ember.bfloat16)
    assert ones.sum().item() == 1000.0
    assert ones.cumsum(0)[-1].item() == 1000.0
    assert ember.ones(1000, 3, dtype=ember.bfloat16).sum(0).tolist() == [1000.0] * 3
    assert ember.ones(3000, 2, dtype=ember.float16).sum(0).tolist() == [3000.0, 3000.0]
    assert ember.ones(3000, 2, dtype=ember.float16).mean(0).tolist() == [1.0, 1.0]
