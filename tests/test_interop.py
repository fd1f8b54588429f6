"""Zero-copy exchange with NumPy and DLPack."""
import numpy as np
import pytest

import ember


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ember.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data            # no copy, whatever the size
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    t[1, 2] = -1
    assert a[1, 2] == -1
    assert t.numpy() is a or np.shares_memory(t.numpy(), a)


def test_tensor_copies():
    a = np.zeros(3)
    t = ember.tensor(a)
    a[0] = 1
    assert t[0].item() == 0 and not np.shares_memory(t.numpy(), a)


def test_numpy_of_tensor_requiring_grad_raises():
    t = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Use tensor.detach\(\).numpy\(\)"):
        t.numpy()
    assert np.shares_memory(t.detach().numpy(), t.detach().numpy())


def test_np_asarray_and_dtype_conversion():
    t = ember.arange(4)
    a = np.asarray(t)
    assert a.dtype == np.int64 and np.shares_memory(a, t.numpy())
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float32), [0, 1, 2, 3])


def test_read_only_array_stays_read_only():
    a = np.arange(3.0)
    a.flags.writeable = False
    t = ember.from_numpy(a)
    with pytest.raises(RuntimeError, match="read-only"):
        t.add_(1)
    with pytest.raises(RuntimeError, match="read-only"):
        t[0] = 5.0
    assert a[0] == 0
    assert (t + 1)[0].item() == 1  # out-of-place ops are fine


def test_from_numpy_rejects_negative_strides_and_unsupported_dtypes():
    with pytest.raises(ValueError, match="negative"):
        ember.from_numpy(np.arange(4.0)[::-1])
    with pytest.raises(TypeError, match="can't convert"):
        ember.from_numpy(np.array(["a"]))


def test_dlpack_to_numpy_shares_memory():
    t = ember.arange(6, dtype=ember.float32)
    n = np.from_dlpack(t)
    n[2] = 100
    assert t[2].item() == 100
    back = ember.from_dlpack(n)
    assert back.data_ptr() == t.data_ptr()


def test_dlpack_refuses_tensor_requiring_grad():
    with pytest.raises(RuntimeError, match="require gradient"):
        ember.ones(2, requires_grad=True).__dlpack__()


@pytest.mark.parity
def test_dlpack_with_torch_shares_memory_both_ways():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    t = ember.zeros(4)
    tt = torch.from_dlpack(t)
    tt[1] = 7
    assert t[1].item() == 7
    src = torch.arange(5.0)
    e = ember.from_dlpack(src)
    src[0] = -3
    assert e[0].item() == -3 and e.data_ptr() == src.data_ptr()


@pytest.mark.parity
def test_dlpack_capsules_with_torch_are_writable_aliases():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    t = ember.zeros(3)
    torch.utils.dlpack.from_dlpack(ember.utils.dlpack.to_dlpack(t))[0] = 4.0
    src = torch.zeros(3)
    ember.from_dlpack(torch.utils.dlpack.to_dlpack(src))[1] = 5.0
    ember.from_dlpack(src)[2] = 6.0
    assert t.tolist() == [4.0, 0.0, 0.0] and src.tolist() == [0.0, 5.0, 6.0]
