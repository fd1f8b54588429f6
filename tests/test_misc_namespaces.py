"""ember.distributed, ember.nn.parallel, ember.onnx, ember.compile and the thread settings."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.parallel as parallel
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter


class _Scale(Module):
    def __init__(self):
        super().__init__()
        self.w = Parameter(ember.tensor([2.0, 3.0]))

    def forward(self, x, shift=0.0):
        return x * self.w + shift


# ------------------------------------------------------------------------------ distributed
def test_distributed_answers_truthfully():
    dist = ember.distributed
    from ember.distributed import _mpi
    assert dist.is_available() is (_mpi.unavailable_reason() is None)
    assert dist.is_initialized() is False
    assert dist.is_nccl_available() is False
    with pytest.raises(RuntimeError, match="only supported with GPUs"):
        dist.init_process_group("nccl")
    with pytest.raises(ValueError, match="unknown backend"):
        dist.init_process_group("carrier-pigeon")
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.all_reduce(ember.ones(1))
    assert dist.ReduceOp.SUM != dist.ReduceOp.MAX and dist.Backend("GLOO") == "gloo"


@pytest.mark.parity
def test_distributed_uninitialized_errors_match_torch():
    pytest.importorskip("torch", reason="torch oracle not installed")
    import torch.distributed as tdist
    for name in ("get_rank", "get_world_size", "barrier"):
        with pytest.raises(ValueError):
            getattr(tdist, name)()
        with pytest.raises(ValueError):
            getattr(ember.distributed, name)()
    assert ember.distributed.is_initialized() == tdist.is_initialized()


# --------------------------------------------------------------------------------- parallel
def test_data_parallel_calls_module_unchanged():
    m = _Scale()
    dp = parallel.DataParallel(m, device_ids=[0, 1])
    assert dp.module is m and dp.device_ids == []
    x = ember.tensor([1.0, 1.0])
    np.testing.assert_allclose(dp(x, shift=1.0).detach().numpy(), [3.0, 4.0])
    assert list(dp.state_dict()) == ["module.w"]
    dp(x).sum().backward()
    np.testing.assert_allclose(m.w.grad.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(parallel.data_parallel(m, x).detach().numpy(), [2.0, 3.0])


def test_distributed_data_parallel_needs_a_process_group():
    with pytest.raises(ValueError, match="has not been initialized"):
        parallel.DistributedDataParallel(_Scale())


@pytest.mark.parity
def test_data_parallel_state_dict_keys_match_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    ref = torch.nn.parallel.DataParallel(torch.nn.Linear(2, 2))
    ours = parallel.DataParallel(_Scale())
    assert all(k.startswith("module.") for k in ref.state_dict())
    assert all(k.startswith("module.") for k in ours.state_dict())
    assert ours.device_ids == ref.device_ids == []


# ------------------------------------------------------------------------------ onnx/compile
def test_onnx_export_writes_a_model(tmp_path):
    pytest.importorskip("onnx", reason="ember.onnx.export needs the optional onnx package")
    assert ember.onnx.is_in_onnx_export() is False
    ember.onnx.export(_Scale(), (ember.ones(2),), tmp_path / "model.onnx")
    assert (tmp_path / "model.onnx").stat().st_size > 0   # full checks: tests/onnx/


def test_compile_wraps_model_and_functions():
    m = _Scale()
    c = ember.compile(m)
    assert type(c).__name__ == "OptimizedModule" and c._orig_mod is m
    x = ember.ones(2)
    for _ in range(2):  # capture, then replay
        assert c(x).tolist() == m(x).tolist()
    assert ember.compile(m, disable=True) is m

    def f(x):
        return x + 1

    assert ember.compile(f, backend="eager")(ember.tensor(1.0)).item() == 2.0

    @ember.compile(mode="reduce-overhead")
    def g(x):
        return x * 2

    assert g(ember.tensor(2.0)).item() == 4.0 and g.__name__ == "g"
    with pytest.raises(RuntimeError, match="mode or options"):
        ember.compile(f, mode="default", options={"a": 1})


# ---------------------------------------------------------------------------------- threads
def test_set_num_threads_controls_blas_and_numba():
    numba = pytest.importorskip("numba", reason="numba is ember's kernel compiler")
    from threadpoolctl import threadpool_info
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        assert ember.get_num_threads() == 1
        assert numba.get_num_threads() == 1
        blas = [p for p in threadpool_info() if p["user_api"] == "blas"]
        assert blas and all(p["num_threads"] == 1 for p in blas)
        # still correct results with a single thread
        a = np.arange(6.0).reshape(2, 3)
        np.testing.assert_allclose((ember.tensor(a) @ ember.tensor(a.T)).numpy(), a @ a.T)
    finally:
        ember.set_num_threads(before)
    assert ember.get_num_threads() == before
    assert numba.get_num_threads() == min(before, numba.config.NUMBA_NUM_THREADS)


def test_set_num_threads_errors_and_interop():
    for bad in (0, -1):
        with pytest.raises(RuntimeError, match="positive integer"):
            ember.set_num_threads(bad)
    with pytest.raises(RuntimeError, match="expects an int"):
        ember.set_num_threads(2.5)
    assert ember.get_num_interop_threads() >= 1
    with pytest.raises(RuntimeError, match="positive integer"):
        ember.set_num_interop_threads(0)


@pytest.mark.parity
def test_thread_setter_errors_match_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    for bad in (0, 2.5):
        with pytest.raises(RuntimeError):
            torch.set_num_threads(bad)
        with pytest.raises(RuntimeError):
            ember.set_num_threads(bad)


def test_optimized_module_is_exported_from_dynamo():
    # torch._dynamo.OptimizedModule is the class of torch.compile(module) (Lightning imports it)
    from ember._dynamo import OptimizedModule
    from ember._dynamo.eval_frame import OptimizedModule as same
    assert OptimizedModule is same and "OptimizedModule" in ember._dynamo.__all__
    assert isinstance(ember.compile(_Scale()), OptimizedModule)
    assert not isinstance(_Scale(), OptimizedModule)
    with pytest.raises(AttributeError, match="no attribute 'NoSuchThing'"):
        ember._dynamo.NoSuchThing
