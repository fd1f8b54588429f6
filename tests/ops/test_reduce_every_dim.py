"""std/var with an empty dim list: every dim, for the value and for its gradient.

torch 2.13 reduces every dim for the value but its backward counts no dims, so its gradient is
+-inf (docs/DEVIATIONS.md); ember's gradient is the value's: torch's own dim=None gradient."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


@pytest.mark.parametrize("name", ["std", "var"])
@pytest.mark.parametrize("dim", [[], ()])
def test_std_var_empty_dim_list_gradient_is_every_dims(rng, name, dim):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    x = rng.standard_normal((3, 4))
    a = ember.tensor(x, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    ya = getattr(a, name)(dim=dim)
    yb = getattr(b, name)(dim=None)  # torch's value and gradient over every dim
    np.testing.assert_allclose(ya.item(), yb.item(), rtol=1e-12)
    ya.backward()
    yb.backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-14)
    assert gradcheck(lambda t: getattr(t, name)(dim=dim), (a,))
    assert gradgradcheck(lambda t: getattr(ember, name)(t, dim), (a,))
    both = getattr(ember, name + "_mean")(a, dim=dim)
    np.testing.assert_allclose(both[1].item(), x.mean(), rtol=1e-12)
