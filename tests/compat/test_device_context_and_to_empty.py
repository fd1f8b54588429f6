"""Building a model for a device, then giving it storage (nanochat's base_train, pytorch/examples'
FSDP2, the memory-efficient loading notebook of LLMs-from-scratch): ``with torch.device(d):``
around the construction and ``model.to_empty(device=d)`` after it. ember's device was not a
context manager and Module had no ``to_empty``.
"""
import pytest

import ember


def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parity
def test_cpu_device_context_builds_on_the_cpu_as_in_torch():
    torch = _torch()
    for lib in (torch, ember):
        with lib.device("cpu") as d:
            layer = lib.nn.Linear(3, 2)
            x = lib.zeros(2)
        assert d == lib.device("cpu")
        assert layer.weight.device == lib.device("cpu") and x.device == lib.device("cpu")


@pytest.mark.parity
def test_cuda_device_context_fails_without_cuda_as_in_torch():
    torch = _torch()
    for lib in (torch, ember):
        # torch raises at the first factory call inside the block, ember on entering it
        with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
            with lib.device("cuda"):
                lib.zeros(1)


def test_other_devices_raise_on_entry_naming_the_device():
    with pytest.raises(RuntimeError, match="device 'mps' is not available"):
        with ember.device("mps"):
            pass


@pytest.mark.parity
@pytest.mark.parametrize("recurse", [True, False])
def test_to_empty_keeps_shapes_dtypes_and_parameters_as_in_torch(recurse):
    torch = _torch()
    for lib in (torch, ember):
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
        m[0].weight.grad = lib.ones(4, 3)
        weight, before = m[0].weight, {k: (v.shape, v.dtype) for k, v in m.state_dict().items()}
        assert m.to_empty(device="cpu", recurse=recurse) is m
        after = {k: (v.shape, v.dtype) for k, v in m.state_dict().items()}
        assert after == before, lib.__name__
        assert m[0].weight is weight and isinstance(weight, lib.nn.Parameter)
        assert weight.requires_grad and weight.grad.shape == (4, 3)


def test_to_empty_gives_new_storage_and_init_sets_it():
    m = ember.nn.Linear(3, 4)
    old = m.weight.detach()
    m.to_empty(device="cpu")
    assert not ember.Tensor.is_set_to(m.weight.detach(), old)
    with ember.no_grad():
        m.weight.fill_(0.5)
    assert old.abs().sum().item() != 0 and m.weight.sum().item() == 6.0


@pytest.mark.parity
def test_to_empty_needs_the_device_keyword_as_in_torch():
    torch = _torch()
    for lib in (torch, ember):
        with pytest.raises(TypeError, match="device"):
            lib.nn.Linear(2, 2).to_empty()
        with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
            lib.nn.Linear(2, 2).to_empty(device="cuda")
