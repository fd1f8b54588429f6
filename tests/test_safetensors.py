"""ember.utils.safetensors: round trips, interop with the reference implementation, hostile
headers."""
from __future__ import annotations

import json
import os
import struct
import time

import numpy as np
import pytest

import ember
from ember.utils import safetensors as st

DTYPES = [ember.float64, ember.float32, ember.float16, ember.bfloat16, ember.int64, ember.int32,
          ember.int16, ember.int8, ember.uint8, ember.bool]


def _tensors(rng):
    out = {f"t_{d.name}": ember.tensor(rng.standard_normal((3, 4)) * 50).to(d) for d in DTYPES}
    out["scalar"] = ember.tensor(2.5)
    out["empty"] = ember.zeros(0, 5)
    out["transposed"] = ember.tensor(rng.standard_normal((4, 2))).t()
    return out


def _assert_same(a: dict, b: dict):
    assert sorted(a) == sorted(b)
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        np.testing.assert_array_equal(np.asarray(a[k].numpy(), dtype=np.float64),
                                      np.asarray(b[k].numpy(), dtype=np.float64), err_msg=k)


def test_round_trip_bytes_and_file(tmp_path, rng):
    tensors = _tensors(rng)
    _assert_same(tensors, st.load(st.save(tensors)))
    path = tmp_path / "w.safetensors"
    st.save_file(tensors, path, metadata={"format": "pt", "epoch": "3"})
    loaded = st.load_file(path)
    _assert_same(tensors, loaded)
    assert st.load_metadata(path) == {"format": "pt", "epoch": "3"}
    assert all(t._data.flags.writeable and t._data.flags.c_contiguous for t in loaded.values())
    assert os.listdir(tmp_path) == ["w.safetensors"]


def test_layout_follows_the_spec(rng):
    blob = st.save({"b": ember.ones(3, dtype=ember.int8), "a": ember.zeros(2, dtype=ember.float64)},
                   metadata={"k": "v"})
    (n,) = struct.unpack("<Q", blob[:8])
    assert n % 8 == 0
    header = json.loads(blob[8:8 + n])
    assert header["__metadata__"] == {"k": "v"}
    assert header["a"] == {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]}
    assert header["b"] == {"dtype": "I8", "shape": [3], "data_offsets": [16, 19]}
    assert len(blob) == 8 + n + 19


def test_save_rejects_bad_input():
    with pytest.raises(TypeError, match="dict"):
        st.save([ember.ones(1)])
    with pytest.raises(TypeError, match="Tensor"):
        st.save({"a": np.ones(2)})
    with pytest.raises(TypeError, match="names must be str"):
        st.save({1: ember.ones(1)})
    with pytest.raises(TypeError, match="metadata"):
        st.save({"a": ember.ones(1)}, metadata={"a": 1})
    with pytest.raises(ValueError, match="reserved"):
        st.save({"__metadata__": ember.ones(1)})


