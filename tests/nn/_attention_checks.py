"""Shared checks of scaled-dot-product attention's kernel paths against torch and against the
NumPy path (used by the plane-kernel tests with the pool off and on)."""

import numpy as np

import ember
import ember.nn.functional as F
from ember.ops._kernels import attention as katt


def tol(dtype):
    return {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10,
                                                                      "atol": 1e-12}


def qkv_arrays(rng, dtype, n_query, n_key, batch=2, heads=3, n_embed=8):
    """q, k, v as a transformer block makes them (heads of one permuted projection) when
    n_query == n_key, separate C-contiguous arrays otherwise."""
    if n_query == n_key:
        qkv = rng.standard_normal((batch, n_query, 3, heads, n_embed)).astype(dtype)
        return list(qkv.transpose(2, 0, 3, 1, 4))
    return [rng.standard_normal((batch, heads, n, n_embed)).astype(dtype)
            for n in (n_query, n_key, n_key)]


def assert_matches_torch(torch, rng, arrays, is_causal):
    """Attention's output and the gradients of q, k and v under a random incoming gradient,
    ember against torch at the dtype's tolerance."""
    dtype = arrays[0].dtype
    g = rng.standard_normal(arrays[0].shape).astype(dtype)
    es = [ember.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    eo = F.scaled_dot_product_attention(*es, is_causal=is_causal)
    to = torch.nn.functional.scaled_dot_product_attention(*ts, is_causal=is_causal)
    eo.backward(ember.tensor(g))
    to.backward(torch.tensor(g))
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), **tol(dtype))
    for e, t in zip(es, ts, strict=True):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), **tol(dtype))


def assert_paths_agree(rng, q, k, v, scale, switch):
    """The kernel's forward and backward with `switch(True)` then `switch(False)` (the NumPy
    path): the same products and rows, equal results."""
    g = rng.standard_normal(q.shape).astype(q.dtype)
    results = []
    for on in (True, False):
        switch(on)
        out, p = katt.attention_forward(q, k, v, scale, True)
        grads = katt.attention_backward(g, q, k, v, p, scale, True)
        results.append([a.copy() for a in (out, p) + tuple(grads)])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def assert_gradcheck_causal(rng, n, **sizes):
    """gradcheck in float64 of causal attention through whichever path is switched on."""
    arrays = qkv_arrays(rng, np.float64, n, n, **sizes)
    xs = [ember.tensor(np.ascontiguousarray(a), requires_grad=True) for a in arrays]
    assert ember.autograd.gradcheck(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), xs)
