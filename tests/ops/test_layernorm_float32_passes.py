"""Layer norm's elementwise passes in the input's dtype (ember/ops/_kernels/norm.py): float32
outputs stay within float32 rounding of a float64 reference, also for rows whose mean is far
from 0 next to their spread (the mean is subtracted as a float32 pair); gradients too for
centred rows."""

import numpy as np
import pytest

from ember.ops._kernels import norm as knorm


def _reference(x, w, b, g, eps=1e-5):
    x, w, b, g = (a.astype(np.float64) for a in (x, w, b, g))
    mean = x.mean(1, keepdims=True)
    invstd = 1 / np.sqrt(x.var(1, keepdims=True) + eps)
    xhat = (x - mean) * invstd
    gxhat = g * w
    gx = invstd * (gxhat - gxhat.mean(1, keepdims=True)
                   - xhat * (gxhat * xhat).mean(1, keepdims=True))
    return xhat * w + b, gx, (g * xhat).sum(0), g.sum(0)


@pytest.mark.parametrize("offset", [0.0, 1e3, 1e4, 3e5])
def test_layernorm_float32_within_rounding_of_float64(rng, offset):
    x = (offset + rng.standard_normal((64, 256))).astype(np.float32)
    w, b = (rng.standard_normal(256).astype(np.float32) for _ in range(2))
    g = rng.standard_normal((64, 256)).astype(np.float32)
    y, mean, invstd = knorm.layernorm_forward(x, w, b, 1e-5)
    gx, gw, gb = knorm.layernorm_backward(g, x, w, mean, invstd)
    ref_y, ref_gx, ref_gw, ref_gb = _reference(x, w, b, g)
    assert y.dtype == gx.dtype == np.float32
    # |y| is a few units: float32's ulp there is ~5e-7; a float32 mean rounded once would be
    # off by up to ulp(3e5) / 2 = 0.016 in every deviation
    np.testing.assert_allclose(y, ref_y, rtol=0, atol=3e-6)
    if offset == 0.0:
        # gradients use the saved float32 mean (as torch's do), which limits them for rows far
        # from 0: checked where it does not
        np.testing.assert_allclose(gx, ref_gx, rtol=0, atol=2e-5)
        np.testing.assert_allclose(gw, ref_gw, rtol=1e-5, atol=2e-5)
        np.testing.assert_allclose(gb, ref_gb, rtol=1e-5, atol=2e-5)
