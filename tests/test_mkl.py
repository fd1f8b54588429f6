"""ember/_mkl.py: MKL's sgemm for large float32 products (NOTE [MKL's sgemm]). Results are
compared with np.matmul in float64 to float32 tolerance; the fallbacks are np.matmul itself."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import _blas_parts, _mkl
from ember.ops._kernels import mkl_parts
from ember.ops.nn import linear as _linear

needs_mkl = pytest.mark.skipif(not _mkl.available(),
                               reason="MKL's libmkl_rt is not installed (the mkl extra) or the "
                                      "CPU is not Intel's")


@pytest.fixture
def small_bounds(monkeypatch):
    # products of a few hundred thousand multiply-adds take the MKL paths (fast tests)
    monkeypatch.setattr(_mkl, "MIN_MACS", 1 << 12)
    monkeypatch.setattr(_mkl, "MIN_MACS_ONE_THREAD", 1 << 12)


def _operand(rng, rows, cols, transposed):
    if transposed:  # the transpose of a C-contiguous array, as BLAS reads x @ W^T's W^T
        return rng.standard_normal((cols, rows)).astype(np.float32).T
    return rng.standard_normal((rows, cols)).astype(np.float32)


def _close(got, a, b):
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4 * np.abs(ref).max())


@needs_mkl
@pytest.mark.parametrize("m, n, k", [(100, 37, 64), (33, 150, 70), (64, 64, 200)])
@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
def test_matmul_matches_numpy_in_every_layout(small_bounds, m, n, k, layout):
    # wide results are cut in columns, tall ones in rows; both halves must land in place
    rng = np.random.default_rng(0)
    a = _operand(rng, m, k, layout[0] == "T")
    b = _operand(rng, k, n, layout[1] == "T")
    _close(_mkl.matmul(a, b), a, b)
    out = np.full((m, n), np.nan, np.float32)
    assert _mkl.matmul(a, b, out=out) is out
    _close(out, a, b)
    one = np.full((m, n), np.nan, np.float32)
    _close(_mkl.matmul_one_thread(a, b, one), a, b)


@needs_mkl
def test_matmul_writes_into_a_strided_output_and_reads_sliced_operands(small_bounds):
    rng = np.random.default_rng(1)
    big = rng.standard_normal((80, 90)).astype(np.float32)
    a, b = big[5:69, 3:53], big[10:60, 40:88]  # leading dimensions larger than the rows
    out = np.zeros((70, 60), np.float32)
    _mkl.matmul(a, b, out=out[3:67, 4:52])
    _close(out[3:67, 4:52], a, b)
    assert not out[:3].any() and not out[:, :4].any() and not out[:, 52:].any()


def test_other_products_are_numpys(small_bounds):
    # float64, batched, overlapping, or below the bound: np.matmul's own result, bit for bit
    rng = np.random.default_rng(2)
    a64, b64 = rng.standard_normal((64, 80)), rng.standard_normal((80, 96))
    np.testing.assert_array_equal(_mkl.matmul(a64, b64), np.matmul(a64, b64))
    a3 = rng.standard_normal((3, 64, 80)).astype(np.float32)
    b2 = rng.standard_normal((80, 64)).astype(np.float32)
    np.testing.assert_array_equal(_mkl.matmul(a3, b2), np.matmul(a3, b2))
    sq = rng.standard_normal((64, 64)).astype(np.float32)
    expected = np.matmul(sq, sq)
    _mkl.matmul(sq, sq.copy(), out=sq)  # the output is an operand: np.matmul copies it first
    np.testing.assert_array_equal(sq, expected)
    tiny = rng.standard_normal((4, 4)).astype(np.float32)
    np.testing.assert_array_equal(_mkl.matmul(tiny, tiny), np.matmul(tiny, tiny))
    with pytest.raises(ValueError, match="mismatch"):
        _mkl.matmul(a64[:, :70].astype(np.float32), b64.astype(np.float32))


@needs_mkl
def test_linear_forward_and_gradients_agree_with_and_without_mkl(small_bounds, monkeypatch):
    # Linear's forward (one product, in parts) and its two gradients at once (one thread each)
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((512, 96)).astype(np.float32)
    calls = []
    real = _mkl._call
    monkeypatch.setattr(_mkl, "_call", lambda a, b, out: (calls.append(a.shape), real(a, b, out)))
    run = mkl_parts._run  # the GIL-free parts (NOTE [MKL's parts without the GIL])
    monkeypatch.setattr(mkl_parts, "_run", lambda fn, args: (calls.append(fn), run(fn, args)))
    results = []
    for on in (False, True):
        monkeypatch.setattr(_mkl, "_on", [on])
        layer = ember.nn.Linear(96, 160)
        with ember.no_grad():
            layer.weight.copy_(ember.from_numpy(np.linspace(-1, 1, 160 * 96, dtype=np.float32)
                                                .reshape(160, 96)))
            layer.bias.fill_(0.5)
        x = ember.from_numpy(x0.copy()).requires_grad_()
        y = layer(x)
        (y * y).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), layer.weight.grad.numpy()))
        assert bool(calls) == on  # MKL computed the products only when on
    for off, on in zip(*results):
        np.testing.assert_allclose(on, off, rtol=1e-4, atol=1e-4 * np.abs(off).max())


@needs_mkl
@pytest.mark.parametrize("m, n", [(100, 37), (33, 150)])  # cut in rows, cut in columns
@pytest.mark.parametrize("bias_shape", ["row", "2-D"])
def test_bias_in_the_parts_is_the_product_plus_the_bias_bit_for_bit(small_bounds, m, n,
                                                                     bias_shape):
    # NOTE [The bias in MKL's parts]: each half adds the bias to its own rows or columns
    rng = np.random.default_rng(4)
    a, b = _operand(rng, m, 64, False), _operand(rng, 64, n, True)
    bias = rng.standard_normal(n).astype(np.float32)
    if bias_shape == "2-D":
        bias = bias[None]
    expected = _mkl.matmul(a, b) + bias
    np.testing.assert_array_equal(_mkl.matmul(a, b, bias=bias), expected)
    out = np.full((m, n), np.nan, np.float32)
    assert _mkl.matmul(a, b, out=out, bias=bias) is out
    np.testing.assert_array_equal(out, expected)
    # below the bound: NumPy's product, then the bias
    small = np.full((m, n), np.nan, np.float32)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_mkl, "MIN_MACS", 1 << 40)
        _mkl.matmul(a, b, out=small, bias=bias)
    np.testing.assert_array_equal(small, np.matmul(a, b) + bias)


needs_parts = pytest.mark.skipif(not _mkl.available() or not _blas_parts.on("split"),
                                 reason="MKL's libmkl_rt is not installed (the mkl extra), the "
                                        "CPU is not Intel's, or OpenBLAS has one thread")


@needs_parts
@pytest.mark.parametrize("m, n, k", [(100, 37, 64), (33, 150, 70), (97, 97, 33)])
@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("with_bias", [False, True])
def test_gil_free_halves_give_the_python_parts_bits(small_bounds, monkeypatch, m, n, k, layout,
                                                    with_bias):
    # NOTE [MKL's parts without the GIL]: the same MKL calls on the same halves, the same bias
    # additions - so the same bits as the Python parts, in rows (tall) and columns (wide)
    rng = np.random.default_rng(5)
    a = _operand(rng, m, k, layout[0] == "T")
    b = _operand(rng, k, n, layout[1] == "T")
    bias = rng.standard_normal(n).astype(np.float32) if with_bias else None
    got = []
    for no_gil in (False, True):
        monkeypatch.setattr(_mkl, "_no_gil", [no_gil])
        out = np.full((m + 2, n + 3), np.nan, np.float32)
        _mkl.matmul(a, b, out=out[1:m + 1, 2:n + 2], bias=bias)  # a strided output
        assert np.isnan(out[0]).all() and np.isnan(out[:, :2]).all() and np.isnan(out[:, -1]).all()
        got.append(out[1:m + 1, 2:n + 2])
    np.testing.assert_array_equal(got[1], got[0])
    ref = a.astype(np.float64) @ b.astype(np.float64) + (0 if bias is None else bias)
    np.testing.assert_allclose(got[1], ref, rtol=1e-5, atol=1e-4 * np.abs(ref).max())


@needs_parts
@pytest.mark.parametrize("rows, n_in, n_out", [(200, 96, 160), (129, 33, 65)])
@pytest.mark.parametrize("need_bias", [False, True])
def test_gil_free_linear_pair_matches_the_python_parts(small_bounds, monkeypatch, rows, n_in,
                                                       n_out, need_bias):
    # dx and dW: the same MKL calls as the Python parts, db the same column-sum kernel: the
    # same bits, and close to the float64 products and sums
    rng = np.random.default_rng(6)
    g = rng.standard_normal((rows, n_out)).astype(np.float32)
    x = rng.standard_normal((rows, n_in)).astype(np.float32)
    w = rng.standard_normal((n_out, n_in)).astype(np.float32)
    runs, calls, run = [], [], mkl_parts._run
    monkeypatch.setattr(mkl_parts, "_run", lambda fn, args: (calls.append(fn), run(fn, args)))
    for no_gil in (False, True):
        monkeypatch.setattr(_mkl, "_no_gil", [no_gil])
        calls.clear()
        gx, gw, gb = _linear._backward_pair(g, x, w, (True, True, need_bias))
        assert bool(calls) == no_gil
        runs.append((gx.numpy().copy(), gw.numpy().copy(), None if gb is None else gb.numpy()))
    (gx0, gw0, gb0), (gx1, gw1, gb1) = runs
    np.testing.assert_array_equal(gx1, gx0)
    np.testing.assert_array_equal(gw1, gw0)
    np.testing.assert_allclose(gx1, g.astype(np.float64) @ w, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(gw1, g.T.astype(np.float64) @ x, rtol=1e-5, atol=1e-4)
    if need_bias:
        np.testing.assert_allclose(gb1, g.astype(np.float64).sum(0), rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(gb1, gb0)
        np.testing.assert_array_equal(gb1, np.add.reduce(g, axis=0))  # NumPy's order
    else:
        assert gb0 is None and gb1 is None
