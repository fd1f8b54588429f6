"""Bool input to softmax, argmax/argmin, topk, median/nanmedian and kthvalue raises what torch
2.13 raises (its CPU kernels have no bool version), and flip without dims is a TypeError; the
same ops still take integers."""
from __future__ import annotations

import pytest

import ember

torch = pytest.importorskip("torch")

# name -> (call on a library and a tensor, exception type, ember's message pattern)
CASES = {
    "softmax": (lambda L, x: L.softmax(x, 0), NotImplementedError, "softmax: expected a floating"),
    "log_softmax": (lambda L, x: L.nn.functional.log_softmax(x, dim=0), NotImplementedError,
                    "log_softmax: expected a floating"),
    "argmax": (lambda L, x: x.argmax(), RuntimeError, r"argmax\(\): does not support bool"),
    "argmin_dim": (lambda L, x: L.argmin(x, dim=0), RuntimeError,
                   r"argmin\(\): does not support bool"),
    "topk": (lambda L, x: L.topk(x, 1), RuntimeError, "topk does not support bool"),
    "median": (lambda L, x: x.median(), NotImplementedError, "median: not implemented for bool"),
    "median_dim": (lambda L, x: L.median(x, 0), NotImplementedError, "median: not implemented"),
    "nanmedian": (lambda L, x: L.nanmedian(x), NotImplementedError, "nanmedian: not implemented"),
    "kthvalue": (lambda L, x: x.kthvalue(1), NotImplementedError, "kthvalue: not implemented"),
    "flip": (lambda L, x: L.flip(x), TypeError, 'missing 1 required positional arguments: "dims"'),
    "flip_method": (lambda L, x: x.flip(), TypeError, "missing 1 required positional"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bool_input_raises_as_torch(name):
    call, exc, match = CASES[name]
    with pytest.raises(exc):
        call(torch, torch.tensor([True, False, True]))
    with pytest.raises(exc, match=match):
        call(ember, ember.tensor([True, False, True]))


@pytest.mark.parametrize("name", ["argmax", "argmin_dim", "topk", "median", "median_dim",
                                  "nanmedian", "kthvalue"])
def test_integers_still_work_as_torch(name):
    call = CASES[name][0]
    ours, theirs = call(ember, ember.tensor([3, 1, 2])), call(torch, torch.tensor([3, 1, 2]))
    ours = ours if isinstance(ours, ember.Tensor) else ours[0]
    theirs = theirs if isinstance(theirs, torch.Tensor) else theirs[0]
    assert ours.tolist() == theirs.tolist()


def test_zero_d_bool_kthvalue_and_flip_with_dims_as_torch():
    assert ember.tensor(True).kthvalue(1)[0].item() is torch.tensor(True).kthvalue(1)[0].item()
    x = [True, False, False]
    assert ember.flip(ember.tensor(x), dims=[0]).tolist() == torch.flip(torch.tensor(x),
                                                                          dims=[0]).tolist()
    assert ember.tensor(x).flip(0).tolist() == [False, False, True]
