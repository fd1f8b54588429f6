"""ember.func.rearrange (einops patterns) against torch.func.rearrange: values, gradients,
unit axes, ellipsis, lists of tensors and the pattern errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.func import rearrange

PATTERNS = [("a b c -> c (a b)", {}), ("a (b1 b2) c -> b1 a b2 c", {"b1": 1}),
            ("... c -> c ...", {}), ("a b c -> a b c 1", {}), ("a b c -> (c a) b", {}),
            ("a b ... -> (b a) ...", {}), ("(a x) b c -> a x c b", {"x": 2}),
            ("a b c -> a () b c", {}), ("a b c -> a b c", {})]


@pytest.mark.parity
@pytest.mark.parametrize("pattern,lengths", PATTERNS)
def test_rearrange_matches_torch(pattern, lengths):
    torch = pytest.importorskip("torch")
    x = np.arange(24.0).reshape(2, 3, 4)
    ours = rearrange(ember.tensor(x), pattern, **lengths)
    ref = torch.func.rearrange(torch.tensor(x), pattern, **lengths)
    assert tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_rearrange_unit_axes_lists_and_gradient():
    assert tuple(rearrange(ember.ones(2, 1, 3), "a 1 b -> a b").shape) == (2, 3)
    parts = [ember.full((2, 3), float(i)) for i in range(4)]
    out = rearrange(parts, "n a b -> a (n b)")
    assert tuple(out.shape) == (2, 12) and out[0, 3].item() == 1.0
    x = ember.arange(6.0, requires_grad=True)
    y = rearrange(x.reshape(2, 3), "a b -> b a")
    (y * ember.tensor([[1.0, 10.0]] * 3)).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0, 10.0, 10.0, 10.0]


def test_rearrange_errors():
    x = ember.ones(2, 3, 4)
    with pytest.raises(ValueError, match="Number of dimensions in pattern \\(2\\)"):
        rearrange(x, "a b -> a b")
    with pytest.raises(ValueError, match="Identifiers only on one side"):
        rearrange(x, "a b c -> a b d")
    with pytest.raises(ValueError, match="duplicate dimension 'a'"):
        rearrange(x, "a a c -> a c")
    with pytest.raises(ValueError, match="can't divide axis of length 3"):
        rearrange(x, "a (b x) c -> a b x c", x=2)
    with pytest.raises(ValueError, match="could not infer sizes"):
        rearrange(x, "a (b x) c -> a b x c")
    with pytest.raises(ValueError, match="brackets"):
        rearrange(x, "a (b c -> a b c")
