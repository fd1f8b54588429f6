"""Smaller torch.autograd names: Variable, variable, is_tensor_like, the multithreading switch,
SavedTensor, NestedIOFunction and the legacy profiler records."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import autograd


def test_variable_returns_a_leaf_tensor_sharing_memory():
    data = ember.tensor([1.0, 2.0])
    v = autograd.Variable(data, requires_grad=True)
    assert type(v) is ember.Tensor and v.requires_grad and v.is_leaf
    assert v is not data and not data.requires_grad
    data.add_(1.0)
    np.testing.assert_array_equal(v.detach().numpy(), [2.0, 3.0])
    (v * v).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [4.0, 6.0])


def test_variable_is_every_tensor_and_detaches():
    x = ember.ones(2, requires_grad=True) * 2
    v = autograd.Variable(x)
    assert isinstance(x, autograd.Variable) and not isinstance(3, autograd.Variable)
    assert not v.requires_grad and v.grad_fn is None
    assert autograd.Variable().numel() == 0


def test_variable_errors_and_volatile_warning():
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        autograd.Variable(3)
    with pytest.raises(RuntimeError, match="floating point"):
        autograd.Variable(ember.tensor([1, 2]), requires_grad=True)
    with pytest.raises(TypeError, match="foo"):
        autograd.Variable(ember.ones(1), foo=1)
    with pytest.warns(UserWarning, match="volatile was removed"):
        autograd.Variable(ember.ones(1), volatile=True)


def test_variable_function_raises_like_torch():
    with pytest.raises(RuntimeError, match="deprecated, use ember.tensor"):
        autograd.variable(ember.ones(1))


def test_variable_module_path():
    from ember.autograd.variable import Variable
    assert Variable is autograd.Variable


def test_is_tensor_like():
    class Like:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    assert autograd.is_tensor_like(ember.ones(1))
    assert autograd.is_tensor_like(Like())
    assert not autograd.is_tensor_like(3) and not autograd.is_tensor_like(np.ones(1))


def test_multithreading_switch_is_a_context_manager_and_decorator():
    assert autograd.is_multithreading_enabled()
    with autograd.set_multithreading_enabled(False):
        assert not autograd.is_multithreading_enabled()
    assert autograd.is_multithreading_enabled()

    try:
        # like torch's (and set_grad_enabled), the setting applies on construction, so a
        # decorator switches it off from then on
        @autograd.set_multithreading_enabled(False)
        def inside():
            return autograd.is_multithreading_enabled()

        assert inside() is False and not autograd.is_multithreading_enabled()
    finally:
        autograd.set_multithreading_enabled(True)
    assert autograd.is_multithreading_enabled()


def test_saved_tensor_hooks_pack_and_unpack():
    t = ember.tensor([1.0, 2.0])
    saved = autograd.SavedTensor(t)
    assert saved.unpack() is t
    saved.register_hooks(lambda x: x.numpy().copy(), lambda a: ember.tensor(a) * 10)
    np.testing.assert_array_equal(saved.unpack().numpy(), [10.0, 20.0])
    with pytest.raises(RuntimeError, match="only be registered once"):
        saved.register_hooks(lambda x: x, lambda x: x)
    with pytest.raises(TypeError, match="two callables"):
        autograd.SavedTensor(t).register_hooks(1, lambda x: x)


def test_nested_io_function_is_a_function_whose_hooks_must_be_defined():
    assert issubclass(autograd.NestedIOFunction, autograd.Function)
    with pytest.raises(NotImplementedError, match="forward_extended"):
        autograd.NestedIOFunction().forward_extended(ember.ones(1))


def test_profiler_names():
    assert autograd.ProfilerActivity is ember.profiler.ProfilerActivity
    assert autograd.ProfilerState.CPU.name == "CPU"
    config = autograd.ProfilerConfig(autograd.ProfilerState.CPU, report_input_shapes=True)
    assert config.report_input_shapes and config.state is autograd.ProfilerState.CPU
    a = autograd.ProfilerEvent("matmul", "push", start_us=10.0, shapes=[(2, 3)])
    b = autograd.ProfilerEvent("matmul", "pop", start_us=14.5)
    assert a.name() == "matmul" and a.kind() == "push" and a.shapes() == [[2, 3]]
    assert a.cpu_elapsed_us(b) == 4.5 and not a.has_cuda()
    with pytest.raises(RuntimeError, match="CPU only"):
        a.cuda_elapsed_us(b)
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        autograd.Nope


@pytest.mark.parity
def test_variable_matches_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, ember):
        x = lib.ones(2)
        v = lib.autograd.Variable(x, requires_grad=True)
        assert v.requires_grad and v.is_leaf and not x.requires_grad
        assert isinstance(v, lib.Tensor) and isinstance(x, lib.autograd.Variable)
