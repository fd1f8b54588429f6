"""ember.distributed's process-free queries: supports_complex, DebugLevel/get_debug_level and
the reduce_op spelling, at torch's paths (ember.distributed and distributed_c10d)."""
from __future__ import annotations

import pytest

import ember.distributed as dist
from ember.distributed import distributed_c10d as c10d

COMPLEX_OK = {"SUM": True, "AVG": True, "PREMUL_SUM": True, "PRODUCT": False, "MIN": False,
              "MAX": False, "BAND": False, "BOR": False, "BXOR": False}


@pytest.mark.parametrize("op,expected", sorted(COMPLEX_OK.items()))
def test_supports_complex(op, expected):
    assert dist.supports_complex(getattr(dist.ReduceOp, op)) is expected
    assert c10d.supports_complex is dist.supports_complex


@pytest.mark.parametrize("env,level", [(None, "OFF"), ("info", "INFO"), ("DETAIL", "DETAIL"),
                                       ("Off", "OFF")])
def test_get_debug_level_reads_environment(monkeypatch, env, level):
    if env is None:
        monkeypatch.delenv("TORCH_DISTRIBUTED_DEBUG", raising=False)
    else:
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", env)
    got = c10d.get_debug_level()
    assert got is c10d.DebugLevel[level] and int(got) == ("OFF", "INFO", "DETAIL").index(level)


def test_get_debug_level_rejects_unknown(monkeypatch):
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "verbose")
    with pytest.raises(ValueError, match="OFF, INFO, or DETAIL; got 'verbose'"):
        dist.get_debug_level()


def test_reduce_op_old_spelling():
    assert c10d.reduce_op.SUM is dist.ReduceOp.SUM


@pytest.mark.parity
def test_c10d_queries_match_torch():
    torch = pytest.importorskip("torch")
    theirs = torch.distributed.distributed_c10d
    for op in COMPLEX_OK:
        assert theirs.supports_complex(getattr(theirs.ReduceOp, op)) == COMPLEX_OK[op]
    assert list(theirs.DebugLevel.__members__) == list(c10d.DebugLevel.__members__)
    assert [int(v) for v in theirs.DebugLevel.__members__.values()] == [0, 1, 2]
