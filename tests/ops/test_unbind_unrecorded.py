"""unbind's pieces when the call is not recorded (no_grad, a decoding step) skip the backward's
layout bookkeeping; recorded calls keep it."""

import numpy as np

import ember


def test_unbind_under_no_grad_gives_views_without_history():
    x = ember.randn(3, 2, 4, requires_grad=True)
    with ember.no_grad():
        pieces = x.unbind(0)
    assert len(pieces) == 3 and all(p.grad_fn is None and not p.requires_grad for p in pieces)
    np.testing.assert_array_equal(pieces[1].numpy(), x.detach().numpy()[1])
    x.detach()[1, 0, 0] = 7.0  # views share the storage and the version counter
    assert pieces[1][0, 0].item() == 7.0 and pieces[1]._version == x._version


def test_unbind_recorded_after_unrecorded_calls_backpropagates():
    x = ember.randn(2, 3, 4, requires_grad=True)
    with ember.no_grad():
        x.unbind(1)
    for dim in (0, 1, -1):
        x.grad = None
        pieces = x.unbind(dim)
        assert pieces[0].grad_fn.name() == "UnbindBackward0"
        sum(p.sum() * (i + 1) for i, p in enumerate(pieces)).backward()
        want = np.broadcast_to(np.arange(1, x.shape[dim] + 1).reshape(
            [-1 if d == dim % 3 else 1 for d in range(3)]), (2, 3, 4))
        np.testing.assert_array_equal(x.grad.numpy(), want)


def test_unbind_of_one_dim_tensor_gives_zero_dim_tensors():
    pieces = ember.tensor([1.0, 2.0]).unbind()
    assert [p.shape for p in pieces] == [(), ()] and pieces[1].item() == 2.0
