"""The benchmark scripts (benchmarks/table1.py, benchmarks/small_batch.py) keep running: their
per-process protocol on one small workload for one step, and their pure helpers. No timings are
asserted (speed is reported by the scripts, not tested)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "benchmarks")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import table1  # noqa: E402


def test_ratio_of_medians_is_torch_median_over_ember_median():
    # ember steps 1, 2, 9 s (median 2); torch 3, 4, 5 s (median 4): ember twice as fast
    assert table1.ratio_of_medians([1.0, 9.0, 2.0], [5.0, 3.0, 4.0]) == 2.0
    assert table1.ratio_of_medians([], [1.0]) != table1.ratio_of_medians([], [1.0])  # nan


def test_paired_ratio_is_median_of_per_sample_ratios():
    assert table1.paired_ratio([1.0, 2.0, 4.0], [3.0, 2.0, 2.0]) == 1.0  # ratios 3, 1, 0.5
    with pytest.raises(ValueError):
        table1.paired_ratio([1.0, 2.0], [1.0])


def test_summarize_runs_takes_the_median_over_runs():
    def run(ratio, paired):
        return {"w": {"per_process": {"ratio": ratio}, "in_process": {"paired_ratio": paired}}}

    s = table1.summarize_runs([run(1.0, 2.0), run(3.0, 1.0), run(1.2, 5.0)])
    assert s["w"]["ratio"] == 1.2 and s["w"]["paired"] == 2.0
    assert s["w"]["ratios"] == [1.0, 3.0, 1.2]


def test_suite_counts_follow_the_spec_and_overrides():
    assert table1.TABLE1.counts("ncf") == (20, 30, 10)
    assert table1.TABLE1.counts("vgg19") == (3, 20, 1)
    assert table1.TABLE1.counts("ncf", steps=1, warmup=0, quick=True) == (0, 1, 1)


@pytest.mark.parity
@pytest.mark.parametrize("script, workload", [("table1.py", "ncf"), ("small_batch.py", "mlp")])
def test_per_process_mode_runs_one_step(tmp_path, script, workload):
    pytest.importorskip("torch")
    out = tmp_path / "r.json"
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run(
        [sys.executable, os.path.join(BENCH, script), "--only", workload, "--quick",
         "--steps", "1", "--warmup", "0", "--no-quiet", "--json", str(out)],
        capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (run,) = json.loads(out.read_text())["runs"]
    pp = run[workload]["per_process"]
    assert len(pp["ember"]["samples_s"]) == 1 and len(pp["torch"]["samples_s"]) == 1
    assert pp["ratio"] > 0 and len(pp["pair_ratios"]) == 1
    assert "ratio (per-process, headline)" in proc.stdout


def test_small_batch_digits_model_is_train_digits_source():
    import small_batch

    import ember
    model, opt, batches, loss_fn, items = small_batch.digits(ember)
    names = [n for n, _ in model.named_parameters()]
    assert names[:2] == ["conv1.weight", "conv1.bias"] and "fc2.bias" in names
    x, y = batches[0]
    assert tuple(model(x).shape) == (32, 10) and items == 32


def test_shares_buckets_blas_numpy_numba_and_restores_numpy():
    import profile_shares
    import small_batch

    import ember
    original = np.matmul
    step = table1.step_fn(*table1.make(small_batch.SMALL, ember, "mlp")[:4])
    for _ in range(2):
        step()
    total, per, calls, top, gemm = profile_shares.instrumented(step, 2)
    assert np.matmul is original and not isinstance(np.exp, profile_shares._TimedUfunc)
    assert per["blas"] > 0 and per["numpy"] >= 0 and per["python"] >= 0 and calls > 0
    assert abs(sum(per.values()) - total) < 1e-9 + 1e-6 * total
    assert any(k.startswith("blas:") for k in top)


def test_shares_time_both_versions_of_twin_kernels(monkeypatch):
    import types

    import numba
    import profile_shares

    from ember import _onepool

    def _twice(x, out):
        for i in numba.prange(x.size):
            out[i] = 2.0 * x[i]

    twin = _onepool.twin(_twice)
    mod = types.ModuleType("ember._profile_shares_probe")
    mod.k = twin
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    serial, x = twin.serial, np.ones(8)
    out = np.empty_like(x)
    total, per, calls, top, _ = profile_shares.instrumented(lambda: mod.k.serial(x, out), 3)
    assert "numba:_twice" in top and calls == 1  # per step
    assert twin.serial is serial  # restored


def test_shares_time_kernels_held_in_module_tables(rng):
    # pointwise's row kernels are looked up in a dict per call: counted as numba (they were
    # Python time while only module attributes were wrapped), and the table restored after
    import profile_shares

    import ember
    from ember.ops._kernels import pointwise
    table = dict(pointwise._ROW_KERNELS)
    a = ember.tensor(rng.standard_normal((512, 64)).astype(np.float32))
    b = ember.tensor(rng.standard_normal((512, 1)).astype(np.float32))  # broadcast by rows
    calls = []
    for op, kernel in table.items():
        before = kernel
        pointwise._ROW_KERNELS[op] = lambda *x, _k=before, _op=op: calls.append(_op) or _k(*x)
    try:
        (a + b).numpy()
        taken = set(calls)
    finally:
        pointwise._ROW_KERNELS.update(table)
    assert taken == {"add"}, "the probe must reach a row kernel"
    total, per, n_calls, top, _ = profile_shares.instrumented(lambda: (a + b).numpy(), 3)
    assert any(k.startswith("numba:_k_rows_add") for k in top), top
    assert pointwise._ROW_KERNELS == table


def _fake_sgemm(main_s):
    """A stand-in for MKL's cblas_sgemm that writes zeros and sleeps 1 ms; the time of its
    calls on the main thread goes into main_s (only the accounting is tested)."""
    import ctypes
    import threading
    import time
    main = threading.get_ident()

    def sgemm(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        t0 = time.perf_counter()
        ctypes.memset(c, 0, ((m - 1) * ldc + n) * 4)
        time.sleep(1e-3)
        if threading.get_ident() == main:
            main_s.append(time.perf_counter() - t0)
    return sgemm


def test_shares_count_mkl_products_as_blas_with_their_flop(monkeypatch, rng):
    # MKL's sgemm is a ctypes call NumPy's wrappers do not see: its time was Python time (the
    # twenty-third session's GPT-S rest). A Linear forward and backward with every product on
    # a stand-in MKL: BLAS time, and 2 m n k per product
    import profile_shares

    import ember
    from ember import _mkl
    main_s = []
    monkeypatch.setattr(_mkl, "_sgemm", [_fake_sgemm(main_s)])
    monkeypatch.setattr(_mkl, "_on", [True])
    monkeypatch.setattr(_mkl, "_no_gil", [False])  # the ctypes path the stand-in replaces
    monkeypatch.setattr(_mkl, "MIN_MACS", 1)
    from ember.ops.nn import linear
    monkeypatch.setattr(linear, "_MKL_SMALL", [False])  # (64 rows: else MKL's numba kernel)
    lin = ember.nn.Linear(32, 48, bias=False)
    x = ember.tensor(rng.standard_normal((64, 32)).astype(np.float32))
    total, per, calls, top, gemm = profile_shares.instrumented(
        lambda: lin(x).sum().backward(), 2)
    assert main_s, "the products must reach the stand-in MKL"
    assert "blas:_mkl.matmul" in top
    assert gemm["flop"] == 2 * (2 * 64 * 32 * 48)  # forward and weight gradient, per step
    assert per["blas"] >= sum(main_s) / 2 and gemm["s"] >= sum(main_s) / 2


def test_shares_count_linear_backward_pair_as_one_blas_call(monkeypatch, rng):
    # the pair's weight gradient runs on OpenBLAS's worker while the main thread waits: the
    # whole pair is BLAS time, with both products' operations
    import profile_shares

    from ember import _mkl
    from ember.ops.nn import linear
    main_s = []
    monkeypatch.setattr(_mkl, "_sgemm", [_fake_sgemm(main_s)])
    monkeypatch.setattr(_mkl, "_on", [True])
    monkeypatch.setattr(_mkl, "_no_gil", [False])  # the ctypes path the stand-in replaces
    monkeypatch.setattr(_mkl, "MIN_MACS_ONE_THREAD", 1)
    g2 = rng.standard_normal((64, 48)).astype(np.float32)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    w = rng.standard_normal((48, 32)).astype(np.float32)
    total, per, calls, top, gemm = profile_shares.instrumented(
        lambda: linear._backward_pair(g2, x, w, (True, True)), 3)
    assert "blas:linear._backward_pair" in top and calls == 1  # the products inside: once
    assert gemm["flop"] == 4 * 64 * 48 * 32
    assert per["blas"] >= sum(main_s) / 3


def test_matmul_flop_counts_batches_and_vectors():
    from profile_shares import _matmul_flop
    a, b = np.empty((5, 1, 3, 4)), np.empty((2, 4, 6))
    assert _matmul_flop(a, b) == 2 * 10 * 3 * 6 * 4
    assert _matmul_flop(np.empty(4), np.empty((4, 6))) == 2 * 6 * 4
    assert _matmul_flop(np.empty((3, 4)), np.empty(4)) == 2 * 3 * 4
    assert _matmul_flop(np.empty(4), 2.0) is None


def test_share_and_peak_arithmetic():
    from profile_shares import percent_of_peak, shares_from
    s = shares_from({"blas": 3.0, "numba": 1.0, "numpy": 0.0, "python": 4.0})
    assert s == {"blas": 0.375, "numba": 0.125, "numpy": 0.0, "python": 0.5}
    # 20 GFLOP in 0.5 s = 40 GFLOP/s of a 100 GFLOP/s peak
    assert percent_of_peak(20.0, 0.5, 100.0) == 40.0
    assert percent_of_peak(None, 0.5, 100.0) != percent_of_peak(None, 0.5, 100.0)  # nan


@pytest.mark.parity
def test_generate_per_process_mode_keeps_one_library_per_process():
    pytest.importorskip("torch")
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run(
        [sys.executable, os.path.join(BENCH, "generate.py"), "--per-process", "1",
         "--samples", "1", "--warmup", "0", "--new", "2"],
        capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "one library per process, 1 process pairs" in proc.stdout
    assert "ratio (ember/torch tok/s)" in proc.stdout
    # a torch child imports torch only (ember's import would load its kernels and threads)
    child = ("import sys, runpy; sys.argv = ['generate.py', '--_lib', 'torch', '--samples', "
             "'1', '--warmup', '0', '--new', '2']; runpy.run_path("
             f"{os.path.join(BENCH, 'generate.py')!r}, run_name='__main__'); "
             "print('ember loaded:', 'ember' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.splitlines()[0])["median_s"] > 0
    assert "ember loaded: False" in proc.stdout


def test_gemm_shapes_cover_the_linear_flops_of_a_gpt_step():
    """benchmarks/gemm_shapes.py's table of GPT-S's Linear GEMMs (forward, dX, dW of every
    Linear and the tied head) adds up to the Linear part of the step's FLOP count."""
    import gemm_shapes

    from examples.models.table1 import GPT_S_GFLOP
    flops = sum(2 * m * n * k * calls for _, m, n, k, _, calls in gemm_shapes.linear_shapes())
    attention = 3 * 2 * 2 * 8 * 4 * 128 * 128 * 64 * 4  # SPEC's count beside the model
    assert flops == pytest.approx(GPT_S_GFLOP * 1e9 - attention)
    layouts = {lay for *_, lay, _ in gemm_shapes.linear_shapes()}
    assert layouts == {"NT", "NN", "TN"}


