"""Attention's plane kernels in parts on OpenBLAS's worker (user "attention" of
ember/_blas_parts.py, NOTE [Serial plane kernels] in ember/ops/_kernels/attention.py): each part
runs whole planes exactly as the serial kernel does, so the results must be the serial ones bit
for bit - in every one of many repeated calls, since a part that reads memory another part may
reuse (NOTE [Scratch arrays outlive their addresses]) only shows up now and then."""

import os
import platform
import subprocess
import sys

import numpy as np
import pytest
from _attention_checks import qkv_arrays

from ember import _blas_parts
from ember.ops._kernels import attention as katt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def counted_parts(pool_off, blas_parts_on, monkeypatch):
    """Pool off, the serial plane kernels on, the parts on; counts the calls run in parts."""
    monkeypatch.setattr(katt, "_planes_on", [True])
    calls = [0]
    inner = _blas_parts.run_ranges

    def counting(fn, n):
        calls[0] += 1
        return inner(fn, n)

    monkeypatch.setattr(_blas_parts, "run_ranges", counting)
    return calls


def _run(q, k, v, g, scale, causal):
    out, p = katt.attention_forward(q, k, v, scale, causal)
    out, p = out.copy(), p.copy()  # the buffers are reused by the next call
    return [out, p] + [a.copy() for a in katt.attention_backward(g, q, k, v, p, scale, causal)]


def _serial_then_parts(q, k, v, g, scale, causal, rounds):
    """The serial results, then `rounds` calls in parts, each compared bit for bit."""
    _blas_parts.set_enabled(False)
    want = _run(q, k, v, g, scale, causal)
    _blas_parts.set_enabled(True)
    for r in range(rounds):
        got = _run(q, k, v, g, scale, causal)
        for name, a, b in zip(("out", "p", "dq", "dk", "dv"), got, want, strict=True):
            assert np.array_equal(a, b), f"round {r}: {name} differs from the serial kernel"


def test_parts_equal_serial_in_every_round(rng, counted_parts):
    # the case that showed the freed dS scratch: two planes, one per part, odd length, float64
    q, k, v, g = (rng.standard_normal((2, 70, 4)) for _ in range(4))
    _serial_then_parts(q, k, v, g, 0.5, True, rounds=300)
    assert counted_parts[0] == 2 * 300


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("causal, n_query, n_key", [(True, 128, 128), (True, 37, 37),
                                                    (False, 33, 33), (True, 70, 100),
                                                    (False, 21, 9)])
def test_parts_equal_serial_strided_and_odd(rng, counted_parts, dtype, causal, n_query, n_key):
    # L == S: heads of one permuted projection (strided, not contiguous); else separate arrays
    q, k, v = qkv_arrays(rng, dtype, n_query, n_key, batch=3, heads=3, n_embed=16)
    g = rng.standard_normal(q.shape).astype(dtype)
    _serial_then_parts(q, k, v, g, 0.25, causal, rounds=20)
    assert counted_parts[0] == 2 * 20


_PERTURBED = """
import numpy as np
from ember.ops._kernels import attention as katt
rng = np.random.default_rng(0)
for lead, n, causal in (((2,), 70, True), ((2, 3), 33, False)):
    q, k, v, g = (rng.standard_normal(lead + (n, 4)) for _ in range(4))
    results = []
    for planes in (True, False):  # the serial plane kernels, then the NumPy path
        katt._planes_on[0] = planes
        out, p = katt.attention_forward(q, k, v, 0.5, causal)
        out, p = out.copy(), p.copy()
        grads = katt.attention_backward(g, q, k, v, p, 0.5, causal)
        results.append([out, p] + [a.copy() for a in grads])
    for name, a, b in zip(("out", "p", "dq", "dk", "dv"), *results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=name)
print("same")
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="MALLOC_PERTURB_ is glibc's")
def test_plane_kernels_never_read_freed_scratch():
    # glibc overwrites every freed block when MALLOC_PERTURB_ is set, so a plane kernel that
    # reads a scratch array after numba freed it gets garbage on every call, not now and then
    # (the dS scratch of the backward did: NOTE [Scratch arrays outlive their addresses])
    env = dict(os.environ, MALLOC_PERTURB_="165", EMBER_ONE_POOL="0", EMBER_BLAS_PARTS="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    res = subprocess.run([sys.executable, "-c", _PERTURBED], env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0 and res.stdout.strip() == "same", res.stderr[-2000:]
