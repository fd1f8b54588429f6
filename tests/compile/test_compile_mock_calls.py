"""A compiled call that calls a unittest.mock object runs eagerly (a graph break), so the mock
sees every call, as under torch.compile (which does not trace into unittest.mock). nflows' linear
transforms are tested this way: `weight` and `logabsdet` replaced by MagicMocks, and
`assertTrue(transform.weight.called)` after each forward that must recompute its cache."""
from unittest import mock

import numpy as np
import pytest

import ember
from ember import nn
from ember._dynamo.exc import Unsupported


class _Cached(nn.Module):
    """A cache filled through a method on the first forward after it was invalidated."""

    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(ember.zeros(3))
        self.cached = None
        self.weight = mock.MagicMock(return_value=ember.eye(3) * 2)

    def invalidate(self):
        self.cached = None

    def forward(self, x):
        if self.cached is None:
            self.cached = self.weight()
        return x @ self.cached + self.bias


def test_a_mock_called_in_a_compiled_forward_sees_every_call():
    assert ember.compile(_Cached())  # (a module compiles the same way; see the parity case)
    m = _Cached()
    f = ember.compile(lambda x: m(x))  # a function: its last_breaks say why
    x = ember.ones(2, 3)
    for expected_calls in (1, 2, 3):
        m.invalidate()
        out = f(x)
        np.testing.assert_allclose(out.detach().numpy(), np.full((2, 3), 2.0))
        assert m.weight.call_count == expected_calls
    assert "unittest.mock" in f.last_breaks[0][0]
    f(x)  # the cache is filled: no call, as in eager
    assert m.weight.call_count == 3


def test_a_mock_call_under_fullgraph_raises():
    m = _Cached()
    with pytest.raises(Unsupported, match="unittest.mock.*fullgraph=True"):
        ember.compile(m, fullgraph=True)(ember.ones(2, 3))


def test_a_plain_method_in_the_same_place_is_still_replayed():
    m = _Cached()
    m.weight = lambda: ember.eye(3) * 2
    f = ember.compile(lambda x: m(x))
    x = ember.ones(2, 3)
    for _ in range(3):
        m.invalidate()
        f(x)
    assert f.last_breaks == []


@pytest.mark.parity
def test_mock_call_counts_match_torch_compile():
    torch = pytest.importorskip("torch")

    def run(lib, compile_kw):
        lin = lib.nn.Linear(3, 3)
        spy = mock.MagicMock(return_value=lib.ones(3))

        def fwd(x):
            return lin(x) * spy()

        f = lib.compile(fwd, **compile_kw)
        for _ in range(4):
            f(lib.ones(2, 3))
        return spy.call_count

    assert run(ember, {}) == run(torch, {"backend": "eager"}) == 4
