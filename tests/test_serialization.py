"""ember.save / ember.load: round trips, sharing, paths and files, atomic writes, safe globals."""
from __future__ import annotations

import collections
import io
import math
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest

import ember
from ember import serialization as S
from ember.nn.parameter import Parameter


def _round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    return ember.load(buf, **load_kwargs)


class Point:
    """A user class: not in the safe tree, so it goes through the archive's pickle."""

    def __init__(self, x, t):
        self.x, self.t = x, t


# ---------------------------------------------------------------------------------------------
# the safe tree


def test_nested_containers_round_trip_with_types_and_order():
    obj = collections.OrderedDict([
        ("z", 1), ("a", [1, 2.5, -0.0, True, None, "text", b"\x00\xffbytes"]),
        ("tuple", (1, (2, 3))), ("set", {1, 2}), ("complex", 1 - 2j), ("ba", bytearray(b"x")),
        ("floats", [math.inf, -math.inf, 1e-300, 0.1]), (7, "int key"), ((1, 2), "tuple key"),
        ("dtypes", [ember.float32, ember.bfloat16, ember.int64, ember.bool]),
        ("size", ember.Size([2, 3])), ("device", ember.device("cpu")),
        ("counter", collections.Counter({3: 2, 5: 1})), ("empty", {}),
    ])
    out = _round_trip(obj)
    assert type(out) is collections.OrderedDict and list(out) == list(obj)
    for key in obj:
        assert out[key] == obj[key] and type(out[key]) is type(obj[key])
    assert out["floats"][0] == math.inf and out["a"][2] == 0.0
    assert math.copysign(1, out["a"][2]) == -1.0  # -0.0 keeps its sign
    assert out["dtypes"][1] is ember.bfloat16
    assert type(out["size"]) is ember.Size and type(out["a"][0]) is int
    nan = _round_trip({"nan": math.nan})["nan"]
    assert math.isnan(nan)


@pytest.mark.parametrize("value", [frozenset({"a"}), slice(1, 5), collections.defaultdict(list)])
def test_globals_torch_refuses_need_safe_globals(value):
    # torch 2.13's weights-only loading refuses these too; allowing them is the user's call
    buf = io.BytesIO()
    ember.save({"v": value}, buf)
    buf.seek(0)
    with pytest.raises(S.UnpicklingError, match=type(value).__name__):
        ember.load(buf)
    buf.seek(0)
    extra = [list] if isinstance(value, collections.defaultdict) else []
    with S.safe_globals([type(value)] + extra):
        assert ember.load(buf)["v"] == value


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16, ember.bfloat16,
                                   ember.int64, ember.int32, ember.int16, ember.int8, ember.uint8,
                                   ember.bool])
def test_tensor_dtypes_round_trip(dtype, rng):
    data = (rng.standard_normal((3, 5)) * 10)
    t = ember.tensor(data).to(dtype)
    out = _round_trip({"t": t})["t"]
    assert out.dtype is dtype and out.shape == t.shape
    np.testing.assert_array_equal(out.numpy(), t.numpy())


def test_ordered_dict_attributes_survive():
    sd = collections.OrderedDict(w=ember.ones(2))
    sd._metadata = collections.OrderedDict({"": {"version": 1}})
    out = _round_trip(sd)
    assert out._metadata == {"": {"version": 1}} and out["w"].tolist() == [1.0, 1.0]


def test_zero_dim_empty_and_noncontiguous_tensors(rng):
    base = ember.tensor(rng.standard_normal((4, 6)))
    cases = {"scalar": ember.tensor(3.5), "empty": ember.zeros(0, 3), "t": base.t(),
             "strided": base[::2, 1::3], "row": base[2], "expanded": ember.ones(3, 1).expand(3, 4)}
    out = _round_trip(cases)
    for k, v in cases.items():
        assert out[k].shape == v.shape and out[k].stride() == v.stride(), k
        np.testing.assert_array_equal(out[k].numpy(), v.numpy())
    with pytest.raises(RuntimeError, match="read-only"):
        out["expanded"].add_(1)  # a broadcast view stays unwritable, as in ember


def test_self_overlapping_and_unusual_roots_are_saved_as_copies():
    x = ember.arange(10.0)
    windows = ember.as_strided(x, (4, 3), (2, 1))  # rows overlap in memory
    odd = ember.from_numpy(np.lib.stride_tricks.as_strided(np.arange(10.0), (3,), (16,)))
    out = _round_trip({"windows": windows, "elem": windows[1, 2], "odd": odd, "odd0": odd[1]})
    np.testing.assert_array_equal(out["windows"].numpy(), windows.numpy())
    assert out["elem"].shape == () and out["elem"].item() == 4.0
    assert out["odd"].tolist() == [0.0, 2.0, 4.0] and out["odd0"].item() == 2.0


