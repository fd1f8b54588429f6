"""Module paths programs import at the top and use only with several GPUs: DLRM's
`from torch._ops import ops` and `from torch.nn.parallel.{parallel_apply, replicate,
scatter_gather} import ...`. They import; called, they refuse as torch's CPU build does (a "cpu"
device is a ValueError, anything else an assertion that there is nothing to copy to)."""
import importlib

import pytest

import ember
from ember import nn
from ember._backend import NoCudaError


def test_ops_module_path_is_torch_ops():
    from ember._ops import OpOverloadPacket, ops
    assert ops is ember.ops
    assert isinstance(ops.aten.add, OpOverloadPacket)
    x = ember.tensor([1.0, 2.0])
    assert ops.aten.add(x, x).tolist() == [2.0, 4.0]


@pytest.mark.parametrize("path, names", [
    ("ember.nn.parallel.scatter_gather", ["scatter", "gather", "scatter_kwargs"]),
    ("ember.nn.parallel.replicate", ["replicate"]),
    ("ember.nn.parallel.parallel_apply", ["parallel_apply"]),
])
def test_parallel_submodules_import(path, names):
    module = importlib.import_module(path)
    assert all(callable(getattr(module, n)) for n in names)


def _calls(lib):
    from importlib import import_module
    sg = import_module(lib.__name__ + ".nn.parallel.scatter_gather")
    rep = import_module(lib.__name__ + ".nn.parallel.replicate")
    pa = import_module(lib.__name__ + ".nn.parallel.parallel_apply")
    x = lib.ones(4, 2)
    lin = lib.nn.Linear(2, 2)
    return [
        lambda: sg.scatter(x, ["cpu"]),
        lambda: sg.gather([x, x], "cpu"),
        lambda: rep.replicate(lin, ["cpu"]),
        lambda: rep.replicate(lin, [0]),
        lambda: pa.parallel_apply([lin, lin], [x, x]),
        lambda: pa.parallel_apply([lin, lin], [x, x], devices=["cpu", "cpu"]),
    ]


def test_parallel_helpers_refuse_without_cuda_devices():
    scatter_cpu, gather, replicate_cpu, replicate_ids, apply_plain, apply_cpu = _calls(ember)
    with pytest.raises(ValueError, match="Expected a non cpu device, but got: cpu"):
        scatter_cpu()
    with pytest.raises(AssertionError, match="Gather function not implemented for CPU"):
        gather()
    with pytest.raises(ValueError, match="Expected a non cpu device"):
        replicate_cpu()
    with pytest.raises(NoCudaError, match="Broadcast function not implemented for CPU"):
        replicate_ids()
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        apply_plain()
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        apply_cpu()
    with pytest.raises(NoCudaError, match="scatter: needs CUDA devices"):
        importlib.import_module("ember.nn.parallel.scatter_gather").scatter(ember.ones(2), [0])
    assert isinstance(nn.Linear(2, 2)(ember.ones(1, 2)), ember.Tensor)


@pytest.mark.parity
def test_parallel_helpers_raise_torch_s_exception_types():
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_calls(ember), _calls(torch), strict=True):
        with pytest.raises(Exception) as want:
            theirs()
        with pytest.raises(type(want.value)):
            ours()
