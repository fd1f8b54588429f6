"""Gap classes Hugging Face diffusers (0.42) and PyTorch Lightning (2.6) found under the alias:
names they read at import time (``torch.distributed.device_mesh`` without importing it,
``torch.distributed.constants``, ``torch.overrides.TorchFunctionMode``, ``torch._C._TensorMeta``,
``torch.ScriptModule``, ``torch.profiler.ProfilerAction`` / ``kineto_available``,
``torch.utils.flop_counter.FlopCounterMode``, pytree's ``_dict_flatten`` / ``NodeDef`` /
``_get_node_type``) and behaviours they rely on (``get_device_module``, accelerate's
``type(p)(p.to(device), **p.__dict__)``). Each is checked against torch 2.13."""
from __future__ import annotations

import collections
import importlib

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def test_distributed_device_mesh_and_constants_are_there_after_importing_the_package():
    for lib in (ember, torch):
        dist = importlib.import_module(lib.__name__ + ".distributed")
        assert dist.device_mesh.DeviceMesh is dist.DeviceMesh
        assert dist.init_device_mesh is dist.device_mesh.init_device_mesh
    constants = importlib.import_module("ember.distributed.constants")
    assert constants.default_pg_timeout == torch.distributed.constants.default_pg_timeout
    assert constants.default_pg_nccl_timeout is None
    with pytest.raises(NotImplementedError, match="DeviceMesh"):
        ember.distributed.DeviceMesh("cpu", [0])


def test_torch_function_mode_stack_as_torch():
    from torch.overrides import _get_current_function_mode as t_current

    from ember.overrides import (
        TorchFunctionMode,
        _get_current_function_mode,
        _get_current_function_mode_stack,
    )

    class Mine(TorchFunctionMode):
        def __init__(self, enabled):
            super().__init__()
            self.enabled = enabled

    for base, current in ((TorchFunctionMode, _get_current_function_mode),
                          (torch.overrides.TorchFunctionMode, t_current)):
        outer, inner = base(), base()
        assert current() is None
        with outer as entered:
            assert entered is outer and current() is outer
            with inner:
                assert current() is inner
            assert current() is outer
        assert current() is None
        with pytest.raises(NotImplementedError):
            base().__torch_function__(None, (), ())
    with Mine(enabled=False) as m:
        assert _get_current_function_mode_stack() == [m]
        assert ember.ones(2).sum().item() == 2.0  # ember calls no __torch_function__
    outer, inner = TorchFunctionMode(), TorchFunctionMode()
    outer.__enter__()
    inner.__enter__()
    with pytest.raises(RuntimeError, match="reverse order"):
        outer.__exit__(None, None, None)
    inner.__exit__(None, None, None)
    outer.__exit__(None, None, None)


def test_overrides_helpers_as_torch():
    class HasTF:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    for lib, o in ((ember, ember.overrides), (torch, torch.overrides)):
        assert o.has_torch_function((1, lib.ones(1))) is False
        assert o.has_torch_function((HasTF(),)) is True
        assert o.has_torch_function_unary(HasTF()) is True
        assert o.has_torch_function_variadic(1, 2) is False
        assert o.is_tensor_like(lib.ones(1)) and o.is_tensor_like(HasTF())
        assert not o.is_tensor_like(1)
        assert isinstance(o.get_default_nowrap_functions(), set)


def test_c_names_and_script_module():
    from ember._C import _TensorMeta
    assert isinstance(ember.Tensor, _TensorMeta)
    assert isinstance(torch.Tensor, torch._C._TensorMeta)
    assert ember.ScriptModule is ember.jit.ScriptModule
    assert ember.ScriptFunction is ember.jit.ScriptFunction
    assert issubclass(ember.ScriptModule, ember.nn.Module)
    assert issubclass(torch.ScriptModule, torch.nn.Module) or hasattr(torch, "ScriptModule")
    with pytest.raises(NotImplementedError, match="PyTorchFileReader.*ember.load"):
        ember.PyTorchFileReader("x.pt")


def test_profiler_action_and_kineto():
    assert [(a.name, a.value) for a in ember.profiler.ProfilerAction] == \
        [(a.name, a.value) for a in torch.profiler.ProfilerAction]
    assert ember.profiler.kineto_available() is False
    assert isinstance(torch.profiler.kineto_available(), bool)


def test_flop_counter_reads_as_torch_before_use_and_refuses_to_count():
    from torch.utils.flop_counter import FlopCounterMode as TorchFCM

    from ember.utils.flop_counter import FlopCounterMode
    got, want = FlopCounterMode(display=False, depth=2), TorchFCM(display=False, depth=2)
    assert got.get_total_flops() == want.get_total_flops() == 0
    assert got.get_flop_counts() == {k: dict(v) for k, v in want.get_flop_counts().items()}
    with pytest.raises(NotImplementedError, match="FlopCounterMode"):
        with got:
            pass


