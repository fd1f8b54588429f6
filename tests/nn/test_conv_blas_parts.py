"""The range kernels of the convolution family (Winograd's transforms, im2col, depthwise
convolution, batch norm, pooling, ReLU's gradient, the SGD step) in parts on OpenBLAS's threads
(NOTE [Python parts on OpenBLAS's threads] in ember/_blas_parts.py): the same values and
gradients as the serial kernels, bit for bit, for odd sizes and non-contiguous inputs."""
import numpy as np
import pytest

import ember
from ember import _blas_parts
from ember.nn import functional as F
from ember.ops._kernels import split

# the one pool takes split.run's ranges itself (NOTE [Ranges on the one pool])
pytestmark = pytest.mark.usefixtures("pool_off")


@pytest.fixture
def parts(monkeypatch, blas_parts_on):
    """Parts forced on (tests/conftest.py), every range kernel counted as big enough; yields the
    list of range sizes run_ranges split (returned)."""
    monkeypatch.setattr(split, "_MIN_WORK", 0)
    monkeypatch.setattr(split, "_PARTS_MIN_WORK", 0)
    monkeypatch.setattr(split, "PARTS_MIN", {})
    return _record_ranges(monkeypatch)


def _record_ranges(monkeypatch):
    """run_ranges wrapped to note each range size it splits; returns that list."""
    calls = []
    original = _blas_parts.run_ranges

    def recorded(fn, n, threads=None):
        calls.append(n)
        return original(fn, n, threads)
    monkeypatch.setattr(_blas_parts, "run_ranges", recorded)
    return calls


def _conv_block_step(arrays, use_parts, stride, padding):
    """Conv2d -> BatchNorm2d (training) -> ReLU -> MaxPool2d forward and backward; returns the
    output and every gradient."""
    _blas_parts.set_enabled(use_parts)
    x, w, b, gamma, beta = (ember.tensor(a, requires_grad=True) for a in arrays)
    xin = x.transpose(2, 3)  # a non-contiguous input
    y = F.conv2d(xin, w, b, stride=stride, padding=padding)
    y = F.batch_norm(y, None, None, gamma, beta, training=True)
    y = F.max_pool2d(F.relu(y), 3, stride=2, padding=1)
    g = np.linspace(-1, 1, y.numel()).reshape(y.shape).astype(arrays[0].dtype)
    (y * ember.tensor(g)).sum().backward()
    return [y.detach().numpy()] + [t.grad.numpy() for t in (x, w, b, gamma, beta)]


@pytest.mark.parametrize("claimed", [False, True])  # NOTE [Claimed chunks for the range kernels]
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, c, o, h, w, k, stride, padding", [
    (2, 5, 7, 9, 11, 3, 1, 1),      # Winograd (odd channel counts and map sizes)
    (3, 3, 6, 13, 10, 3, 2, 1),     # strided: im2col
    (1, 4, 9, 6, 7, 1, 1, 0),       # pointwise
    (2, 3, 5, 12, 12, 5, 1, 2)])    # 5x5: im2col
def test_conv_block_parts_match_serial(parts, rng, monkeypatch, claimed, dtype, n, c, o, h, w, k,
                                       stride, padding):
    monkeypatch.setattr(split, "CLAIMED_CHUNKS", [claimed])
    arrays = [rng.standard_normal(s).astype(dtype)
              for s in ((n, c, w, h), (o, c, k, k), (o,), (o,), (o,))]
    serial = _conv_block_step(arrays, False, stride, padding)
    assert not parts
    split_ = _conv_block_step(arrays, True, stride, padding)
    assert parts and max(parts) >= 2  # some kernel went to the parts
    for a, b in zip(serial, split_, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, c, h, w, stride, mult", [
    (2, 5, 11, 9, 1, 1),    # flat stride-1 kernels
    (3, 4, 13, 10, 2, 1),   # strided forward, backward on the stride-1 grid
    (2, 3, 7, 8, 1, 2),     # two output channels per input channel
    (3, 17, 6, 5, 2, 1)])   # channels last (17 >= 16 channels, <= 64 output pixels)
