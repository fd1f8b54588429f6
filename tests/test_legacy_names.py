"""Legacy tensor types (ember.FloatTensor ...), Tensor subclassing, is_tensor, numel, type()."""
from __future__ import annotations

import numpy as np
import pytest

import ember

LEGACY = [("FloatTensor", ember.float32), ("DoubleTensor", ember.float64),
          ("HalfTensor", ember.float16), ("BFloat16Tensor", ember.bfloat16),
          ("LongTensor", ember.int64), ("IntTensor", ember.int32),
          ("ShortTensor", ember.int16), ("CharTensor", ember.int8),
          ("ByteTensor", ember.uint8), ("BoolTensor", ember.bool)]


@pytest.mark.parametrize("name, dtype", LEGACY)
def test_legacy_constructor_and_isinstance(name, dtype):
    cls = getattr(ember, name)
    t = cls([1, 0, 2])
    assert type(t) is ember.Tensor and t.dtype is dtype and t.shape == (3,)
    assert isinstance(t, cls)
    assert t.type() == f"ember.{name}"
    shaped = cls(2, 3)
    assert shaped.shape == (2, 3) and shaped.dtype is dtype
    assert not shaped.numpy().astype(np.float64).any()  # ember zero-fills
    assert cls(ember.Size([4, 1])).shape == (4, 1)
    assert cls().shape == (0,)
    others = [c for n, c in LEGACY if c is not dtype]
    assert not isinstance(ember.zeros(1, dtype=others[0]), cls)
    assert cls.dtype is dtype and repr(cls) == f"<class 'ember.{name}'>"


def test_legacy_values_and_conversions():
    assert ember.LongTensor([1.7, 2]).tolist() == [1, 2]
    assert ember.BoolTensor([0, 2]).tolist() == [False, True]
    f = ember.ones(2)
    assert ember.FloatTensor(f).data_ptr() == f.data_ptr()  # same-dtype tensor: an alias
    assert f.type(ember.DoubleTensor).dtype is ember.float64
    assert f.type("ember.LongTensor").dtype is ember.int64
    assert f.type(ember.float16).dtype is ember.float16
    assert not isinstance(1.0, ember.FloatTensor)
    assert not isinstance(np.ones(2, np.float32), ember.FloatTensor)


def test_legacy_constructor_errors():
    with pytest.raises(TypeError, match="dtype"):
        ember.FloatTensor(ember.tensor([1, 2]))
    with pytest.raises(TypeError, match="keyword"):
        ember.FloatTensor(2, 3, dtype=ember.float64)
    with pytest.raises(TypeError, match="sequence"):
        ember.FloatTensor(2.5)
    with pytest.raises(TypeError, match="invalid data type"):
        ember.FloatTensor("ab")
    with pytest.raises(RuntimeError, match="no CUDA"):
        ember.FloatTensor([1.0], device="cuda")
    assert ember.FloatTensor([1.0], device="cpu").dtype is ember.float32


@pytest.mark.parity
def test_legacy_matches_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    for name, _ in LEGACY:
        ref, ours = getattr(torch, name)([1, 0, 3]), getattr(ember, name)([1, 0, 3])
        assert ours.tolist() == ref.tolist()
        assert ours.type().split(".")[-1] == ref.type().split(".")[-1]
        assert isinstance(ours, getattr(ember, name)) == isinstance(ref, getattr(torch, name))
    assert isinstance(torch.ones(1), torch.DoubleTensor) == isinstance(ember.ones(1),
                                                                       ember.DoubleTensor)
    assert issubclass(ember.FloatTensor, ember.Tensor) == issubclass(torch.FloatTensor,
                                                                    torch.Tensor)
    for args in ((2.5,), ("ab",)):
        with pytest.raises(TypeError):
            torch.FloatTensor(*args)
        with pytest.raises(TypeError):
            ember.FloatTensor(*args)


class MyTensor(ember.Tensor):
    def double_it(self):
        return self * 2


def test_tensor_subclass_works_with_ops():
    m = MyTensor([1.0, 2.0])
    assert type(m) is MyTensor and isinstance(m, ember.Tensor) and ember.is_tensor(m)
    np.testing.assert_allclose(m.double_it().numpy(), [2.0, 4.0])
    np.testing.assert_allclose(ember.exp(m).numpy(), np.exp([1.0, 2.0]), rtol=1e-6)
    np.testing.assert_allclose((m @ m).item(), 5.0)
    # Differs from torch: op results are base ember.Tensor (torch keeps the subclass)
    assert isinstance(m + 1, ember.Tensor)
    w = MyTensor([1.0, 2.0]).requires_grad_()
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 4.0])
    sized = MyTensor(2, 3)
    assert sized.shape == (2, 3) and sized.dtype is ember.float32


def test_is_tensor_numel_typename():
    assert ember.is_tensor(ember.ones(1)) and not ember.is_tensor(1.0)
    assert not ember.is_tensor(np.ones(1))
    assert ember.numel(ember.ones(2, 3)) == 6 and ember.numel(ember.ones(0, 3)) == 0
    assert ember.numel(ember.tensor(1.0)) == 1
    assert ember.typename(ember.ones(1, dtype=ember.int32)) == "ember.IntTensor"
    assert ember.typename(1.5) == "float"