class MyTensor(ember.Tensor):
    """A user Tensor subclass: outside the safe tree."""


def test_tensor_subclass_goes_through_allowlist():
    t = ember.ones(3)
    sub = object.__new__(MyTensor)
    sub._data, sub._vc = t._data, t._vc
    buf = io.BytesIO()
    ember.save({"sub": sub}, buf)
    buf.seek(0)
    with pytest.raises(S.UnpicklingError, match="MyTensor"):
        ember.load(buf)
    buf.seek(0)
    with S.safe_globals([MyTensor]):
        out = ember.load(buf)
    assert type(out["sub"]) is MyTensor and out["sub"].tolist() == [1.0, 1.0, 1.0]


def test_views_keep_sharing_storage_and_version_counter():
    x = ember.arange(12.0).reshape(3, 4)
    obj = {"x": x, "row": x[1], "col": x[:, 2], "again": x}
    out = _round_trip(obj)
    assert out["again"] is out["x"]
    out["row"][0] = 100.0
    assert out["x"][1, 0].item() == 100.0
    out["x"][0, 2] = -1.0
    assert out["col"][0].item() == -1.0
    assert out["x"]._version == out["col"]._version and out["x"]._version > 0
    # the archive holds one storage for all four
    buf = io.BytesIO()
    ember.save(obj, buf)
    names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    assert [n for n in names if "/data/" in n] == ["archive/data/0"]


def test_parameters_and_requires_grad_survive():
    p = Parameter(ember.randn(2, 3))
    frozen = Parameter(ember.randn(2), requires_grad=False)
    leaf = ember.randn(3, requires_grad=True)
    out = _round_trip({"p": p, "frozen": frozen, "leaf": leaf, "plain": ember.ones(2)})
    assert type(out["p"]) is Parameter and out["p"].requires_grad
    assert type(out["frozen"]) is Parameter and not out["frozen"].requires_grad
    assert type(out["leaf"]) is ember.Tensor and out["leaf"].requires_grad and out["leaf"].is_leaf
    assert not out["plain"].requires_grad
    np.testing.assert_array_equal(out["p"].detach().numpy(), p.detach().numpy())


def test_archive_has_torchs_zip_layout():
    buf = io.BytesIO()
    ember.save({"w": ember.ones(2, 2), "lr": 0.5}, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
        names = zf.namelist()
        records = {n: zf.read(n) for n in names}
    assert names[0] == "archive/data.pkl" and "archive/data/0" in names
    assert records["archive/byteorder"] == b"little"
    assert records["archive/.format_version"] == b"1"
    assert records["archive/.storage_alignment"] == b"64"
    assert records["archive/version"] == b"3\n"
    assert np.frombuffer(records["archive/data/0"], "<f4").tolist() == [1.0] * 4
    pkl = records["archive/data.pkl"]
    assert b"torch._utils\n_rebuild_tensor_v2" in pkl and b"torch\nFloatStorage" in pkl


def test_storage_entries_are_64_byte_aligned():
    buf = io.BytesIO()
    ember.save({"a": ember.ones(3), "b": ember.zeros(5, dtype=ember.float64), "c": Point(1, 2)},
               buf)
    data = buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:
                                                           info.header_offset + 30])
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename


# ---------------------------------------------------------------------------------------------
# paths, files, mmap, map_location


def test_path_and_pathlike_and_file_objects(tmp_path, rng):
    obj = {"w": ember.tensor(rng.standard_normal(5))}
    ember.save(obj, str(tmp_path / "a.pt"))
    ember.save(obj, tmp_path / "b.pt")
    with open(tmp_path / "c.pt", "wb") as fh:
        ember.save(obj, fh)
    for name in ("a.pt", "b.pt", "c.pt"):
        for source in (tmp_path / name, str(tmp_path / name)):
            np.testing.assert_array_equal(ember.load(source)["w"].numpy(), obj["w"].numpy())
        with open(tmp_path / name, "rb") as fh:
            np.testing.assert_array_equal(ember.load(fh)["w"].numpy(), obj["w"].numpy())


def test_non_seekable_and_offset_file_objects():
    buf = io.BytesIO()
    ember.save([ember.arange(4)], buf)

    class Stream(io.RawIOBase):
        def __init__(self, data):
            self._inner = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self._inner.readinto(b)

    assert ember.load(Stream(buf.getvalue()))[0].tolist() == [0, 1, 2, 3]
    prefixed = io.BytesIO(b"header!" + buf.getvalue())
    prefixed.seek(7)
    assert ember.load(prefixed)[0].tolist() == [0, 1, 2, 3]


