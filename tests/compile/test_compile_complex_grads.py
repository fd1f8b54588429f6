"""A compiled call's backward through holomorphic ops reached by a complex gradient: the engine
runs such an op's backward as conj(backward(conj(grad))) (NOTE [Complex gradients] in
autograd/function.py); the recorded backward and its replay must too. They called the op's
backward directly, so `(1j * a).imag.sum()` gave a gradient of -1 instead of 1 on every replay,
and S4's diagonal state-space kernels (complex A from real parameters, exp, einsum) trained to
chance under run.py --compile."""
import numpy as np
import pytest

import ember


def _params(seed):
    rng = np.random.default_rng(seed)
    return [ember.tensor(rng.standard_normal(s), dtype=ember.float32, requires_grad=True)
            for s in ((3, 4, 2), (3,), (3, 4), (3, 4))]


def _s4d_kernel(c_ri, log_dt, log_a_real, a_imag, length=6):
    # S4D's kernel (state-spaces/s4, models/s4/s4d.py), written out here
    c = ember.view_as_complex(c_ri)
    a = -ember.exp(log_a_real) + 1j * a_imag
    dta = a * ember.exp(log_dt).unsqueeze(-1)
    k = dta.unsqueeze(-1) * ember.arange(length)
    c = c * (ember.exp(dta) - 1.0) / a
    return 2 * ember.einsum("hn,hnl->hl", c, ember.exp(k)).real


FUNCTIONS = {
    "scalar_times_real": lambda c, dt, ar, ai: (1j * ai).imag.sum() + (ai * (2 - 3j)).imag.sum(),
    "complex_times_complex": lambda c, dt, ar, ai: (ember.view_as_complex(c) * (ar + 1j * ai))
    .imag.pow(2).sum(),
    "division": lambda c, dt, ar, ai: (ember.view_as_complex(c) / (-ember.exp(ar) + 1j * ai))
    .real.sum(),
    "exp": lambda c, dt, ar, ai: ember.exp(ar + 1j * ai).imag.sum(),
    "matmul": lambda c, dt, ar, ai: ((ar + 1j * ai) @ (ar + 1j * ai).mT).imag.sum(),
    "s4d_kernel": lambda c, dt, ar, ai: _s4d_kernel(c, dt, ar, ai).square().sum(),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_compiled_complex_backward_matches_eager(name):
    fn = FUNCTIONS[name]
    compiled = ember.compile(fn)
    for call in range(3):  # the capture, then replays
        eager_p, comp_p = _params(call), _params(call)
        fn(*eager_p).backward()
        compiled(*comp_p).backward()
        for e, c in zip(eager_p, comp_p, strict=True):
            if e.grad is None:
                assert c.grad is None
                continue
            np.testing.assert_allclose(c.grad.numpy(), e.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert compiled.last_breaks == []


def test_scalar_times_real_gradient_values():
    a = ember.randn(3, requires_grad=True)
    compiled = ember.compile(lambda: (1j * a).imag.sum())
    for _ in range(3):
        a.grad = None
        compiled().backward()
        assert a.grad.tolist() == [1.0, 1.0, 1.0]
