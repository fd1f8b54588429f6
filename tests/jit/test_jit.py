"""ember.jit: trace, script, save/load (no code executed on load), freeze, decorators."""
from __future__ import annotations

import io
import json
import warnings
import zipfile

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        y = F.relu(self.bn(self.conv(x)))
        return self.fc(y.flatten(1)).softmax(dim=-1)


def _np(t):
    return t.detach().numpy()


def test_trace_records_graph_and_code_and_runs():
    m = Net().eval()
    x = ember.randn(2, 3, 4, 4)
    traced = ember.jit.trace(m, (x,))
    assert isinstance(traced, ember.jit.ScriptModule)
    ops = [n.op for n in traced.graph.nodes]
    assert ops[0] == "placeholder" and ops[-1] == "output" and "call_module" in ops
    assert "def forward(self, x):" in traced.code
    y = ember.randn(3, 3, 4, 4)
    np.testing.assert_allclose(_np(traced(y)), _np(m(y)), rtol=1e-6)


def test_trace_warns_on_data_dependent_python_and_keeps_branch():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    with pytest.warns(ember.jit.TracerWarning, match="might cause the trace to be incorrect"):
        traced = ember.jit.trace(f, (ember.ones(2),))
    # the branch taken on the example is baked in: the trace does not generalise
    np.testing.assert_allclose(_np(traced(-ember.ones(2))), [-2.0, -2.0])


def test_trace_item_warns_and_check_trace_reports_nondeterminism():
    def scale(x):
        return x * x.max().item()

    with pytest.warns(ember.jit.TracerWarning, match="Python number"):
        ember.jit.trace(scale, (ember.tensor([1.0, 3.0]),))
    drop = nn.Dropout(0.5).train()
    with pytest.warns(ember.jit.TracerWarning, match="does not match"):
        ember.jit.trace(drop, (ember.ones(64),))


def test_is_tracing_and_is_scripting_inside_capture():
    seen = []

    class M(nn.Module):
        def forward(self, x):
            seen.append((ember.jit.is_tracing(), ember.jit.is_scripting()))
            return x + 1

    ember.jit.trace(M(), (ember.ones(1),), check_trace=False)
    ember.jit.script(M())
    assert seen == [(True, False), (False, True)]
    assert not ember.jit.is_tracing() and not ember.jit.is_scripting()


def test_script_module_and_function():
    m = Net().eval()
    s = ember.jit.script(m)
    x = ember.randn(2, 3, 4, 4)
    np.testing.assert_allclose(_np(s(x)), _np(m(x)), rtol=1e-6)

    @ember.jit.script
    def f(x, y):
        return ember.relu(x) * y

    assert isinstance(f, ember.jit.ScriptFunction)
    np.testing.assert_allclose(_np(f(ember.tensor([-1.0, 2.0]), ember.tensor(3.0))), [0.0, 6.0])


def test_script_rejects_data_dependent_control_flow_with_line():
    class M(nn.Module):
        def forward(self, x):
            if x.mean() > 0:
                x = x * 2
            return x

    with pytest.raises(ember.jit.Error, match=r"a data-dependent `if` is not supported: "
                                              r"`if x.mean\(\) > 0:` at .*test_jit.py:\d+, "
                                              r"in forward"):
        ember.jit.script(M())

    def loop(x):
        for row in x:
            x = x + row
        return x

    with pytest.raises(ember.jit.Error, match="data-dependent `for`"):
        ember.jit.script(loop)


def test_script_ignore_unused_export():
    class M(nn.Module):
        @ember.jit.ignore
        def helper(self, x):
            return x + float(x.sum())       # Python on values: kept as a call

        @ember.jit.unused
        def debug(self, x):
            return x

        @ember.jit.export
        def extra(self, x):
            return x * 10

        def forward(self, x, use_debug: bool = False):
            if use_debug:
                return self.debug(x)
            return self.helper(x)

    s = ember.jit.script(M())
    np.testing.assert_allclose(_np(s(ember.ones(2))), [3.0, 3.0])
    np.testing.assert_allclose(_np(s.extra(ember.ones(1))), [10.0])