def test_depthwise_parts_match_serial(parts, rng, dtype, n, c, h, w, stride, mult):
    # NOTE [Depthwise in parts] in ops/_kernels/conv.py: planes or channels in parts
    x0, w0 = rng.standard_normal((n, c, h, w)), rng.standard_normal((c * mult, 1, 3, 3))

    def run(use_parts):
        _blas_parts.set_enabled(use_parts)
        x, wt = (ember.tensor(a.astype(dtype), requires_grad=True) for a in (x0, w0))
        y = F.conv2d(x, wt, None, stride=stride, padding=1, groups=c)
        g = np.linspace(-1, 1, y.numel()).reshape(y.shape).astype(dtype)
        (y * ember.tensor(g)).sum().backward()
        return [y.detach().numpy(), x.grad.numpy(), wt.grad.numpy()]

    serial = run(False)
    assert not parts
    got = run(True)
    assert parts and max(parts) >= 2
    for a, b in zip(got, serial, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("momentum, nesterov", [(0.0, False), (0.9, True)])
def test_sgd_parts_match_serial(parts, rng, monkeypatch, dtype, momentum, nesterov):
    from ember.optim import sgd
    monkeypatch.setattr(sgd, "_SPLIT_ELEMENTS", 16)
    monkeypatch.setattr(sgd, "_PARTS_MIN_ELEMENTS", 16)
    # eleven parameters of odd sizes (two groups of K._MULTI, halves inside a parameter), one
    # of them with a non-contiguous gradient (updated on its own, not in the hand-off)
    shapes = [(3, 7, 11), (5,), (1,), (13, 3), (2, 2, 9), (17,), (4, 5), (7,), (3, 3, 3), (29,),
              (6, 6)]
    w0 = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(3)]
    queued = sum(w.size for w in w0) - w0[3].size

    def run(use_parts):
        _blas_parts.set_enabled(use_parts)
        ws = [ember.nn.Parameter(ember.tensor(w.copy())) for w in w0]
        opt = ember.optim.SGD(ws, lr=0.1, momentum=momentum, nesterov=nesterov,
                              weight_decay=1e-2)
        for gs in grads:
            for k, (w, g) in enumerate(zip(ws, gs, strict=True)):
                w.grad = ember.tensor(g.T.copy()).T if k == 3 else ember.tensor(g)
            opt.step()
        return [w.detach().numpy().copy() for w in ws]

    whole = run(False)
    assert not parts
    got = run(True)
    assert parts.count(queued) == 3  # one hand-off a step for the queued parameters
    for a, b in zip(got, whole, strict=True):
        np.testing.assert_array_equal(a, b)


def test_split_parts_default_on_and_switched_off_by_the_environment(monkeypatch):
    calls = _record_ranges(monkeypatch)
    x = ember.randn(8, 128, 32, 32)  # 2^20 elements: over both thresholds
    monkeypatch.setenv("EMBER_BLAS_PARTS", "0")
    _blas_parts.set_enabled(None)
    assert not _blas_parts.on("split")
    F.batch_norm(x, None, None, training=True)
    assert not calls
    monkeypatch.delenv("EMBER_BLAS_PARTS")
    _blas_parts.set_enabled(None)
    try:
        if not _blas_parts.on("split"):
            assert not _blas_parts._ready()  # off only where the parts cannot run
            return
        F.batch_norm(x, None, None, training=True)
        assert calls == [128]
    finally:
        _blas_parts.set_enabled(None)


def test_run_ranges_covers_the_range_once(parts):
    seen = np.zeros(1001, np.int64)

    def part(lo, hi):
        seen[lo:hi] += 1
    _blas_parts.run_ranges(part, seen.size)
    np.testing.assert_array_equal(seen, np.ones_like(seen))


def test_run_ranges_reraises_a_parts_exception(parts):
    def part(lo, hi):
        if hi == 10:
            raise ValueError(f"part [{lo}, {hi}) failed")
    with pytest.raises(ValueError, match=r"part \[\d+, 10\) failed"):
        _blas_parts.run_ranges(part, 10)
    done = []
    _blas_parts.run_ranges(lambda lo, hi: done.append((lo, hi)), 4)  # usable again
    assert sorted(done)[0][0] == 0 and sorted(done)[-1][1] == 4


def test_parts_threshold_by_family(monkeypatch, blas_parts_on):
    # NOTE [Parts thresholds by family] in split.py: an entry lowers one family's threshold only
    calls = _record_ranges(monkeypatch)
    monkeypatch.setattr(split, "PARTS_MIN", {"batchnorm_bwd": 1 << 10})
    x = ember.randn(2, 6, 15, 15, requires_grad=True)  # 2700 elements: far under 2^20
    y = F.batch_norm(x, None, None, training=True)
    assert calls == []  # the forward is family "batchnorm": serial
    y.sum().backward()
    assert calls == [6]  # the backward's six channels in parts
    F.max_pool2d(x.detach(), 2)  # another family: under its threshold, serial
    assert calls == [6]


def test_relu_parts_from_its_family_threshold(monkeypatch, blas_parts_on):
    # ReLU's kernels ("pointwise") go in parts from PARTS_MIN["pointwise"] elements, with the
    # same values as NumPy's and a gradient zeroed where the output is <= 0
    calls = _record_ranges(monkeypatch)
    n = split.PARTS_MIN["pointwise"]
    data = np.random.default_rng(3).standard_normal((4, n // 4)).astype(np.float32)
    x = ember.tensor(data, requires_grad=True)
    y = F.relu(x)
    assert calls == [n]
    np.testing.assert_array_equal(y.detach().numpy(), np.maximum(data, 0))
    g = np.random.default_rng(4).standard_normal(data.shape).astype(np.float32)
    y.backward(ember.tensor(g))
    assert calls == [n, n]
    np.testing.assert_array_equal(x.grad.numpy(), np.where(data > 0, g, 0))
    F.relu(ember.tensor(data[:, : n // 8]))  # half the threshold: serial
    assert calls == [n, n]
