"""Reading ``.grad`` of a tensor that backward will never fill: torch warns (UserWarning) when the
tensor is not a leaf of the graph, does not retain its gradient and has none; ember returned
None silently. Each case is built under both libraries and must warn (or not) alike.
"""
import warnings

import pytest

import ember


def _torch():
    return pytest.importorskip("torch")


def _non_leaf(lib):
    return lib.randn(3, requires_grad=True) * 2


def _view_of_leaf(lib):
    return lib.randn(3, requires_grad=True)[:2]


def _modified_in_place(lib):
    y = lib.randn(3, requires_grad=True).clone()
    y.add_(1)
    return y


def _complex_non_leaf(lib):
    return lib.randn(3, dtype=lib.complex64, requires_grad=True) * 2


def _leaf(lib):
    return lib.randn(3, requires_grad=True)


def _no_grad_needed(lib):
    return lib.randn(3) * 2


def _made_under_no_grad(lib):
    a = lib.randn(3, requires_grad=True)
    with lib.no_grad():
        return a * 2


def _retained(lib):
    y = lib.randn(3, requires_grad=True) * 2
    y.retain_grad()
    return y


def _retained_after_backward(lib):
    y = lib.randn(3, requires_grad=True) * 2
    y.retain_grad()
    y.sum().backward()
    return y


def _assigned(lib):
    y = lib.randn(3, requires_grad=True) * 2
    y.grad = lib.zeros(3)
    return y


def _detached(lib):
    return (lib.randn(3, requires_grad=True) * 2).detach()


def _parameter(lib):
    return lib.nn.Parameter(lib.randn(3))


def _integer(lib):
    return lib.arange(3)


_WARNS = [_non_leaf, _view_of_leaf, _modified_in_place, _complex_non_leaf]
_SILENT = [_leaf, _no_grad_needed, _made_under_no_grad, _retained, _retained_after_backward,
           _assigned, _detached, _parameter, _integer]


@pytest.mark.parity
@pytest.mark.parametrize("make", _WARNS + _SILENT, ids=lambda f: f.__name__.strip("_"))
def test_which_grad_reads_warn_matches_torch(make):
    torch = _torch()
    for lib in (torch, ember):
        t = make(lib)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            g = t.grad
        got = [w for w in record if "not a leaf" in str(w.message)]
        assert len(got) == (make in _WARNS), lib.__name__
        # the warning points at the line that read .grad, not into the library
        assert all(w.filename == __file__ and w.category is UserWarning for w in got)
        assert (g is None) == (make not in (_retained_after_backward, _assigned)), lib.__name__


def test_message_says_what_to_do():
    with pytest.warns(UserWarning, match=r"retain_grad\(\).*leaf tensor"):
        _ = _non_leaf(ember).grad


def test_deleting_an_assigned_grad_warns_again():
    y = _assigned(ember)
    del y.grad
    with pytest.warns(UserWarning, match="not a leaf"):
        assert y.grad is None


def test_getattr_and_hasattr_warn_too():
    y = _non_leaf(ember)
    with pytest.warns(UserWarning, match="not a leaf"):
        assert getattr(y, "grad", 1) is None


def test_sparse_non_leaf_grad_warns_at_the_caller():
    i = ember.tensor([[0, 1], [1, 0]])
    v = ember.randn(2, requires_grad=True)
    s = ember.sparse_coo_tensor(i, v * 2, (2, 2))
    with pytest.warns(UserWarning, match="not a leaf") as record:
        assert s.grad is None
    assert record[0].filename == __file__


def test_training_loop_does_not_warn():
    # the optimizer, clipping and zero_grad read only the parameters' (leaves') gradients
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 1))
    opt = ember.optim.Adam(model.parameters(), lr=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            loss = model(ember.randn(5, 3)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            ember.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