def test_mmap_loads_copy_on_write(tmp_path):
    path = tmp_path / "m.pt"
    x = ember.arange(1000.0)
    ember.save({"x": x, "v": x[10:20]}, path)
    out = ember.load(path, mmap=True)
    assert isinstance(out["x"]._data.base, np.memmap)
    np.testing.assert_array_equal(out["x"].numpy(), x.numpy())
    out["v"][0] = -5.0
    assert out["x"][10].item() == -5.0
    assert ember.load(path)["x"][10].item() == 10.0  # the file is unchanged
    with pytest.raises(ValueError, match="file path"):
        ember.load(io.BytesIO(path.read_bytes()), mmap=True)


def test_map_location_forms():
    buf = io.BytesIO()
    ember.save({"a": ember.ones(2)}, buf)
    seen = []
    for loc in ("cpu", ember.device("cpu"), {"cuda:0": "cpu"},
                lambda storage, where: seen.append(where) or storage):
        buf.seek(0)
        assert ember.load(buf, map_location=loc)["a"].tolist() == [1.0, 1.0]
    assert seen == ["cpu"]
    buf.seek(0)
    with pytest.raises(RuntimeError, match="CUDA"):
        ember.load(buf, map_location="cuda")


def test_large_tensor_round_trip(rng):
    big = ember.tensor(rng.standard_normal(1 << 20), dtype=ember.float32)
    np.testing.assert_array_equal(_round_trip(big).numpy(), big.numpy())


# ---------------------------------------------------------------------------------------------
# atomic writes


class _Exploding:
    def __reduce__(self):
        raise RuntimeError("boom while pickling")


def test_failed_save_leaves_target_untouched_and_no_temp_files(tmp_path):
    target = tmp_path / "ckpt.pt"
    ember.save({"v": 1}, target)
    before = target.read_bytes()
    with pytest.raises(RuntimeError, match="boom"):
        ember.save({"v": ember.ones(100), "bad": _Exploding()}, target)
    assert target.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]


def test_crash_mid_write_leaves_target_untouched(tmp_path, monkeypatch):
    target = tmp_path / "ckpt.pt"
    ember.save({"v": ember.zeros(3)}, target)
    before = target.read_bytes()
    archive = ember.serialization._archive
    real = archive.write_entry
    calls = []

    def flaky(zf, name, data):
        calls.append(name)
        if "/data/" in name:
            raise OSError("disk full")
        real(zf, name, data)

    monkeypatch.setattr(archive, "write_entry", flaky)
    with pytest.raises(OSError, match="disk full"):
        ember.save({"v": ember.ones(1000)}, target)
    assert calls[0] == "archive/data.pkl" and calls[-1] == "archive/data/0"
    assert target.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.pt"]
    monkeypatch.setattr(archive, "write_entry", real)
    ember.save({"v": ember.ones(2)}, target)
    assert ember.load(target)["v"].tolist() == [1.0, 1.0]


def test_save_keeps_existing_file_mode(tmp_path):
    target = tmp_path / "ckpt.pt"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    ember.save({"a": 1}, target)
    assert (os.stat(target).st_mode & 0o777) == 0o640


# ---------------------------------------------------------------------------------------------
# arbitrary objects: the pickle path and the safe-globals allowlist


def test_user_objects_are_pickled_with_tensors_in_storage():
    t = ember.arange(6.0)
    obj = {"point": Point(3, t), "view": t[2:], "np": np.arange(3)}
    buf = io.BytesIO()
    ember.save(obj, buf)
    names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    assert "archive/data.pkl" in names and "archive/data/0" in names
    buf.seek(0)
    with pytest.raises(S.UnpicklingError, match=r"Point.*add_safe_globals"):
        ember.load(buf)
    buf.seek(0)
    with pytest.warns(S.UnsafeLoadWarning):
        out = ember.load(buf, weights_only=False)
    assert out["point"].x == 3 and out["np"].tolist() == [0, 1, 2]
    out["view"][0] = 50.0
    assert out["point"].t[2].item() == 50.0  # still one storage


def test_safe_globals_context_and_registry():
    buf = io.BytesIO()
    ember.save([Point(1, ember.ones(2))], buf)
    S.clear_safe_globals()
    with S.safe_globals([Point]):
        buf.seek(0)
        out = ember.load(buf)
        assert out[0].x == 1 and out[0].t.tolist() == [1.0, 1.0]
        assert S.get_safe_globals() == [Point]
    assert S.get_safe_globals() == []
    S.add_safe_globals([Point])
    try:
        buf.seek(0)
        assert ember.load(buf)[0].x == 1
    finally:
        S.clear_safe_globals()
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        ember.load(buf)


def test_whole_module_like_object_and_optimizer_state():
    nn = pytest.importorskip("ember.nn", reason="ember.nn not importable")
    if not hasattr(nn, "Linear"):
        pytest.skip("ember.nn.Linear not available yet")
    model = nn.Linear(3, 2)
    buf = io.BytesIO()
    ember.save(model, buf)
    buf.seek(0)
    with pytest.warns(S.UnsafeLoadWarning):
        loaded = ember.load(buf, weights_only=False)
    assert type(loaded.weight) is Parameter
    np.testing.assert_array_equal(loaded.weight.detach().numpy(), model.weight.detach().numpy())


