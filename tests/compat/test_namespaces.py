"""torch's top-level namespaces that device-generic and library code reaches for: ember.random,
ember.cpu / mps / xpu / mtia, ember.types, ember.functional, ember.hub, ember.testing,
ember.torch_version (the reported version), ember.ops.aten / ember.ops.profiler, and the legacy
ember.autograd.profiler."""
from __future__ import annotations

import os
import pathlib
import warnings

import numpy as np
import pytest

import ember
import ember.fx


def test_submodules_present_after_plain_import():
    for name in ("random", "cpu", "mps", "xpu", "mtia", "types", "functional", "hub", "testing",
                 "torch_version"):
        assert isinstance(getattr(ember, name), type(ember)), name
    assert ember.autograd.profiler.profile is not None


def test_fork_rng_restores_the_stream():
    ember.manual_seed(3)
    with ember.random.fork_rng():
        inside = ember.rand(4)
    after = ember.rand(4)
    assert ember.equal(inside, after)           # the block's draws did not move the stream
    with ember.random.fork_rng(enabled=False):
        ember.rand(4)
    assert not ember.equal(ember.rand(4), after)
    with pytest.raises(RuntimeError, match="fork_rng: ember has only the CPU generator"):
        with ember.random.fork_rng(device_type="mps"):
            pass
    assert ember.random.initial_seed() == 3


def _outcome(mod, call):
    try:
        return ("ok", getattr(mod, call)())
    except Exception as e:
        return ("raises", type(e))


@pytest.mark.parity
def test_absent_devices_answer_like_torch_cpu_build():
    torch = pytest.importorskip("torch")
    for kind, calls in {"xpu": ["is_available", "device_count", "is_initialized",
                                "is_bf16_supported", "empty_cache", "memory_allocated",
                                "synchronize", "current_device"],
                        "mps": ["device_count", "synchronize", "empty_cache",
                                "current_allocated_memory"],
                        "mtia": ["is_available", "device_count", "is_initialized"]}.items():
        for call in calls:
            assert _outcome(getattr(ember, kind), call) == _outcome(getattr(torch, kind), call), \
                (kind, call)
        getattr(ember, kind).manual_seed(0)        # a no-op, as in torch
    with pytest.raises(ValueError):
        ember.xpu.manual_seed("not a seed")


def test_cpu_device_module():
    cpu = ember.cpu
    assert cpu.is_available() and cpu.device_count() == 1 and cpu.current_device() == "cpu"
    cpu.synchronize()
    s = ember.Stream()
    with cpu.stream(s):
        assert cpu.current_stream() is s
    assert cpu.current_stream() is not s
    caps = cpu.get_capabilities()
    if os.path.exists("/proc/cpuinfo"):
        assert caps.get("sse2") is True
    with pytest.warns(FutureWarning, match=r"ember.cpu.amp.autocast\(args...\)` is deprecated"):
        ctx = cpu.amp.autocast()
    with ctx:
        y = ember.ones(2, 2) @ ember.ones(2, 2)
    assert y.dtype == ember.bfloat16


@pytest.mark.parity
def test_reported_version_compares_like_torch_version():
    torch = pytest.importorskip("torch")
    v = ember.__version__
    tv = torch.torch_version.TorchVersion(str(v))
    assert str(v).startswith("2.13.0+ember")
    for other in ("2.0", "2.13", "2.13.0", "2.14", "1.13.1", "3", "2.13.1"):
        assert (v < other, v <= other, v > other, v >= other) == \
               (tv < other, tv <= other, tv > other, tv >= other), other
    assert (v >= (2, 13)) == (tv >= (2, 13)) and (v < (2, 14)) == (tv < (2, 14))
    assert ember.version.__version__ == v and ember.version.ember == "0.1.0"
    assert (v < "abc") == (tv < "abc")           # not a version: string order, as torch
    with pytest.raises(TypeError):
        v < 3  # noqa: B015 - comparing is the point
    with pytest.raises(TypeError):
        v >= None  # noqa: B015


def test_functional_and_types_namespaces():
    a, b = ember.functional.meshgrid(ember.arange(2), ember.arange(3), indexing="ij")
    assert a.shape == (2, 3) and ember.functional.einsum is ember.einsum
    assert ember.types.Number == int | float | bool


