"""ember.export's classes at torch's submodule paths, and ``dims``."""
from __future__ import annotations

import pytest

import ember
from ember.export import dynamic_shapes, exported_program, graph_signature


def test_export_submodules_hold_the_package_classes():
    assert exported_program.ExportedProgram is ember.export.ExportedProgram
    assert graph_signature.InputSpec is ember.export.InputSpec
    assert graph_signature.InputKind.PARAMETER is ember.export.InputKind.PARAMETER
    assert dynamic_shapes.Dim is ember.export.Dim


def test_dims_makes_one_dim_per_name_with_the_same_range():
    batch, seq = ember.export.dims("batch", "seq", min=2, max=64)
    assert (batch.__name__, seq.__name__) == ("batch", "seq")
    assert (batch.min, batch.max, seq.min, seq.max) == (2, 64, 2, 64)
    assert ember.export.dims() == ()
    model = ember.nn.Linear(3, 2)
    ep = ember.export.export(model, (ember.randn(4, 3),), dynamic_shapes=({0: batch},))
    x = ember.randn(7, 3)
    assert ember.allclose(ep.module()(x), model(x))


@pytest.mark.parity
def test_dims_matches_torch():
    torch = pytest.importorskip("torch")
    a, b = torch.export.dims("a", "b", min=2, max=9)
    ours = ember.export.dims("a", "b", min=2, max=9)
    assert [(d.__name__, d.min, d.max) for d in ours] == [(a.__name__, a.min, a.max),
                                                         (b.__name__, b.min, b.max)]