def test_save_load_round_trip(tmp_path):
    m = Net().eval()
    traced = ember.jit.trace(m, (ember.randn(2, 3, 4, 4),))
    path = tmp_path / "net.pt"
    ember.jit.save(traced, str(path))
    loaded = ember.jit.load(str(path))
    x = ember.randn(2, 3, 4, 4)
    np.testing.assert_allclose(_np(loaded(x)), _np(m(x)), rtol=1e-6)
    assert loaded.code == traced.code
    buf = io.BytesIO()
    ember.jit.script(m).save(buf)
    buf.seek(0)
    np.testing.assert_allclose(_np(ember.jit.load(buf)(x)), _np(m(x)), rtol=1e-6)


def test_archive_is_json_and_tensors_only(tmp_path):
    traced = ember.jit.trace(Net().eval(), (ember.ones(1, 3, 4, 4),))
    buf = io.BytesIO()
    ember.jit.save(traced, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        assert sorted(z.namelist()) == ["ember_jit/graph.json", "ember_jit/modules.json",
                                        "ember_jit/tensors.pt", "ember_jit/version"]
        graph = json.loads(z.read("ember_jit/graph.json"))
        modules = json.loads(z.read("ember_jit/modules.json"))
    targets = [n["target"] for n in graph["nodes"] if n["op"] == "call_function"]
    assert targets == ["ember.nn.functional.relu"]
    assert modules["children"]["conv"]["class"] == "ember.nn.modules.conv.Conv2d"
    assert modules["children"]["conv"]["attrs"]["padding"] == {"tuple": [1, 1]}


def _tampered(buf, replace):
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name in src.namelist():
            data = src.read(name)
            if name in replace:
                data = replace[name](data)
            z.writestr(name, data)
    out.seek(0)
    return out


def test_load_refuses_names_outside_allowlist():
    traced = ember.jit.trace(lambda x: ember.relu(x), (ember.ones(2),))
    buf = io.BytesIO()
    ember.jit.save(traced, buf)
    evil = _tampered(buf, {"ember_jit/graph.json":
                           lambda d: d.replace(b"ember.relu", b"os.system")})
    with pytest.raises(ember.jit.SerializationError, match="'os.system'"):
        ember.jit.load(evil)
    evil = _tampered(buf, {"ember_jit/modules.json":
                           lambda d: d.replace(b"ember.nn.modules.module.Module",
                                               b"subprocess.Popen")})
    with pytest.raises(ember.jit.SerializationError, match="only ember.nn classes"):
        ember.jit.load(evil)


def test_save_refuses_python_functions():
    def my_fn(x):
        return x

    traced = ember.jit.script(lambda x: x + 1)
    g = traced.graph
    out = g.find_nodes(op="output")[0]
    with g.inserting_before(out):
        g.call_function(my_fn, (out.args[0],))
    with pytest.raises(ember.jit.SerializationError, match="my_fn"):
        ember.jit.save(traced, io.BytesIO())


def test_freeze_and_optimize_for_inference():
    m = Net()
    s = ember.jit.script(m)
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        ember.jit.freeze(s)
    m.eval()
    s = ember.jit.script(m)
    frozen = ember.jit.freeze(s)
    assert list(frozen.parameters()) == []
    x = ember.randn(2, 3, 4, 4)
    np.testing.assert_allclose(_np(frozen(x)), _np(m(x)), rtol=1e-6)
    fast = ember.jit.optimize_for_inference(s)
    assert not any(isinstance(mod, nn.BatchNorm2d) for mod in fast.modules())
    np.testing.assert_allclose(_np(fast(x)), _np(m(x)), rtol=1e-5, atol=1e-6)


def test_trace_lstm_tuple_outputs():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(3, 4)

        def forward(self, x):
            out, (h, c) = self.lstm(x)
            return out[-1] + h[0]

    m = M()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ember.jit.TracerWarning)
        traced = ember.jit.trace(m, (ember.randn(5, 2, 3),))
    x = ember.randn(5, 2, 3)
    np.testing.assert_allclose(_np(traced(x)), _np(m(x)), rtol=1e-6)
    buf = io.BytesIO()
    ember.jit.save(traced, buf)
    buf.seek(0)
    np.testing.assert_allclose(_np(ember.jit.load(buf)(x)), _np(m(x)), rtol=1e-6)


def test_trace_warns_when_a_tensor_becomes_a_constant():
    def f(x):
        return x + ember.tensor([float(x.shape[0])])

    with pytest.warns(ember.jit.TracerWarning, match="recorded as a constant"):
        traced = ember.jit.trace(f, (ember.ones(2),))
    np.testing.assert_allclose(_np(traced(ember.ones(3))), [3.0, 3.0, 3.0])   # baked: 2 + 1
