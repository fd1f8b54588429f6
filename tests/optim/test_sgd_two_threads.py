"""SGD's update of big parameters in two halves on two threads (ember/optim/sgd.py, NOTE [Two
halves on two threads] in ember/ops/_kernels/split.py): the same numbers as one call."""
import numpy as np
import pytest

import ember
from ember.ops._kernels import split
from ember.optim import sgd

# the kernel-thread modes tested here are off while the one pool is on (NOTE [One pool])
pytestmark = pytest.mark.usefixtures("pool_off")


@pytest.mark.parametrize("momentum, nesterov, dtype", [
    (0.0, False, np.float32), (0.9, False, np.float32), (0.9, True, np.float64)])
def test_sgd_halves_match_one_call(rng, monkeypatch, momentum, nesterov, dtype):
    w0 = rng.standard_normal((3, 7, 11)).astype(dtype)  # 231 elements, split from 16
    grads = [rng.standard_normal(w0.shape).astype(dtype) for _ in range(3)]
    halves = []
    # the kernel threads' path; the parts on OpenBLAS's threads queue every parameter instead
    # (tested in tests/nn/test_conv_blas_parts.py)
    monkeypatch.setattr(sgd, "_parts_on", lambda: False)
    monkeypatch.setattr(split, "_parallel_range",
                        lambda *a, original=split._parallel_range: halves.append(1)
                        or original(*a))

    def run(split_from):
        monkeypatch.setattr(sgd, "_SPLIT_ELEMENTS", split_from)
        w = ember.nn.Parameter(ember.tensor(w0.copy()))
        opt = ember.optim.SGD([w], lr=0.1, momentum=momentum, nesterov=nesterov,
                              weight_decay=1e-2, dampening=0.0)
        for g in grads:
            w.grad = ember.tensor(g)
            opt.step()
        return w.detach().numpy().copy()

    whole = run(1 << 62)
    assert not halves
    got = run(16)
    assert len(halves) == 3  # one hand-off per step
    np.testing.assert_array_equal(got, whole)
    # and against the update rule written out in NumPy (torch's documented SGD)
    w, buf = w0.copy(), None
    for g in grads:
        d = g + dtype(1e-2) * w
        if momentum:
            buf = d if buf is None else dtype(momentum) * buf + d
            d = d + dtype(momentum) * buf if nesterov else buf
        w = w - dtype(0.1) * d
    np.testing.assert_allclose(got, w, rtol=1e-6 if dtype == np.float32 else 1e-13)
