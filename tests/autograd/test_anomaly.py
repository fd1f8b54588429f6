"""detect_anomaly: NaN in backward names the op and the forward trace; NumPy-alias writes."""
import numpy as np
import pytest

import ember


def test_nan_in_backward_raises_with_forward_trace():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with ember.autograd.detect_anomaly():
        y = x.sqrt()          # d sqrt(x)/dx at 0 is inf; times 0 gives NaN
        z = (y * 0).sum()
        with pytest.raises(RuntimeError, match="SqrtBackward0.*nan") as e:
            z.backward()
    assert "test_anomaly.py" in str(e.value)  # the forward trace shows where sqrt was called


def test_without_anomaly_mode_nan_propagates_silently():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    (x.sqrt() * 0).sum().backward()
    assert np.isnan(x.grad.numpy()[0])


def test_write_through_numpy_alias_caught_by_anomaly_mode():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with ember.autograd.detect_anomaly():
        h = x * 1
        y = h.sin()                 # saves h
        h.detach().numpy()[0] = 5.0  # no version bump: NumPy writes are invisible to ember
        with pytest.raises(RuntimeError, match="modified after it was saved"):
            y.sum().backward()
