"""ember.export: lifted parameters, graph signature, module(), dynamic shapes, save/load."""
from __future__ import annotations

import io

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.export import Dim, InputKind, export


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4, 2)
        self.register_buffer("scale", ember.tensor(2.0))

    def forward(self, x):
        y = self.pool(ember.relu(self.bn(self.conv(x)))).flatten(1)
        return self.fc(y) * self.scale


def _np(t):
    return t.detach().numpy()


def test_export_lifts_parameters_and_buffers():
    m = ConvNet().eval()
    ep = export(m, (ember.randn(2, 3, 5, 5),))
    sig = ep.graph_signature
    kinds = [(s.kind, s.target) for s in sig.input_specs]
    assert kinds[-1] == (InputKind.USER_INPUT, None)
    assert set(sig.parameters) == {"conv.weight", "conv.bias", "bn.weight", "bn.bias",
                                   "fc.weight", "fc.bias"}
    assert set(sig.buffers) == {"bn.running_mean", "bn.running_var", "scale"}
    assert sig.inputs_to_parameters["p_conv_weight"] == "conv.weight"
    assert [n.op for n in ep.graph.nodes].count("call_module") == 0   # functions only
    placeholders = [n.name for n in ep.graph.nodes if n.op == "placeholder"]
    assert placeholders == [s.arg.name for s in sig.input_specs]
    x = ember.randn(2, 3, 5, 5)
    np.testing.assert_allclose(_np(ep.module()(x)), _np(m(x)), rtol=1e-5, atol=1e-6)
    assert set(ep.state_dict) == set(m.state_dict()) - {"bn.num_batches_tracked"}


def test_exported_program_not_callable_and_graph_module_takes_lifted_inputs():
    m = nn.Linear(3, 2)
    ep = export(m, (ember.ones(1, 3),))
    with pytest.raises(RuntimeError, match="Unable to call ExportedProgram directly"):
        ep(ember.ones(1, 3))
    x = ember.randn(4, 3)
    out = ep.graph_module(m.weight, m.bias, x)
    np.testing.assert_allclose(_np(out), _np(m(x)), rtol=1e-6)


def test_layers_without_functional_form_stay_modules():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)
            self.lstm = nn.LSTM(4, 4)

        def forward(self, ids):
            out, _ = self.lstm(self.emb(ids))
            return out

    m = M()
    ep = export(m, (ember.tensor([[1, 2], [3, 4]]),))
    assert [n.target for n in ep.graph.nodes if n.op == "call_module"] == ["lstm"]
    assert ep.graph_signature.parameters == ["emb.weight"]
    ids = ember.tensor([[1, 5], [7, 2], [0, 0]])
    np.testing.assert_allclose(_np(ep.module()(ids)), _np(m(ids)), rtol=1e-6)


def test_dynamic_shapes_checked_and_recorded():
    class Good(nn.Module):
        def forward(self, x):
            return x.view(x.shape[0], -1).sum(dim=1)

    class Bad(nn.Module):
        def forward(self, x):
            return x.view(2, 12).sum(dim=1)       # batch size baked in

    batch = Dim("batch", min=1, max=64)
    ep = export(Good(), (ember.ones(2, 3, 4),), dynamic_shapes={"x": {0: batch}})
    assert ep.range_constraints == {"batch": (1, 64)}
    assert ep.module()(ember.ones(5, 3, 4)).shape == (5,)
    with pytest.raises(ember.export.ExportError, match="Constraints violated"):
        export(Bad(), (ember.ones(2, 3, 4),), dynamic_shapes=({0: batch},))


def test_data_dependent_control_flow_names_line():
    class M(nn.Module):
        def forward(self, x):
            while x.sum() > 1:
                x = x / 2
            return x

    with pytest.raises(ember.export.ExportError, match=r"data-dependent `while`.*"
                                                       r"test_export.py:\d+"):
        export(M(), (ember.ones(3),))


def test_export_argument_errors():
    with pytest.raises(ValueError, match="Expected `mod` to be an instance"):
        export(lambda x: x, (ember.ones(1),))
    with pytest.raises(ValueError, match="Expecting `args` to be a tuple"):
        export(nn.ReLU(), ember.ones(1))


def test_save_load_round_trip(tmp_path):
    m = ConvNet().eval()
    ep = export(m, (ember.randn(1, 3, 4, 4),), dynamic_shapes={"x": {0: Dim("b")}})
    path = tmp_path / "prog.pt2"
    ember.export.save(ep, str(path))
    loaded = ember.export.load(str(path))
    assert loaded.graph_signature == ep.graph_signature
    assert loaded.range_constraints == ep.range_constraints
    x = ember.randn(3, 3, 4, 4)
    np.testing.assert_allclose(_np(loaded.module()(x)), _np(m(x)), rtol=1e-5, atol=1e-6)
    buf = io.BytesIO()
    ember.export.save(ep, buf)
    buf.seek(0)
    assert str(ember.export.load(buf).graph) == str(ep.graph)


@pytest.mark.parity
def test_signature_kinds_match_torch_export():
    torch = pytest.importorskip("torch")

    def build(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU())

    ours = export(build(ember).eval(), (ember.ones(2, 3),))
    ref = torch.export.export(build(torch).eval(), (torch.ones(2, 3),))
    want = [(s.kind.name, s.target) for s in ref.graph_signature.input_specs
            if s.target is None or "num_batches" not in s.target]
    assert [(s.kind.name, s.target) for s in ours.graph_signature.input_specs] == want
