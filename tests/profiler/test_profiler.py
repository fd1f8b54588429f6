"""The profiler: op events forward and backward, ranges, tables, traces, memory."""
import json

import numpy as np
import pytest

import ember
from ember.profiler import profile, record_function


def _step(w, x):
    loss = (x @ w).tanh().pow(2).mean()
    loss.backward()
    with ember.no_grad():
        w.sub_(0.1 * w.grad)
    w.grad = None
    return loss


def test_records_forward_and_backward_ops_with_shapes():
    w = ember.randn(16, 8, requires_grad=True)
    x = ember.randn(4, 16)
    with profile(record_shapes=True) as prof:
        with record_function("train_step"):
            _step(w, x)
    names = [e.name for e in prof.events]
    assert "matmul" in names and "tanh" in names and "MmBackward0" in names
    assert "train_step" in names
    mm = next(e for e in prof.events if e.name == "matmul")
    assert mm.shapes == [[4, 16], [16, 8]] and mm.dur_us >= 0
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["matmul"].count >= 1 and avg["TanhBackward0"].count == 1


def test_table_sorting_and_bad_key():
    with profile() as prof:
        (ember.ones(3, requires_grad=True) * 2).sum().backward()
    text = prof.key_averages().table(sort_by="cpu_time_total", row_limit=3)
    assert "Name" in text and len(text.splitlines()) <= 3 + 4
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="nope")


def test_self_time_excludes_nested_events():
    # a backward node that runs ember ops (MmBackward0 runs matmuls) and a range around all
    w = ember.randn(64, 32, requires_grad=True)
    x = ember.randn(128, 64)
    with profile() as prof:
        with record_function("outer"):
            _step(w, x)
    avg = {a.key: a for a in prof.key_averages()}
    outer, node = avg["outer"], avg["MmBackward0"]
    assert 0 <= outer.self_cpu_time_total < outer.cpu_time_total
    assert 0 <= node.self_cpu_time_total < node.cpu_time_total
    # leaf ops own all their time, and self times partition the outermost range exactly
    assert avg["tanh"].self_cpu_time_total == avg["tanh"].cpu_time_total
    total_self = sum(a.self_cpu_time_total for a in prof.key_averages())
    assert total_self == pytest.approx(outer.cpu_time_total, rel=1e-9)
    text = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=2)
    top = max(prof.key_averages(), key=lambda a: a.self_cpu_time_total)
    assert text.splitlines()[2].split()[0] == top.key and "Self CPU" in text.splitlines()[0]


def test_chrome_trace_is_valid_json_with_timeline(tmp_path):
    with profile() as prof:
        with record_function("outer"):
            (ember.randn(5, 5) @ ember.randn(5, 5)).sum()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    evs = data["traceEvents"]
    assert {"outer", "matmul", "sum"} <= {e["name"] for e in evs}
    assert all(e["ph"] == "X" and e["dur"] > 0 for e in evs)
    outer = next(e for e in evs if e["name"] == "outer")
    mm = next(e for e in evs if e["name"] == "matmul")
    assert outer["ts"] <= mm["ts"] <= outer["ts"] + outer["dur"]  # nested on the timeline


def test_peak_memory_does_not_grow_over_training_steps():
    w = ember.randn(64, 32, requires_grad=True)
    x = ember.randn(16, 64)
    peaks = []
    with profile(profile_memory=True) as prof:
        for _ in range(20):
            _step(w, x)
            peaks.append(prof.peak_memory())
            current = prof.current_memory()
    assert peaks[1] > 0
    assert peaks[19] == peaks[1]          # step 2's peak is never exceeded: nothing leaks
    assert current < peaks[1]


def test_no_events_outside_profile():
    with profile() as prof:
        pass
    (ember.ones(2) + 1)
    assert prof.events == []


def test_autograd_profiler_alias():
    import ember.autograd.profiler as ap
    with ap.profile() as prof:
        ember.ones(2) * 3
    assert any(e.name == "mul" for e in prof.events)
    np.testing.assert_equal(len(prof.key_averages()), 1)


def test_autograd_profiler_exports_event_list():
    # Lightning imports `from torch.autograd.profiler import EventList, record_function`
    from ember.autograd.profiler import EventList
    from ember.autograd.profiler import record_function as rf
    assert rf is record_function
    with profile() as prof:
        ember.ones(2) + 1
    assert isinstance(prof.key_averages(), EventList) and issubclass(EventList, list)