def test_pytree_dict_flatten_and_node_defs_as_torch():
    from torch.utils import _pytree as T

    from ember.utils import _pytree as P
    d = {"b": 1, "a": [2, 3]}
    assert P._dict_flatten(d) == T._dict_flatten(d)
    assert P._dict_unflatten(*T._dict_flatten(d)) == d
    Point = collections.namedtuple("Point", "x y")
    for mod in (P, T):
        assert mod._get_node_type(Point(1, 2)) is collections.namedtuple
        assert mod._get_node_type([1]) is list and mod._get_node_type(1) is int
        node = mod.SUPPORTED_NODES[mod._get_node_type(Point(1, 2))]
        children, context = node.flatten_fn(Point(1, 2))
        assert list(children) == [1, 2] and context is Point
        assert node.unflatten_fn([3, 4], context) == Point(3, 4)
        assert mod.SUPPORTED_NODES[list].type is list
    # a tree walked by hand as Lightning does, then rebuilt from the specs it built
    spec = P.TreeSpec(list, None, [P.LeafSpec(), P.TreeSpec(collections.namedtuple, Point,
                                                            [P.LeafSpec(), P.LeafSpec()])])
    assert P.tree_unflatten([1, 2, 3], spec) == [1, Point(2, 3)]
    assert P.tree_flatten([1, Point(2, 3)]) == ([1, 2, 3], spec)

    class Out(dict):
        pass

    P.register_pytree_node(Out, P._dict_flatten, lambda v, c: Out(**P._dict_unflatten(v, c)))
    try:
        leaves, spec = P.tree_flatten(Out(a=1, b=(2, 3)))
        assert leaves == [1, 2, 3]
        assert P.tree_unflatten([4, 5, 6], spec) == Out(a=4, b=(5, 6))
    finally:
        P.SUPPORTED_NODES.pop(Out)


def test_get_device_module_as_torch():
    for lib in (ember, torch):
        assert lib.get_device_module() is lib.cpu
        assert lib.get_device_module("cpu") is lib.cpu
        assert lib.get_device_module(lib.device("cpu")) is lib.cpu
        assert lib.get_device_module(device="cuda:0") is lib.cuda
        with pytest.raises(RuntimeError, match="Device 'meta' does not have a corresponding"):
            lib.get_device_module("meta")


def test_parameter_rebuilt_from_its_dict_as_accelerate_does():
    # accelerate's init_empty_weights: type(p)(p.to(device), **p.__dict__) with requires_grad
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.arange(3.0))
        kwargs = dict(p.__dict__)
        kwargs["requires_grad"] = False
        q = type(p)(p.to("cpu"), **kwargs)
        assert type(q) is type(p) and not q.requires_grad
        np.testing.assert_array_equal(q.detach().numpy(), [0.0, 1.0, 2.0])
        with pytest.raises(TypeError, match="unexpected keyword argument 'color'"):
            type(p)(p, color=1)


def test_parse_to_as_torch():
    from ember._C import _nn
    cases = [(("cpu",), {}), ((ember.float64,), {}),
             (("cpu", ember.float16), {"non_blocking": True}), (("cpu", ember.float32, True), {}),
             ((), {"memory_format": ember.channels_last}), ((), {"device": "cpu"}), ((), {})]
    for args, kwargs in cases:
        targs = [getattr(torch, str(a).split(".")[1]) if isinstance(a, ember.dtype) else a
                 for a in args]
        tkw = {k: torch.channels_last if k == "memory_format" else v for k, v in kwargs.items()}
        got = _nn._parse_to(*args, **kwargs)
        want = torch._C._nn._parse_to(*targs, **tkw)
        assert [str(g).replace("ember", "torch") for g in got] == [str(w) for w in want]
    got = _nn._parse_to(ember.ones(1, dtype=ember.int32))
    assert got[:2] == (ember.device("cpu"), ember.int32)
    with pytest.raises(TypeError, match=r"invalid combination of arguments - got \(str, str\)"):
        _nn._parse_to("cpu", "cpu")
    copies = ((("cpu", ember.float32, False, False), {}), ((ember.float32,), {"copy": 1}))
    for args, kwargs in copies:
        with pytest.raises(RuntimeError, match="does not accept copy argument"):
            _nn._parse_to(*args, **kwargs)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        _nn._parse_to(colour=1)
    assert ember._C._log_api_usage_once("torchmetrics.metric.X") is None


def test_is_available_does_not_load_mpi(tmp_path):
    # Lightning's MPIEnvironment.detect imports mpi4py.MPI and asks COMM_WORLD's size after
    # ember.distributed.is_available(): that must find MPI initialised by mpi4py as usual
    pytest.importorskip("mpi4py")
    import subprocess
    import sys
    code = ("import sys, ember.distributed as d; ok = d.is_available(); "
            "assert 'mpi4py.MPI' not in sys.modules; from mpi4py import MPI; "
            "print(ok, MPI.COMM_WORLD.Get_size())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path,
                         env={**__import__("os").environ,
                              "PYTHONPATH": str(__import__("pathlib").Path(ember.__file__)
                                                .parent.parent)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "1"]


def test_generator_device_is_a_device_as_torch():
    import pickle
    for lib in (ember, torch):
        g = lib.Generator()
        assert isinstance(g.device, lib.device) and g.device.type == "cpu"
        assert lib.Generator(device=lib.device("cpu")).device == lib.device("cpu")
        assert pickle.loads(pickle.dumps(g)).device.type == "cpu"


def test_fsdp1_names_and_wrap_policies_as_torch():
    import dataclasses

    from torch.distributed.fsdp import wrap as t_wrap

    from ember.distributed import fsdp
    from ember.distributed.fsdp import wrap
    assert [(m.name, m.value) for m in fsdp.ShardingStrategy] == \
        [(m.name, m.value) for m in torch.distributed.fsdp.ShardingStrategy]
    assert [f.name for f in dataclasses.fields(fsdp.CPUOffload)] == ["offload_params"]
    assert fsdp.CPUOffload().offload_params is torch.distributed.fsdp.CPUOffload().offload_params
    for lib, w in ((ember, wrap), (torch, t_wrap)):
        block = lib.nn.Linear(2, 2)
        for recurse in (True, False):
            for module in (block, lib.nn.ReLU()):
                got = w.transformer_auto_wrap_policy(module, recurse, 10, {lib.nn.Linear})
                assert got is (recurse or module is block)
        assert w.always_wrap_policy(block, False, 0) is True
