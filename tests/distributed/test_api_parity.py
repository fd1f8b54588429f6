"""ember.distributed, DistributedDataParallel and SyncBatchNorm take torch's arguments."""
from __future__ import annotations

import inspect

import pytest

import ember
import ember.distributed as dist


def _params(fn):
    return [p for p in inspect.signature(fn).parameters if not p.startswith("_")]


@pytest.mark.parity
def test_function_signatures_match_torch():
    pytest.importorskip("torch", reason="torch oracle not installed")
    import torch.distributed as tdist
    checked = 0
    for name in dist.__all__:
        ref = getattr(tdist, name, None)
        if not inspect.isfunction(ref):
            continue
        assert _params(getattr(dist, name)) == _params(ref), name
        checked += 1
    assert checked >= 40


@pytest.mark.parity
def test_module_signatures_match_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    pairs = [(ember.nn.parallel.DistributedDataParallel, torch.nn.parallel.DistributedDataParallel),
             (ember.nn.SyncBatchNorm, torch.nn.SyncBatchNorm)]
    for ours, ref in pairs:
        assert _params(ours.__init__) == _params(ref.__init__), ours.__name__
    assert (_params(ember.nn.SyncBatchNorm.convert_sync_batchnorm)
            == _params(torch.nn.SyncBatchNorm.convert_sync_batchnorm))


def test_reduce_ops_and_backend_names():
    assert {op.name for op in dist.ReduceOp} >= {"SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND",
                                                 "BOR", "BXOR"}
    assert dist.Backend("MPI") == dist.Backend.MPI == "mpi"
    assert dist.reduce_op is dist.ReduceOp
    assert dist.default_pg_timeout.total_seconds() == 1800


def test_without_mpi4py_is_available_says_why():
    """With mpi4py missing, is_available() is False and init_process_group names the reason."""
    import os
    import subprocess
    import sys
    code = (
        "import sys; sys.modules['mpi4py'] = None\n"
        "import ember.distributed as dist\n"
        "assert dist.is_available() is False and dist.is_mpi_available() is False\n"
        "try:\n"
        "    dist.init_process_group('gloo')\n"
        "except RuntimeError as e:\n"
        "    print(e)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "MPI is not available: mpi4py is not installed" in out.stdout
    assert "pip install 'ember[distributed]'" in out.stdout
