"""jit.script of code whose control flow depends on input shapes, dtypes or devices.

TorchScript compiles `if x.dim() == 3:`, `for i in range(x.size(0)):` and a dict indexed by
`x.ndim` (einops' Rearrange/Reduce layers, found by the corpus's einops sweep: ember raised
KeyError: Proxy). ember runs such a forward as one opaque call node (NOTE [Shape-dependent
control flow in script] in ember/jit/__init__.py); branches on tensor values still raise.
"""
import numpy as np
import pytest

import ember
import ember.nn as nn


def _lib(name):
    if name == "ember":
        return ember
    return pytest.importorskip("torch")


class _Forms:
    """The same modules written against either library."""

    def __init__(self, lib):
        class Rank(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(4, 3)

            def forward(self, x):
                if x.dim() == 1:
                    x = x.unsqueeze(0)
                return self.lin(x)

        class Rows(lib.nn.Module):
            def forward(self, x):
                out = []
                for i in range(x.size(0)):
                    out.append(x[i] * (i + 1))
                return lib.stack(out)

        class ByNdim(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.table = {2: 1.0, 3: 2.0}

            def forward(self, x):
                return x * self.table[x.ndim]

        class ByDtype(lib.nn.Module):
            def forward(self, x):
                if x.dtype == lib.float64:
                    return x * 2
                return x + 1

        self.rank, self.rows, self.by_ndim, self.by_dtype = Rank, Rows, ByNdim, ByDtype


def _np(t):
    return t.detach().numpy()


@pytest.mark.parity
@pytest.mark.parametrize("form", ["rank", "rows", "by_ndim", "by_dtype"])
def test_values_match_torch(form):
    torch = _lib("torch")
    ours, theirs = getattr(_Forms(ember), form)(), getattr(_Forms(torch), form)()
    if form == "rank":
        with torch.no_grad():
            for p_t, p_e in zip(theirs.parameters(), ours.parameters(), strict=True):
                p_e.data.copy_(ember.tensor(_np(p_t)))
    s_ours, s_theirs = ember.jit.script(ours), torch.jit.script(theirs)
    data = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    inputs = [data, data[0]] if form == "rank" else [data, data[None], data.astype(np.float64)]
    if form == "by_ndim":
        inputs = [data, data[None]]
    for a in inputs:
        got = s_ours(ember.tensor(a))
        want = s_theirs(torch.tensor(a))
        assert got.shape == tuple(want.shape)
        assert got.dtype.is_floating_point
        np.testing.assert_allclose(_np(got), _np(want), rtol=1e-5, atol=1e-6)


def test_opaque_script_shares_state_and_mode():
    m = _Forms(ember).rank()
    s = ember.jit.script(m)
    assert [n for n, _ in s.named_parameters()] == ["lin.weight", "lin.bias"]
    assert list(s.state_dict()) == ["lin.weight", "lin.bias"]
    assert s.lin is m.lin
    with ember.no_grad():
        s.lin.weight.fill_(1.0)
    assert float(m.lin.weight[0, 0]) == 1.0
    s.eval()
    assert not m.training and not m.lin.training and not s.training
    assert tuple(s(ember.ones(4)).shape) == (1, 3)
    assert "forward" in s.code


def test_opaque_script_cannot_be_saved(tmp_path):
    s = ember.jit.script(_Forms(ember).rows())
    with pytest.raises(ember.jit.SerializationError, match="opaque call.*jit.trace"):
        s.save(str(tmp_path / "m.pt"))


def test_value_dependent_branch_still_refused():
    class ByValue(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x

    with pytest.raises(ember.jit.Error, match="data-dependent `if`"):
        ember.jit.script(ByValue())


def test_scripted_function_with_shape_loop():
    def f(x):
        total = x[0]
        for i in range(1, x.shape[0]):
            total = total + x[i]
        return total

    s = ember.jit.script(f)
    x = ember.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(s(x).numpy(), np.array([6.0, 9.0], dtype=np.float32))