@pytest.mark.parity
def test_reads_files_written_by_safetensors_torch(tmp_path, rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    st_torch = pytest.importorskip("safetensors.torch", reason="safetensors not installed")
    ref = {"f64": torch.tensor(rng.standard_normal((2, 3))),
           "f32": torch.randn(4, 5, generator=torch.Generator().manual_seed(0)),
           "f16": torch.linspace(-2, 2, 7, dtype=torch.float16),
           "bf16": torch.linspace(-3, 3, 9, dtype=torch.bfloat16),
           "i64": torch.arange(-5, 5), "i32": torch.arange(6, dtype=torch.int32).reshape(2, 3),
           "i16": torch.tensor([-300, 300], dtype=torch.int16),
           "i8": torch.tensor([-128, 127], dtype=torch.int8),
           "u8": torch.tensor([0, 255], dtype=torch.uint8),
           "bool": torch.tensor([True, False, True]), "scalar": torch.tensor(1.5),
           "empty": torch.zeros(0, 2)}
    path = tmp_path / "torch.safetensors"
    st_torch.save_file(ref, str(path), metadata={"source": "torch"})
    ours = st.load_file(path)
    assert st.load_metadata(path) == {"source": "torch"}
    for k, v in ref.items():
        expected = v.float().numpy() if v.dtype == torch.bfloat16 else v.numpy()
        got = ours[k].float().numpy() if k == "bf16" else ours[k].numpy()
        assert tuple(ours[k].shape) == tuple(v.shape)
        np.testing.assert_array_equal(got, expected, err_msg=k)
    assert ours["bf16"].dtype is ember.bfloat16 and ours["bool"].dtype is ember.bool
    assert ours.keys() == st.load(path.read_bytes()).keys()


@pytest.mark.parity
def test_files_written_by_ember_load_in_safetensors_torch(tmp_path, rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    st_torch = pytest.importorskip("safetensors.torch", reason="safetensors not installed")
    from safetensors import safe_open
    tensors = _tensors(rng)
    path = tmp_path / "ember.safetensors"
    st.save_file(tensors, path, metadata={"framework": "ember"})
    loaded = st_torch.load_file(str(path))
    with safe_open(str(path), framework="pt") as fh:
        assert fh.metadata() == {"framework": "ember"}
    assert sorted(loaded) == sorted(tensors)
    for k, v in tensors.items():
        got = loaded[k]
        if got.dtype == torch.bfloat16:
            np.testing.assert_array_equal(got.float().numpy(), v.float().numpy())
        else:
            np.testing.assert_array_equal(got.numpy(), v.numpy(), err_msg=k)
        assert tuple(got.shape) == tuple(v.shape)


# ---------------------------------------------------------------------------------------------
# hostile input


def _blob(header: dict, data: bytes = b"", pad=True) -> bytes:
    raw = json.dumps(header).encode()
    if pad:
        raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + data


def _entry(dtype="F32", shape=(2,), offsets=(0, 8)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


HOSTILE = {
    "header longer than file": struct.pack("<Q", 1000) + b"{}",
    "header length 2**63": struct.pack("<Q", 1 << 63) + b"{}",
    "short file": b"\x01\x02",
    "not json": struct.pack("<Q", 8) + b"notjson!",
    "not an object": _blob([1, 2]),
    "nan constant": struct.pack("<Q", 8) + b'{"a":NaN',
    "unknown dtype": _blob({"a": _entry(dtype="C64")}, b"\x00" * 8),
    "fp8 dtype": _blob({"a": _entry(dtype="F8_E4M3", shape=(8,))}, b"\x00" * 8),
    "missing key": _blob({"a": {"dtype": "F32", "shape": [2]}}, b"\x00" * 8),
    "extra key": _blob({"a": dict(_entry(), extra=1)}, b"\x00" * 8),
    "negative shape": _blob({"a": _entry(shape=(-2,))}, b"\x00" * 8),
    "float shape": _blob({"a": _entry(shape=(2.0,))}, b"\x00" * 8),
    "size mismatch": _blob({"a": _entry(shape=(3,))}, b"\x00" * 8),
    "numel overflow": _blob({"a": _entry(shape=(2 ** 62, 2 ** 62), offsets=(0, 0))}, b""),
    "reversed offsets": _blob({"a": _entry(offsets=(8, 0))}, b"\x00" * 8),
    "negative offsets": _blob({"a": _entry(offsets=(-8, 0))}, b"\x00" * 8),
    "offsets past data": _blob({"a": _entry(offsets=(8, 16))}, b"\x00" * 8),
    "overlap": _blob({"a": _entry(), "b": _entry(offsets=(4, 12))}, b"\x00" * 16),
    "gap": _blob({"a": _entry(offsets=(0, 8)), "b": _entry(offsets=(12, 20))}, b"\x00" * 20),
    "trailing data": _blob({"a": _entry()}, b"\x00" * 12),
    "bad metadata": _blob({"__metadata__": {"k": 1}}),
    "deep json": struct.pack("<Q", 200000) + b"[" * 100000 + b"]" * 100000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE), ids=sorted(HOSTILE))
def test_hostile_headers_raise_safetensor_error(name, tmp_path):
    data = HOSTILE[name]
    start = time.perf_counter()
    with pytest.raises(st.SafetensorError):
        st.load(data)
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(st.SafetensorError):
        st.load_file(path)
    assert isinstance(st.SafetensorError("x"), ValueError)
    assert time.perf_counter() - start < 1.0


def test_truncation_and_bit_flips(rng, tmp_path):
    tensors = {"w": ember.arange(6.0).reshape(2, 3), "b": ember.ones(2, dtype=ember.int64)}
    blob = st.save(tensors, metadata={"m": "1"})
    for n in range(len(blob)):
        with pytest.raises(st.SafetensorError):
            st.load(blob[:n])
    (header_len,) = struct.unpack("<Q", blob[:8])
    # the format has no checksum: flips in tensor data change values silently, so flip only the
    # length and header bytes, where every outcome must be a clean error or a consistent load
    for bit in rng.choice((8 + header_len) * 8, size=200, replace=False):
        flipped = bytearray(blob)
        flipped[bit // 8] ^= 1 << (bit % 8)
        try:
            out = st.load(bytes(flipped))
        except st.SafetensorError:
            continue
        assert all(isinstance(v, ember.Tensor) for v in out.values())
