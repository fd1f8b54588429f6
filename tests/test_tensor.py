"""Tensor protocol and metadata: views/strides/storage, Python protocol, dtype/device moves."""
import numpy as np
import pytest

import ember


def test_views_share_storage_and_report_strides():
    x = ember.arange(12).reshape(3, 4)
    t = x.t()
    assert t.stride() == (1, 4) and not t.is_contiguous()
    assert t.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    s = x[1:, 2:]
    assert s.storage_offset() == 6 and s.stride() == (4, 1)
    c = t.contiguous()
    assert c.is_contiguous() and c.data_ptr() != t.data_ptr()
    assert x.contiguous() is x


@pytest.mark.parametrize("fn", [
    lambda x: x.view(4, 3), lambda x: x.transpose(0, 1), lambda x: x.permute(1, 0),
    lambda x: x[:, None], lambda x: x.unsqueeze(0), lambda x: x.narrow(1, 1, 2),
    lambda x: x.select(0, 1), lambda x: x.unbind(1)[2], lambda x: x.chunk(2, 1)[1],
    lambda x: x.split(1, 0)[2], lambda x: x.unflatten(1, (2, 2)), lambda x: x.T, lambda x: x.mT,
    lambda x: x.flatten(), lambda x: x.as_strided((2, 2), (1, 4), 1), lambda x: x.unfold(1, 2, 1),
    lambda x: x[::2, 1::2], lambda x: x.expand(2, 3, 4),
])
def test_view_ops_share_memory_and_version(fn):
    x = ember.arange(12.0).reshape(3, 4)
    v = fn(x)
    assert np.shares_memory(v.numpy(), x.numpy())
    assert v._vc is x._vc


def test_python_protocol():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert len(x) == 2 and x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert [r.tolist() for r in x] == [[1.0, 2.0], [3.0, 4.0]]
    assert x[1, 1].item() == 4.0 and float(x[0, 0]) == 1.0 and int(x[1, 0]) == 3
    assert bool(ember.tensor([1])) and not bool(ember.tensor(0.0))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(x)
    with pytest.raises(TypeError, match="0-d"):
        len(ember.tensor(1.0))
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        x.item()
    d = {x: 1}
    assert d[x] == 1 and hash(x) == object.__hash__(x)  # hashing by identity


def test_dtype_device_and_conversions():
    x = ember.tensor([1.5, -2.5])
    assert x.dtype is ember.float32 and x.device == ember.device("cpu")
    assert x.double().dtype is ember.float64 and x.long().tolist() == [1, -2]
    assert x.to(ember.int32).dtype is ember.int32 and x.to("cpu") is x
    assert x.type() == "ember.FloatTensor" and x.type(ember.float64).dtype is ember.float64
    assert x.half().dtype is ember.float16 and x.bfloat16().dtype is ember.bfloat16
    with pytest.raises(RuntimeError, match="CUDA"):
        x.to("cuda")


def test_set_default_dtype():
    prev = ember.get_default_dtype()
    try:
        ember.set_default_dtype(ember.float64)
        assert ember.tensor([1.0]).dtype is ember.float64 and ember.randn(2).dtype is ember.float64
        assert (ember.ones(2, dtype=ember.float32) * 2.5).dtype is ember.float32
    finally:
        ember.set_default_dtype(prev)
    with pytest.raises(TypeError, match="floating"):
        ember.set_default_dtype(ember.int64)


def test_grad_of_cast_flows_back_in_input_dtype():
    x = ember.ones(3, requires_grad=True)
    (x.double() * 2).sum().backward()
    assert x.grad.dtype is ember.float32
    np.testing.assert_allclose(x.grad.numpy(), [2, 2, 2])


def test_repr_formats():
    assert repr(ember.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(ember.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(ember.tensor([1.0], requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert "grad_fn=<MulBackward0>" in repr(ember.ones(1, requires_grad=True) * 2)
    assert repr(ember.tensor([1, 2], dtype=ember.int32)) == \
        "tensor([1, 2], dtype=ember.int32)"


def test_determinism_same_seed_bitwise_identical():
    def run():
        ember.manual_seed(1234)
        w = ember.randn(8, 8, requires_grad=True)
        x = ember.rand(4, 8)
        loss = (x @ w).tanh().pow(2).mean()
        loss.backward()
        return loss.detach().numpy().tobytes() + w.grad.numpy().tobytes()

    assert run() == run()


def test_use_deterministic_algorithms_flag():
    from ember._determinism import check_deterministic
    assert not ember.are_deterministic_algorithms_enabled()
    try:
        ember.use_deterministic_algorithms(True)
        assert ember.are_deterministic_algorithms_enabled()
        with pytest.raises(RuntimeError, match="deterministic"):
            check_deterministic("some_kernel")
    finally:
        ember.use_deterministic_algorithms(False)
    check_deterministic("some_kernel")  # no error when not requested