def test_plain_pickle_files(tmp_path):
    path = tmp_path / "plain.pkl"
    path.write_bytes(pickle.dumps({"a": [1, 2], "b": collections.OrderedDict(x=1)}, protocol=4))
    assert ember.load(path) == {"a": [1, 2], "b": {"x": 1}}
    path.write_bytes(pickle.dumps(Point(1, 2)))
    with pytest.raises(S.UnpicklingError, match="Point"):
        ember.load(path)
    with pytest.warns(UserWarning, match="arbitrary code"):
        assert ember.load(path, weights_only=False).x == 1
    with pytest.raises(RuntimeError, match="pickle_module"):
        ember.load(path, pickle_module=pickle, weights_only=True)
    with pytest.warns(S.UnsafeLoadWarning):  # as torch: a pickle_module means weights_only=False
        assert ember.load(path, pickle_module=pickle).x == 1


def test_pickle_protocol_two_bytes_and_sets_load_restricted():
    # bytes/sets use _codecs.encode / builtins.set at protocol 2
    obj = {"b": b"\x00\x01", "set": {1, 2}, "dt": ember.int8, "size": ember.Size([1, 2])}
    out = _round_trip(obj)
    assert out == obj and out["dt"] is ember.int8


# ---------------------------------------------------------------------------------------------
# ember's earlier archive format (written by ember before it wrote torch's layout)

_V1 = os.path.join(os.path.dirname(__file__), "published_weights")


def test_files_in_embers_earlier_format_still_load():
    out = ember.load(os.path.join(_V1, "ember-v1_tree.pt"))
    sd = out["model"]
    assert type(sd) is collections.OrderedDict and sd._metadata == {"": {"version": 1}}
    assert sd["w"].tolist() == np.arange(12.0).reshape(3, 4).tolist()
    sd["row"][0] = -1.0  # views of one storage still share it
    assert sd["w"][1, 0].item() == -1.0
    assert type(sd["p"]) is Parameter and sd["p"].requires_grad
    assert sd["steps"].item() == 7 and sd["mask"].tolist() == [True, False]
    assert out["lr"] == 0.25 and out["size"] == ember.Size([3, 4]) and out["tags"] == ("a", b"b")
    assert out["dtype"] is ember.float16 and out["bf"].dtype is ember.bfloat16


def test_pickled_files_in_embers_earlier_format_follow_weights_only():
    path = os.path.join(_V1, "ember-v1_pickled.pt")
    with pytest.raises(S.UnpicklingError, match="slice"):
        ember.load(path)  # slice: refused by torch's weights-only loading too
    with S.safe_globals([slice]):
        out = ember.load(path)
    assert out["sl"] == slice(1, 3) and out["x"].shape == (3, 4)
    mapped = ember.load(path, mmap=True, weights_only=False)
    assert mapped["x"].tolist() == out["x"].tolist()


def test_load_settings_of_torch_serialization(tmp_path):
    path = tmp_path / "m.pt"
    ember.save({"x": ember.arange(4.0)}, path)
    assert S.get_default_mmap_options() == S.MAP_PRIVATE
    S.set_default_mmap_options(S.MAP_SHARED)
    try:
        out = ember.load(path, mmap=True)
        out["x"][0] = 9.0  # MAP_SHARED: the write reaches the file
        del out
    finally:
        S.set_default_mmap_options(S.MAP_PRIVATE)
    assert ember.load(path, mmap=True)["x"][0].item() == 9.0
    with pytest.raises(S.SerializationError, match="CRC"):
        ember.load(path)  # the record changed under its checksum: a full read notices
    with pytest.raises(ValueError, match="MAP_PRIVATE"):
        S.set_default_mmap_options(12345)
    assert S.get_default_load_endianness() is None
    # an archive without a byteorder record follows the setting
    raw = io.BytesIO()
    ember.save({"x": ember.tensor([1.0])}, raw, _disable_byteorder_record=True)
    assert not any(n.endswith("byteorder") for n in zipfile.ZipFile(raw).namelist())
    S.set_default_load_endianness(S.LoadEndianness.BIG)
    try:
        raw.seek(0)
        assert ember.load(raw)["x"].item() != 1.0  # little-endian bytes read as big
    finally:
        S.set_default_load_endianness(None)
    raw.seek(0)
    assert ember.load(raw)["x"].item() == 1.0
    assert S.location_tag(ember.ones(1).untyped_storage()) == "cpu"
    with pytest.raises(RuntimeError, match="CUDA"):
        S.default_restore_location(None, "cuda:0")
