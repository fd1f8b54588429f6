"""torch.nn.attention's SDPBackend and sdpa_kernel (x-transformers' Attend enters
``sdpa_kernel([...])`` around every attention call)."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.backends import cuda
from ember.nn.attention import SDPBackend, sdpa_kernel

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def test_backend_members_match_torch():
    import torch.nn.attention as A
    want = {name: int(member.value) for name, member in A.SDPBackend.__members__.items()}
    assert {m.name: int(m) for m in SDPBackend} == want


def test_sdpa_kernel_sets_the_switches_and_restores_them():
    before = (cuda.flash_sdp_enabled(), cuda.math_sdp_enabled(),
              cuda.mem_efficient_sdp_enabled(), cuda.cudnn_sdp_enabled())
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
        assert cuda.flash_sdp_enabled() and cuda.math_sdp_enabled()
        assert not cuda.mem_efficient_sdp_enabled() and not cuda.cudnn_sdp_enabled()
        with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
            assert cuda.mem_efficient_sdp_enabled() and not cuda.math_sdp_enabled()
        assert cuda.math_sdp_enabled()
    assert (cuda.flash_sdp_enabled(), cuda.math_sdp_enabled(),
            cuda.mem_efficient_sdp_enabled(), cuda.cudnn_sdp_enabled()) == before


def test_attention_inside_sdpa_kernel_matches_torch():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 5, 4)) for _ in range(3))
    with sdpa_kernel([SDPBackend.MATH]):
        got = F.scaled_dot_product_attention(*map(ember.tensor, (q, k, v)), is_causal=True)
    import torch.nn.attention as A
    with A.sdpa_kernel([A.SDPBackend.MATH]):
        want = torch.nn.functional.scaled_dot_product_attention(
            *map(torch.tensor, (q, k, v)), is_causal=True)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_sdpa_kernel_rejects_non_backends():
    with pytest.raises(TypeError, match="sdpa_kernel: backends must be SDPBackend members"):
        with sdpa_kernel(["math"]):
            pass