def test_hub_downloads_once_checks_hash_and_loads(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    sd = {"w": ember.arange(6.0).reshape(2, 3)}
    ember.save(sd, src / "weights.pt")
    import hashlib
    digest = hashlib.sha256((src / "weights.pt").read_bytes()).hexdigest()
    good = src / f"weights-{digest[:8]}.pt"
    bad = src / "weights-deadbeef.pt"
    good.write_bytes((src / "weights.pt").read_bytes())
    bad.write_bytes((src / "weights.pt").read_bytes())
    cache = tmp_path / "cache"
    got = ember.hub.load_state_dict_from_url(good.as_uri(), model_dir=str(cache),
                                             check_hash=True)
    assert ember.equal(got["w"], sd["w"]) and (cache / good.name).exists()
    good.unlink()   # the second call reads the cached copy
    assert ember.equal(ember.hub.load_state_dict_from_url(good.as_uri(), model_dir=str(cache),
                                                          check_hash=True)["w"], sd["w"])
    with pytest.raises(RuntimeError, match="invalid hash value"):
        ember.hub.load_state_dict_from_url(bad.as_uri(), model_dir=str(cache), check_hash=True)
    assert sorted(os.listdir(cache)) == [good.name]     # nothing half-written left behind


def test_hub_local_entry_points(tmp_path, monkeypatch):
    (tmp_path / "hubconf.py").write_text(
        "import ember\n"
        "def tiny(out=3):\n    'A tiny linear model.'\n    return ember.nn.Linear(2, out)\n")
    assert ember.hub.list(str(tmp_path), source="local") == ["tiny"]
    assert ember.hub.help(str(tmp_path), "tiny", source="local") == "A tiny linear model."
    m = ember.hub.load(str(tmp_path), "tiny", out=5, source="local")
    assert m.weight.shape == (5, 2)
    with pytest.raises(RuntimeError, match="cannot find callable 'big'"):
        ember.hub.load(str(tmp_path), "big", source="local")
    with pytest.raises(RuntimeError, match="only source='local'"):
        ember.hub.load("owner/repo", "tiny")
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert pathlib.Path(ember.hub.get_dir()) == tmp_path / "th" / "hub"
    ember.hub.set_dir(tmp_path / "mine")
    try:
        assert ember.hub.get_dir() == str(tmp_path / "mine")
    finally:
        ember.hub._hub_dir = None


def test_testing_is_importable_as_attribute():
    ember.testing.assert_close(ember.ones(2), ember.ones(2))
    with pytest.raises(AssertionError):
        ember.testing.assert_close(ember.ones(2), ember.zeros(2))


def test_ops_aten_calls_and_traces():
    x, y = ember.randn(3), ember.randn(3)
    aten = ember.ops.aten
    assert ember.equal(aten.add.Tensor(x, y), x + y)
    assert ember.equal(aten.relu.default(x), ember.relu(x))
    assert ember.equal(aten.mm(ember.ones(2, 3), ember.ones(3, 1)), ember.full((2, 1), 3.0))
    assert aten.add.Tensor is aten.add.Tensor and aten.add.Tensor.name() == "aten::add.Tensor"
    with pytest.raises(AttributeError, match="ember.ops.aten: no operator named 'nope_op'"):
        aten.nope_op

    def f(a):
        return aten.sin.default(a) * 2

    gm = ember.fx.symbolic_trace(f)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert targets[0] is aten.sin.default
    np.testing.assert_allclose(gm(x).numpy(), (ember.sin(x) * 2).numpy(), rtol=1e-6)


def test_profiler_ops_and_legacy_profile_table():
    with ember.autograd.profiler.profile() as prof:
        h = ember.ops.profiler._record_function_enter("my_range")
        ember.relu(ember.randn(4))
        ember.ops.profiler._record_function_exit(h)
    table = str(prof)
    assert "my_range" in table and "relu" in table
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ember.autograd.profiler.emit_nvtx():
            pass


@pytest.mark.parity
def test_sobol_engine_matches_torch_unscrambled():
    torch = pytest.importorskip("torch")
    ours, theirs = ember.quasirandom.SobolEngine(5), torch.quasirandom.SobolEngine(5)
    np.testing.assert_array_equal(ours.draw(7).numpy(), theirs.draw(7).numpy())
    ours.fast_forward(3), theirs.fast_forward(3)
    a, b = ours.draw(4, dtype=ember.float64), theirs.draw(4, dtype=torch.float64)
    assert a.dtype == ember.float64 and ours.num_generated == theirs.num_generated == 14
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    ours.reset(), theirs.reset()
    np.testing.assert_array_equal(ours.draw_base2(3).numpy(), theirs.draw_base2(3).numpy())
    with pytest.raises(ValueError, match=r"8 \+ 2\*\*1 = 10"):
        ours.draw_base2(1)
    out = ember.empty(0)
    assert ours.draw(2, out=out) is out and out.shape == (2, 5)
    with pytest.raises(ValueError, match=r"dimensionality is \[1, 21201\]"):
        ember.quasirandom.SobolEngine(0)
    s1 = ember.quasirandom.SobolEngine(2, scramble=True, seed=4).draw(8)
    s2 = ember.quasirandom.SobolEngine(2, scramble=True, seed=4).draw(8)
    assert ember.equal(s1, s2) and ((s1 >= 0) & (s1 < 1)).all()
    # a scrambled Sobol' draw of 8 points still puts one point in each eighth of each axis
    assert sorted((s1[:, 0] * 8).floor().tolist()) == list(range(8))
