"""Fused attention with the kernel threads on (ember.set_num_threads / EMBER_KERNEL_THREADS=2):
one hand-off per forward and per backward, each part running all products and softmax rows of
its batch entries (ember/ops/_kernels/attention.py `_over_batch`); values as on one thread."""

import numpy as np
import pytest

import ember
from ember import _blas_parts, _kernel_threads, _threads
from ember.ops._kernels import attention as katt

# these tests are about the pool-off modes the one pool replaces (NOTE [One pool]), with the
# parts on OpenBLAS's worker off (they take the planes first: test_attention_blas_parts.py)
pytestmark = pytest.mark.usefixtures("pool_off")


@pytest.fixture(autouse=True)
def _blas_parts_off():
    _blas_parts.set_enabled(False)
    yield
    _blas_parts.set_enabled(None)


def _grads(arrays, grad, is_causal):
    xs = [ember.tensor(a, requires_grad=True) for a in arrays]
    out = ember.nn.functional.scaled_dot_product_attention(*xs, is_causal=is_causal)
    out.backward(ember.tensor(grad))
    return [out.detach().numpy()] + [x.grad.numpy() for x in xs]


@pytest.mark.parametrize("lead", [(4, 2), (1, 3), (1, 1, 5), (3,), ()])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("planes", [False, True])
def test_parts_on_the_kernel_threads_give_the_one_thread_numbers(rng, monkeypatch, lead,
                                                                 is_causal, planes):
    # planes: the serial plane kernels (NOTE [Serial plane kernels]); else the NumPy path
    monkeypatch.setattr(katt, "_planes_on", [planes])
    arrays = [rng.standard_normal(lead + (70, 8)).astype(np.float32) for _ in range(3)]
    grad = rng.standard_normal(lead + (70, 8)).astype(np.float32)
    monkeypatch.setattr(_threads, "_requested", [1])
    one = _grads(arrays, grad, is_causal)
    calls = []
    original = katt.blas_parallel_range
    monkeypatch.setattr(katt, "blas_parallel_range",
                        lambda fn, n, grain: calls.append(n) or original(fn, n, grain))
    monkeypatch.setattr(_threads, "_requested", [2])
    two = _grads(arrays, grad, is_causal)
    # the NumPy path splits the first axis of size >= 2 with only size-1 axes before it, the
    # plane kernels all the planes: once forward, once backward; no such axis or one plane:
    # one call on the calling thread
    axis = next((i for i, n in enumerate(lead) if n != 1), None)
    split = int(np.prod(lead)) if planes else (None if axis is None else lead[axis])
    expected = [] if axis is None else [split] * 2
    assert calls == expected
    for a, b in zip(one, two, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_kernel_pool_restores_openblas_threads(rng, monkeypatch):
    funcs = _kernel_threads._openblas()
    if not funcs:
        pytest.skip("numpy's OpenBLAS not found by threadpoolctl: nothing is set or restored")
    get, _ = funcs
    before = get()
    monkeypatch.setattr(_threads, "_requested", [2])
    arrays = [rng.standard_normal((4, 2, 70, 8)).astype(np.float32) for _ in range(3)]
    _grads(arrays, rng.standard_normal((4, 2, 70, 8)).astype(np.float32), True)
    assert get() == before