def test_gemm_shapes_layout_names_what_blas_sees():
    import gemm_shapes
    a = np.zeros((4, 6), np.float32)
    assert [gemm_shapes._layout(x) for x in (a, a.T, a[:, ::2], np.zeros(3))] == \
        ["N", "T", "S", "V"]
    assert gemm_shapes._layout(np.zeros((2, 4, 6)).swapaxes(-1, -2)) == "T"
    assert gemm_shapes._torch_category("aten::addmm") == "GEMM (mm/addmm/bmm)"
    assert gemm_shapes._torch_category("aten::gelu_backward") == "gelu"
    assert gemm_shapes._torch_category("aten::_foreach_mul_") == "AdamW"


def test_in_step_wrapper_returns_the_step_call_and_repeats_twice_while_recording():
    from collections import defaultdict

    import in_step

    calls = []

    def kernel(x, b, s, p, d, g, h, keep=None):  # conv2d_forward's eight arguments
        calls.append(keep)
        if keep is not None:
            keep.append(len(calls))
        return x * 2

    acc = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    recording = [False]
    ticks = iter(range(100))
    timed = in_step._wrap(acc, lambda: next(ticks), recording, "k", kernel, lambda a: a[0].shape)
    x = np.ones(3)
    args = (x, None, 1, 0, 1, 1, None)
    assert timed(*args, None).tolist() == [2.0, 2.0, 2.0] and len(calls) == 1 and not acc
    recording[0] = True
    keep = []
    assert timed(*args, keep).tolist() == [2.0, 2.0, 2.0]
    # the step's call fills the step's keep list; the repeats get fresh lists of their own
    assert keep == [2] and len(calls) == 4 and calls[2] is not keep and calls[3] is not keep
    assert acc[("k", (3,))] == [1, 1, 1, 1]
    assert in_step._fresh_keep((1,) * 7 + (None,)) == (1,) * 7 + (None,)


def test_shares_count_the_small_linear_kernels_as_blas(rng):
    # NOTE [A small Linear on MKL]: numba kernels calling MKL's sgemm are BLAS time, 2 m n k
    # per product (forward, input and weight gradients)
    import profile_shares

    import ember
    from ember import _mkl
    if not _mkl.sgemm_address():
        pytest.skip("MKL's libmkl_rt is not installed (the mkl extra) or the CPU is not Intel's")
    lin = ember.nn.Linear(32, 48)
    x = ember.tensor(rng.standard_normal((8, 32)).astype(np.float32), requires_grad=True)
    total, per, calls, top, gemm = profile_shares.instrumented(
        lambda: lin(x).sum().backward(), 2)
    assert "blas:small_linear.linear_forward" in top
    assert "blas:small_linear.linear_backward" in top
    assert gemm["flop"] == 3 * (2 * 8 * 32 * 48)
