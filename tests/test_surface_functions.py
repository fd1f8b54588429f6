"""Top-level torch functions added from ember/_surface_functions.py and _streams.py: the aten
loss forms (integer reduction, unreduced by default), sampling, histograms, strided and file
construction, DLPack, switches, control flow and the CPU Stream/Event."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember


def _pair(torch, *arrays, grad=False):
    ours = [ember.tensor(a, requires_grad=grad) for a in arrays]
    ref = [torch.tensor(a, requires_grad=grad) for a in arrays]
    return ours, ref


@pytest.mark.parity
@pytest.mark.parametrize("reduction", [None, 0, 1, 2])
def test_top_level_losses_match_torch(reduction):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, y, z = (rng.standard_normal((3, 4)) for _ in range(3))
    t01, sign = rng.random((3, 4)), np.sign(rng.standard_normal((3, 4)))
    sign3 = np.array([1.0, -1.0, 1.0])
    cases = [
        ("binary_cross_entropy_with_logits", lambda m, a, b, c: (a, m.tensor(t01))),
        ("kl_div", lambda m, a, b, c: (a, m.tensor(t01))),
        ("hinge_embedding_loss", lambda m, a, b, c: (a, m.tensor(sign))),
        ("margin_ranking_loss", lambda m, a, b, c: (a, b, m.tensor(sign))),
        ("cosine_embedding_loss", lambda m, a, b, c: (a, b, m.tensor(sign3))),
        ("triplet_margin_loss", lambda m, a, b, c: (a, b, c)),
    ]
    for name, args in cases:
        (ea, eb, ec), (ta, tb, tc) = _pair(torch, x, y, z, grad=True)
        extra = () if reduction is None else (reduction,)
        if name in ("hinge_embedding_loss",):
            extra = () if reduction is None else (1.0, reduction)
        if name in ("margin_ranking_loss", "cosine_embedding_loss"):
            extra = () if reduction is None else (0.1, reduction)
        if name == "triplet_margin_loss":
            extra = () if reduction is None else (1.0, 2.0, 1e-6, False, reduction)
        if name == "binary_cross_entropy_with_logits":
            extra = () if reduction is None else (None, None, reduction)
        ours = getattr(ember, name)(*args(ember, ea, eb, ec), *extra)
        ref = getattr(torch, name)(*args(torch, ta, tb, tc), *extra)
        assert tuple(ours.shape) == tuple(ref.shape), name
        np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-12,
                                   err_msg=name)
        ours.sum().backward()
        ref.sum().backward()
        np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-14,
                                   err_msg=name)


@pytest.mark.parity
def test_poisson_nll_ctc_rms_norm_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, t = rng.standard_normal((3, 4)), rng.random((3, 4)) * 3
    for args in [(True, False, 1e-8, 0), (False, True, 1e-6, 1), (True, True, 1e-8, 2)]:
        a = ember.poisson_nll_loss(ember.tensor(np.abs(x)), ember.tensor(t), *args)
        b = torch.poisson_nll_loss(torch.tensor(np.abs(x)), torch.tensor(t), *args)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    lp = np.log(rng.dirichlet(np.ones(4), size=(6, 2)))
    targets = np.array([[1, 2], [3, 3]])
    for reduction in (0, 1, 2):
        a = ember.ctc_loss(ember.tensor(lp), ember.tensor(targets), [6, 6], [2, 2], 0, reduction)
        b = torch.ctc_loss(torch.tensor(lp), torch.tensor(targets), [6, 6], [2, 2], 0, reduction)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)
    a = ember.ctc_loss(ember.tensor(lp), ember.tensor(targets), [6, 6], [2, 2])
    assert tuple(a.shape) == (2,)
    w = rng.random(4)
    np.testing.assert_allclose(ember.rms_norm(ember.tensor(x), [4], ember.tensor(w), 1e-3),
                               torch.rms_norm(torch.tensor(x), [4], torch.tensor(w), 1e-3),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="reduction must be 0"):
        ember.kl_div(ember.tensor(x), ember.tensor(t), 3)


@pytest.mark.parity
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_bag_returns_torch_bookkeeping(mode, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    w = rng.standard_normal((10, 3)).astype(dtype)
    idx, off = np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 4])
    ours = ember.embedding_bag(ember.tensor(w), ember.tensor(idx), ember.tensor(off), False, mode)
    ref = torch.embedding_bag(torch.tensor(w), torch.tensor(idx), torch.tensor(off), False, mode)
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


@pytest.mark.parity
def test_inplace_activations_match_torch():
    torch = pytest.importorskip("torch")
    x = np.linspace(-2, 2, 9)
    for name, args in [("celu_", (0.5,)), ("selu_", ()), ("threshold_", (0.1, 20.0)),
                       ("rrelu_", (0.1, 0.3, False))]:
        a, b = ember.tensor(x), torch.tensor(x)
        assert getattr(ember, name)(a, *args) is a
        getattr(torch, name)(b, *args)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, err_msg=name)


def test_binomial_statistics_and_errors():
    ember.manual_seed(0)
    count = ember.full((20000,), 10.0)
    draws = ember.binomial(count, ember.full((20000,), 0.3))
    assert draws.dtype == ember.float32 and draws.min() >= 0 and draws.max() <= 10
    assert abs(draws.mean().item() - 3.0) < 0.05 and abs(draws.var().item() - 2.1) < 0.1
    with pytest.raises(RuntimeError, match="floating point"):
        ember.binomial(ember.tensor([3]), ember.tensor([0.5]))
    with pytest.raises(RuntimeError, match=r"prob must be in \[0, 1\]"):
        ember.binomial(ember.tensor([3.0]), ember.tensor([1.5]))


@pytest.mark.parity
def test_gradient_and_histogramdd_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    y = rng.standard_normal((5, 6))
    for kwargs in [{}, {"spacing": 2.0}, {"dim": 1, "edge_order": 2}, {"spacing": [0.5, 3.0]}]:
        ours = ember.gradient(ember.tensor(y), **kwargs)
        ref = torch.gradient(torch.tensor(y), **kwargs)
        for a, b in zip(ours, ref, strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    coords = np.cumsum(rng.random(6))
    a = ember.gradient(ember.tensor(y), spacing=[ember.tensor(coords)], dim=1)
    b = torch.gradient(torch.tensor(y), spacing=[torch.tensor(coords)], dim=1)
    np.testing.assert_allclose(a[0].numpy(), b[0].numpy(), rtol=1e-10)
    with pytest.raises(RuntimeError, match="edge_order"):
        ember.gradient(ember.tensor(y), edge_order=3)
    pts = rng.standard_normal((50, 2))
    for bins in (4, [3, 5]):
        a = ember.histogramdd(ember.tensor(pts), bins, range=[-2.0, 2.0, -1.0, 1.0])
        b = torch.histogramdd(torch.tensor(pts), bins, range=[-2.0, 2.0, -1.0, 1.0])
        np.testing.assert_allclose(a.hist.numpy(), b.hist.numpy())
        for ea, tb in zip(a.bin_edges, b.bin_edges, strict=True):
            np.testing.assert_allclose(ea.numpy(), tb.numpy(), rtol=1e-12)


def test_empty_strided_and_new_empty_strided():
    t = ember.empty_strided((2, 3), (1, 2), dtype=ember.float64)
    assert tuple(t.shape) == (2, 3) and t.stride() == (1, 2) and t.dtype == ember.float64
    t.fill_(1.0)
    assert t.sum().item() == 6.0
    n = ember.ones(2, dtype=ember.int32).new_empty_strided((4,), (2,))
    assert n.dtype == ember.int32 and n.stride() == (2,)
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        ember.empty_strided((2, 3), (1,))


def test_from_file_shared_and_copied(tmp_path):
    path = tmp_path / "data.bin"
    np.arange(6, dtype=np.float32).tofile(path)
    t = ember.from_file(str(path), size=4)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    shared = ember.from_file(str(path), shared=True, size=6)
    shared[0] = 42.0
    assert np.fromfile(path, dtype=np.float32)[0] == 42.0
    grown = ember.from_file(str(tmp_path / "new.bin"), shared=True, size=3, dtype=ember.int64)
    assert grown.tolist() == [0, 0, 0] and (tmp_path / "new.bin").stat().st_size == 24
    with pytest.raises(RuntimeError, match="trying to read 40 bytes"):
        ember.from_file(str(path), size=10)


def test_to_dlpack_round_trips():
    t = ember.arange(4.0)
    back = ember.from_dlpack(ember.to_dlpack(t))
    np.testing.assert_array_equal(back.numpy(), [0.0, 1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="requires grad"):
        ember.to_dlpack(ember.ones(1, requires_grad=True))


def test_to_dlpack_round_trip_is_a_writable_alias():
    # a legacy capsule has no read-only flag: the import aliases writable memory, as torch's
    t = ember.arange(6.0).reshape(2, 3).t()  # strided: the alias keeps the strides
    back = ember.from_dlpack(ember.utils.dlpack.to_dlpack(t))
    back[0, 1] = 100.0
    back.add_(1)
    assert t.tolist() == [[1.0, 101.0], [2.0, 5.0], [3.0, 6.0]]
    assert back.data_ptr() == t.data_ptr() and back.stride() == t.stride()
    del t
    assert back.sum().item() == 118.0  # the alias keeps the memory alive


def test_from_dlpack_keeps_a_versioned_read_only_flag():
    frozen = np.arange(3.0)
    frozen.flags.writeable = False
    with pytest.raises(RuntimeError, match="read-only"):
        ember.from_dlpack(frozen).add_(1)


def test_switches():
    assert ember.is_inference(ember.ones(1)) is False and ember.is_vulkan_available() is False
    try:
        ember.set_deterministic_debug_mode("warn")
        assert ember.get_deterministic_debug_mode() == 1
        assert ember.is_deterministic_algorithms_warn_only_enabled()
        ember.set_deterministic_debug_mode(2)
        assert ember.get_deterministic_debug_mode() == 2
        assert ember.are_deterministic_algorithms_enabled()
        with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
            ember.set_deterministic_debug_mode("loud")
    finally:
        ember.set_deterministic_debug_mode(0)
    assert ember.get_deterministic_debug_mode() == 0
    try:
        ember.set_anomaly_enabled(True)
        assert ember.is_anomaly_enabled()
    finally:
        ember.set_anomaly_enabled(False)
    try:
        ember.set_autocast_cpu_enabled(True)
        ember.set_autocast_cpu_dtype(ember.float16)
        assert ember.is_autocast_cpu_enabled() and ember.get_autocast_cpu_dtype() == ember.float16
    finally:
        ember.set_autocast_cpu_enabled(False)
        ember.set_autocast_cpu_dtype(ember.bfloat16)


def test_set_default_tensor_type():
    try:
        with pytest.warns(UserWarning, match="deprecated"):
            ember.set_default_tensor_type(ember.DoubleTensor)
        assert ember.get_default_dtype() == ember.float64 and ember.ones(1).dtype == ember.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ember.set_default_tensor_type("torch.FloatTensor")
            assert ember.get_default_dtype() == ember.float32
            with pytest.raises(TypeError, match="only floating-point types"):
                ember.set_default_tensor_type(ember.LongTensor)
            with pytest.raises(TypeError, match="invalid type"):
                ember.set_default_tensor_type("numpy.Foo")
    finally:
        ember.set_default_dtype(ember.float32)


def test_cond_and_while_loop():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    out = ember.cond(x.sum() > 0, lambda a: a * 2, lambda a: a - 1, (x,))
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    assert ember.cond(False, lambda: 1, lambda: 2) == 2
    i, total = ember.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i),
                                (ember.tensor(0), ember.tensor(0)))
    assert i.item() == 5 and total.item() == 10
    with pytest.raises(RuntimeError, match="one-element tensor"):
        ember.cond(ember.ones(2), lambda: 1, lambda: 2)
    with pytest.raises(RuntimeError, match="as many values"):
        ember.while_loop(lambda a, b: True, lambda a, b: (a,), (1, 2))


def test_sparse_dense_products():
    dense = ember.tensor([[1.0, 0.0], [0.0, 2.0]])
    sparse = dense.to_sparse()
    mat = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(ember.dsmm(sparse, mat).numpy(), [[1.0, 2.0], [6.0, 8.0]])
    assert ember.smm(sparse, mat).is_sparse
    np.testing.assert_array_equal(ember.hspmm(sparse, mat).to_dense().numpy(),
                                  [[1.0, 2.0], [6.0, 8.0]])
    out = ember.sspaddmm(sparse, sparse, mat, beta=2, alpha=1)
    np.testing.assert_array_equal(out.to_dense().numpy(), [[3.0, 2.0], [6.0, 12.0]])
    with pytest.raises(RuntimeError, match="can only be called on sparse tensors"):
        ember.sspaddmm(dense, sparse, mat)
    with pytest.raises(NotImplementedError, match="hspmm"):
        ember.hspmm(dense, mat)


def test_stream_event_and_dtypes_and_layouts():
    s = ember.Stream()
    start, end = ember.Event(enable_timing=True), ember.Event(enable_timing=True)
    s.record_event(start)
    end.record()
    assert s.query() and start.query() and end.elapsed_time(end) == 0.0
    assert start.elapsed_time(end) >= 0.0 and str(s.device) == "cpu"
    with pytest.raises(ValueError, match="enable_timing"):
        ember.Event().elapsed_time(ember.Event())
    with pytest.raises(RuntimeError, match="only CPU streams"):
        ember.Stream("cuda")
    ember.ones(2).record_stream(s)
    assert issubclass(ember.OutOfMemoryError, RuntimeError)
    assert ember.GradScaler is ember.amp.GradScaler
    t = ember.tensor([1, 70000], dtype=ember.uint32)
    assert t.dtype == ember.uint32 and t.tolist() == [1, 70000]
    assert ember.from_numpy(np.array([5], np.uint16)).dtype == ember.uint16
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64"):
        ember.promote_types(ember.uint32, ember.int64)
    assert ember.sparse_csr != ember.sparse_coo and repr(ember.sparse_bsc) == "ember.sparse_bsc"


@pytest.mark.parity
def test_index_reduce_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    base, src = rng.standard_normal((5, 3)), rng.standard_normal((4, 3))
    idx = np.array([0, 4, 2, 0])
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            (eb, es), (tb, ts) = _pair(torch, base, src, grad=True)
            a = eb.index_reduce(0, ember.tensor(idx), es, reduce, include_self=include_self)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                b = tb.index_reduce(0, torch.tensor(idx), ts, reduce, include_self=include_self)
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
            if reduce != "mean":
                continue  # ember's scatter_reduce has a backward for mean (and sum) only
            a.sum().backward()
            b.sum().backward()
            np.testing.assert_allclose(es.grad.numpy(), ts.grad.numpy(), rtol=1e-10,
                                       err_msg=f"{reduce} {include_self}")
    x = ember.ones(3, 5)
    x.index_reduce_(1, ember.tensor([1, 1]), ember.full((3, 2), 3.0), "mean")
    np.testing.assert_allclose(x[:, 1].numpy(), [7 / 3] * 3, rtol=1e-6)
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod"):
        ember.index_reduce(x, 0, ember.tensor([0]), ember.ones(1, 5), "sum")
