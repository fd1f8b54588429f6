"""Positional ops (ember/ops/shape.py): flip/roll/rot90, repeat/tile/repeat_interleave,
tril/triu, diagonal views, diag family, meshgrid, block_diag, cross, kron, vander."""
from __future__ import annotations

import itertools
import re
import warnings

import numpy as np
import pytest
import scipy.linalg

import ember
from ember.autograd import gradcheck, gradgradcheck


def _t(a, grad=False):
    return ember.tensor(np.asarray(a), requires_grad=grad)


def _leaf(rng, *shape):
    return ember.tensor(rng.standard_normal(shape), requires_grad=True)


def _close(got, want, **kw):
    np.testing.assert_allclose(np.asarray(got.detach().numpy()), want, **kw)


# ----------------------------------------------------------------------------- flip / roll
@pytest.mark.parametrize("dims", [(0,), (1,), (-1,), (0, 2), (2, 0, 1)])
def test_flip_matches_numpy(rng, dims):
    a = rng.standard_normal((2, 3, 4))
    _close(ember.flip(_t(a), dims), np.flip(a, dims))


def test_flip_method_varargs_and_keyword(rng):
    a = rng.standard_normal((2, 3))
    x = _t(a)
    _close(x.flip(0, 1), a[::-1, ::-1])
    _close(x.flip([1]), a[:, ::-1])
    _close(ember.flip(x, dims=(0,)), a[::-1])


def test_flip_returns_copy_and_handles_edge_shapes(rng):
    a = rng.standard_normal((3, 4))
    x = _t(a)
    y = x.flip(0)
    y[0, 0] = 100.0
    assert x[2, 0].item() == a[2, 0]  # a copy, unlike numpy's view
    assert ember.flip(_t(5.0), [0]).item() == 5.0
    assert ember.flip(_t(np.zeros((0, 3))), [0, 1]).shape == (0, 3)
    _close(ember.flip(_t(a).t(), [0]), a.T[::-1])
    _close(ember.flip(_t(a)[::2, ::3], [1]), a[::2, ::3][:, ::-1])


def test_flip_errors():
    x = ember.zeros(2, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.flip(x, [2])
    with pytest.raises(RuntimeError, match="multiple times"):
        ember.flip(x, [0, 0])
    with pytest.raises(RuntimeError, match="fliplr: Input must be >= 2-d"):
        ember.fliplr(ember.zeros(3))
    with pytest.raises(RuntimeError, match="flipud: Input must be >= 1-d"):
        ember.flipud(ember.tensor(1.0))


def test_fliplr_flipud(rng):
    a = rng.standard_normal((3, 4, 2))
    _close(ember.fliplr(_t(a)), np.fliplr(a))
    _close(ember.flipud(_t(a)), np.flipud(a))


@pytest.mark.parametrize("shifts,dims", [(1, None), (-7, None), (2, 1), ((1, -2), (0, -1)),
                                         ((5,), (0,))])
def test_roll_matches_numpy(rng, shifts, dims):
    a = rng.standard_normal((3, 4))
    _close(ember.roll(_t(a), shifts, dims), np.roll(a, shifts, dims))
    _close(ember.roll(_t(a).t(), shifts, dims), np.roll(a.T, shifts, dims))


def test_roll_edge_cases_and_errors():
    assert ember.roll(ember.zeros(0, 2), 3).shape == (0, 2)
    assert ember.roll(ember.tensor(4.0), 1).item() == 4.0
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        ember.roll(ember.zeros(2, 3), (1, 2), 0)
    with pytest.raises(IndexError):
        ember.roll(ember.zeros(2, 3), 1, 2)


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3, 5])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (-1, 0), (1, 2)])
def test_rot90_matches_numpy(rng, k, dims):
    a = rng.standard_normal((2, 3, 4))
    _close(ember.rot90(_t(a), k, dims), np.rot90(a, k, dims))


def test_rot90_errors():
    with pytest.raises(RuntimeError, match="expected total dims >= 2"):
        ember.rot90(ember.zeros(2))
    with pytest.raises(RuntimeError, match="rotation dims to be different"):
        ember.rot90(ember.zeros(2, 2), 1, [0, 0])
    with pytest.raises(RuntimeError, match="expected total rotation dims == 2"):
        ember.rot90(ember.zeros(2, 2, 2), 1, [0, 1, 2])


# ----------------------------------------------------------------------------- repeat / tile
@pytest.mark.parametrize("sizes", [(2, 1), (1, 3), (2, 2, 3), (0, 2), (1, 1)])
def test_repeat_matches_tile(rng, sizes):
    a = rng.standard_normal((2, 3))
    _close(_t(a).repeat(*sizes), np.tile(a, sizes))
    _close(_t(a).t().repeat(sizes), np.tile(a.T, sizes))


def test_repeat_errors_and_no_function_form():
    with pytest.raises(RuntimeError, match="can not be smaller than number of dimensions"):
        ember.zeros(2, 3).repeat(2)
    with pytest.raises(RuntimeError, match="negative dimension"):
        ember.zeros(2, 3).repeat(-1, 2)
    assert not hasattr(ember, "repeat")  # torch.repeat does not exist either


def test_tile_pads_dims(rng):
    a = rng.standard_normal((2, 3))
    _close(ember.tile(_t(a), (2,)), np.tile(a, (1, 2)))
    _close(ember.tile(_t(a), (2, 1, 2)), np.tile(a, (2, 1, 2)))
    _close(ember.tile(_t(3.0), (2,)), [3.0, 3.0])


def test_repeat_interleave_matches_numpy(rng):
    a = rng.standard_normal((3, 2))
    _close(ember.repeat_interleave(_t(a), 2), np.repeat(a, 2))
    _close(ember.repeat_interleave(_t(a), 2, dim=1), np.repeat(a, 2, axis=1))
    reps = np.array([1, 0, 3])
    _close(ember.repeat_interleave(_t(a), _t(reps), dim=0), np.repeat(a, reps, axis=0))
    _close(_t(a).repeat_interleave(_t(np.array([2])), dim=-1), np.repeat(a, 2, axis=-1))
    _close(ember.repeat_interleave(_t(a).t(), _t(np.array([1, 2])), dim=0),
           np.repeat(a.T, [1, 2], axis=0))
    out = ember.repeat_interleave(_t(np.array([2, 0, 1])))
    assert out.dtype == ember.int64 and out.tolist() == [0, 0, 2]
    assert ember.repeat_interleave(ember.tensor(3), 2).tolist() == [3, 3]
    assert ember.repeat_interleave(_t(a), 2, dim=0, output_size=6).shape == (6, 2)


def test_repeat_interleave_errors():
    x = ember.tensor([1, 2])
    with pytest.raises(RuntimeError, match="same size as input along dim"):
        ember.repeat_interleave(x, ember.tensor([1, 2, 3]))
    with pytest.raises(RuntimeError, match="can not be negative"):
        ember.repeat_interleave(x, ember.tensor([-1, 2]))
    with pytest.raises(RuntimeError, match="can not be negative"):
        ember.repeat_interleave(x, -1)
    with pytest.raises(RuntimeError, match="Invalid output_size, expected 4 but got 3"):
        ember.repeat_interleave(x, 2, output_size=3)
    with pytest.raises(RuntimeError, match="0-dim or 1-dim"):
        ember.repeat_interleave(x, ember.tensor([[2]]))


# ----------------------------------------------------------------------------- triangles
@pytest.mark.parametrize("k", [-2, -1, 0, 1, 5])
def test_tril_triu_match_numpy(rng, k):
    a = rng.standard_normal((2, 3, 4))
    _close(ember.tril(_t(a), k), np.tril(a, k))
    _close(_t(a).triu(k), np.triu(a, k))
    _close(ember.tril(_t(a).transpose(1, 2), k), np.tril(a.transpose(0, 2, 1), k))
    ints = ember.tril(ember.ones(3, 3, dtype=ember.int32), k)
    assert ints.dtype == ember.int32 and ints.sum().item() == np.tril(np.ones((3, 3)), k).sum()


def test_tril_inplace_bumps_version(rng):
    a = rng.standard_normal((3, 3))
    x = _t(a)
    v = x._version
    assert x.tril_(-1) is x
    _close(x, np.tril(a, -1))
    assert x._version > v
    x.triu_(1)
    assert not x.numpy().any()


def test_tril_errors_and_indices():
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        ember.tril(ember.zeros(3))
    for row, col, off in [(3, 2, 1), (3, 4, -1), (0, 4, 0), (4, 4, 10)]:
        got = ember.tril_indices(row, col, off)
        assert got.dtype == ember.int64
        np.testing.assert_array_equal(got.numpy(), np.stack(np.tril_indices(row, off, col)))
        np.testing.assert_array_equal(ember.triu_indices(row, col, off).numpy(),
                                      np.stack(np.triu_indices(row, off, col)))


# ----------------------------------------------------------------------------- diagonals
@pytest.mark.parametrize("offset,d1,d2", [(0, 0, 1), (1, 0, 1), (-1, 0, 1), (2, 1, 2),
                                          (0, -1, 0), (-2, 2, 0), (7, 0, 1)])
def test_diagonal_matches_numpy(rng, offset, d1, d2):
    a = rng.standard_normal((3, 4, 5))
    _close(ember.diagonal(_t(a), offset, d1, d2), np.diagonal(a, offset, d1, d2))


def test_diagonal_is_a_view_sharing_storage_and_version(rng):
    a = rng.standard_normal((3, 4))
    x = _t(a)
    d = x.diagonal(1)
    assert d._base is not None and d.data_ptr() == x.data_ptr() + x.element_size()
    d[0] = 100.0  # a write through the view reaches the base
    assert x[0, 1].item() == 100.0
    assert x._version == d._version == 1
    x.mul_(2)
    assert d[0].item() == 200.0


def test_diagonal_inplace_through_view_autograd(rng):
    leaf = _leaf(rng, 3, 3)
    x = leaf * 1.0
    x.diagonal().mul_(3.0)
    x.sum().backward()
    _close(leaf.grad, np.eye(3) * 2 + 1)


def test_diagonal_of_noncontiguous_and_errors(rng):
    a = rng.standard_normal((4, 6))
    _close(_t(a).t().diagonal(), np.diagonal(a.T))
    _close(_t(a)[::2, ::3].diagonal(), np.diagonal(a[::2, ::3]))
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 0, 0"):
        ember.diagonal(ember.zeros(2, 2), 0, 0, 0)
    with pytest.raises(IndexError, match="Dimension out of range"):  # (dim1=1 of a 1-D, as torch)
        ember.diagonal(ember.zeros(3))
    assert ember.diagonal(ember.zeros(2, 3), 5).shape == (0,)


def test_diag_family(rng):
    v = rng.standard_normal(3)
    m = rng.standard_normal((3, 4))
    for k in (-2, 0, 1):
        _close(ember.diag(_t(v), k), np.diag(v, k))
        _close(ember.diag(_t(m), k), np.diag(m, k))
        _close(ember.diagflat(_t(m), k), np.diagflat(m, k))
    d = ember.diag(_t(m))
    d[0] = 50.0
    assert m[0, 0] != 50.0  # diag of a matrix is a copy, like torch
    with pytest.raises(RuntimeError, match=r"diag\(\): Supports 1D or 2D tensors. Got 3D"):
        ember.diag(ember.zeros(2, 2, 2))
    with pytest.raises(RuntimeError, match="Got 0D"):
        ember.diag(ember.tensor(1.0))


def test_diag_embed_places_last_dim_on_diagonals(rng):
    a = rng.standard_normal((2, 3))
    out = ember.diag_embed(_t(a), 1, 0, 2)
    assert out.shape == (4, 2, 4)
    want = np.zeros((4, 2, 4))
    for b in range(2):
        want[:, b, :] = np.diag(a[b], 1)
    _close(out, want)
    _close(ember.diag_embed(_t(a)), np.stack([np.diag(r) for r in a]))
    with pytest.raises(RuntimeError, match="cannot be identical"):
        ember.diag_embed(_t(a), 0, 1, 1)


def test_trace(rng):
    a = rng.standard_normal((3, 4))
    assert np.isclose(ember.trace(_t(a)).item(), np.trace(a))
    t = ember.trace(ember.ones(2, 3, dtype=ember.int32))
    assert t.dtype == ember.int64 and t.item() == 2
    with pytest.raises(RuntimeError, match="trace: expected a matrix, but got tensor with dim 1"):
        ember.trace(ember.zeros(2))


# ----------------------------------------------------------------------------- grids
@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_matches_numpy(rng, indexing):
    xs = [rng.standard_normal(n) for n in (2, 3, 4)]
    got = ember.meshgrid(*[_t(x) for x in xs], indexing=indexing)
    want = np.meshgrid(*xs, indexing=indexing)
    for g, w in zip(got, want):
        _close(g, w)
    got = ember.meshgrid([_t(xs[0]), _t(xs[1])], indexing=indexing)
    assert got[0].shape == np.meshgrid(xs[0], xs[1], indexing=indexing)[0].shape


def test_meshgrid_default_warns_and_errors():
    with pytest.warns(UserWarning, match="indexing"):
        a, b = ember.meshgrid(ember.arange(2), ember.arange(3))
    assert a.shape == (2, 3)
    assert ember.meshgrid(ember.tensor(1.0), ember.zeros(3), indexing="ij")[0].shape == (1, 3)
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor"):
        ember.meshgrid(ember.zeros(2, 2), indexing="ij")
    with pytest.raises(RuntimeError, match="same dtype"):
        ember.meshgrid(ember.zeros(2), ember.arange(2), indexing="ij")
    with pytest.raises(RuntimeError, match='indexing must be one of "xy" or "ij"'):
        ember.meshgrid(ember.zeros(2), indexing="foo")


def test_cartesian_prod():
    a, b = [1, 2, 3], [4, 5]
    got = ember.cartesian_prod(ember.tensor(a), ember.tensor(b))
    assert got.tolist() == [list(p) for p in itertools.product(a, b)]
    assert ember.cartesian_prod(ember.tensor(a)).tolist() == a
    with pytest.raises(RuntimeError, match="Expect a 1D vector"):
        ember.cartesian_prod(ember.tensor([[1, 2]]), ember.tensor([3]))


def test_atleast_nd():
    s, v, m = ember.tensor(1.0), ember.tensor([1.0, 2.0]), ember.zeros(2, 3)
    assert ember.atleast_1d(s).shape == (1,)
    assert ember.atleast_2d(v).shape == (1, 2)
    assert ember.atleast_3d(v).shape == (1, 2, 1)
    assert ember.atleast_3d(m).shape == (2, 3, 1)
    assert ember.atleast_3d(s).shape == (1, 1, 1)
    outs = ember.atleast_2d(s, v)
    assert isinstance(outs, tuple) and [o.shape for o in outs] == [(1, 1), (1, 2)]
    assert isinstance(ember.atleast_1d((s,)), tuple)


def test_block_diag_matches_scipy(rng):
    a, b = rng.standard_normal((2, 2)), rng.standard_normal(3)
    c = np.ones((2, 1), np.int32)
    got = ember.block_diag(_t(a), _t(b), _t(c), _t(np.float64(7.0)))
    assert got.dtype == ember.float64
    _close(got, scipy.linalg.block_diag(a, b, c, 7.0))
    with pytest.raises(RuntimeError, match="Input 0 has 3 dimensions"):
        ember.block_diag(ember.zeros(2, 2, 2))


def test_cross_matches_numpy_and_broadcasts(rng):
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((1, 3))
    _close(ember.cross(_t(a), _t(b), dim=1), np.cross(a, b))
    _close(ember.cross(_t(a.T), _t(b.T), dim=0), np.cross(a, b).T)
    with pytest.warns(UserWarning, match="without specifying the dim"):
        got = ember.cross(_t(a), _t(a[::-1].copy()))
    _close(got, np.cross(a, a[::-1]))
    with pytest.raises(RuntimeError, match="must have length 3"):
        ember.cross(ember.ones(2, 3), ember.ones(2, 3), dim=0)
    with pytest.raises(RuntimeError, match="no dimension of size 3"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ember.cross(ember.ones(2, 4), ember.ones(2, 4))


@pytest.mark.parametrize("sa,sb,dim", [((3,), (2, 3), None), ((3,), (2, 3), -1),
                                       ((3, 3), (1, 3), None), ((3, 3), (1, 3), 0),
                                       ((4, 3), (1, 3), None), ((1, 3), (4, 3), -1),
                                       ((3, 1), (3, 4), None), ((2, 3), (4, 3), 1),
                                       ((0, 3), (0, 3), None), ((), (), None)])
@pytest.mark.parametrize("form", ["cross", "method", "linalg"])
def test_cross_shapes_and_errors_as_torch(sa, sb, dim, form):
    # torch: one ndim for both inputs, both of length 3 along dim (no broadcasting there), the
    # other dims broadcast; dim=None picks input's first dim of length 3
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    if form == "linalg" and dim is None:
        dim = -1

    def run(lib, x, y):
        kw = {} if dim is None else {"dim": dim}
        f = {"cross": lib.cross, "method": x.cross, "linalg": lib.linalg.cross}[form]
        return f(x, y, **kw) if form != "method" else f(y, **kw)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = run(torch, torch.from_numpy(a), torch.from_numpy(b)).numpy()
        except (RuntimeError, IndexError) as e:
            first = str(e).splitlines()[0].split(" (")[0]
            with pytest.raises(type(e), match=re.escape(first)):
                run(ember, _t(a), _t(b))
            return
        _close(run(ember, _t(a), _t(b)), want)


@pytest.mark.parametrize("sa,sb", [((2,), (3,)), ((2, 3), (2, 2)), ((2,), (2, 3)),
                                   ((2, 1, 2), (3, 2)), ((), (2,))])
def test_kron_matches_numpy(rng, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    _close(ember.kron(_t(a), _t(b)), np.kron(a, b), rtol=1e-12)


def test_vander_matches_numpy(rng):
    x = rng.standard_normal(4)
    for n in (None, 1, 3, 6):
        for inc in (False, True):
            _close(ember.vander(_t(x), n, inc), np.vander(x, n, inc), rtol=1e-12)
    got = ember.vander(ember.tensor([1, 2, 3], dtype=ember.int32))
    assert got.dtype == ember.int64 and got.tolist() == np.vander([1, 2, 3]).tolist()
    assert ember.vander(_t(x), 0).shape == (4, 0)
    with pytest.raises(RuntimeError, match="x must be a one-dimensional tensor"):
        ember.vander(ember.zeros(2, 2))


# ----------------------------------------------------------------------------- gradients
GRAD_CASES = {
    "flip": lambda x: x.flip(0, -1),
    "roll": lambda x: ember.roll(x, (1, -2), (0, 1)),
    "roll_flat": lambda x: ember.roll(x, 5),
    "rot90": lambda x: ember.rot90(x, 3, (1, 0)),
    "repeat": lambda x: x.repeat(2, 1, 3),
    "tile": lambda x: ember.tile(x, (2,)),
    "repeat_interleave": lambda x: ember.repeat_interleave(x, ember.tensor([2, 0, 1]), dim=0),
    "tril": lambda x: ember.tril(x, -1),
    "triu": lambda x: x.triu(1),
    "diagonal": lambda x: x.diagonal(1) * 2,
    "diagonal_dims": lambda x: ember.diagonal(x, -1, 1, 0),
    "diag": lambda x: ember.diag(x, 1),
    "diag_vector": lambda x: ember.diag(x[0], -1),
    "diag_embed": lambda x: ember.diag_embed(x, 1, 0, 2),
    "diagflat": lambda x: ember.diagflat(x),
    "trace": lambda x: ember.trace(x),
    "kron": lambda x: ember.kron(x, x[:2, :2]),
    "cross": lambda x: ember.cross(x[:, :3], x[:, 1:], dim=1),
    "vander": lambda x: ember.vander(x[0], 3),
    "block_diag": lambda x: ember.block_diag(x, x[0], x[1, 1]),
    "meshgrid": lambda x: ember.meshgrid(x[0], x[1], indexing="xy")[1],
    "cartesian_prod": lambda x: ember.cartesian_prod(x[0], x[1, :2]),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradcheck(rng, name):
    x = _leaf(rng, 3, 4)
    assert gradcheck(GRAD_CASES[name], (x,))


@pytest.mark.parametrize("name", ["flip", "repeat", "diagonal", "diag_embed", "kron", "vander"])
def test_gradgradcheck(rng, name):
    x = _leaf(rng, 3, 4)
    assert gradgradcheck(GRAD_CASES[name], (x,))


def test_vander_grad_at_zero():
    # cumprod's gradient handles zeros: d/dx of [x^2, x, 1] at 0 is [0, 1, 0]
    x = ember.tensor([0.0], dtype=ember.float64, requires_grad=True)
    (ember.vander(x, 3) * ember.tensor([[1.0, 1.0, 1.0]], dtype=ember.float64)).sum().backward()
    _close(x.grad, [1.0])


# ----------------------------------------------------------------------------- torch parity
@pytest.mark.parity
def test_shape_ops_match_torch(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    a = rng.standard_normal((3, 4))
    cases = [
        (lambda m, x: m.rot90(x, 1, [1, 0])),
        (lambda m, x: x.repeat(2, 1, 2)),
        (lambda m, x: m.repeat_interleave(x, 2, dim=1)),
        (lambda m, x: m.diag_embed(x, -1, 2, 0)),
        (lambda m, x: m.block_diag(x, x[0])),
        (lambda m, x: m.kron(x, x[:2, 1:])),
        (lambda m, x: m.roll(x, -3)),
        (lambda m, x: m.cartesian_prod(x[0], x[1])),
    ]
    w = None
    for f in cases:
        xe = ember.tensor(a, requires_grad=True)
        xt = torch.tensor(a, requires_grad=True)
        ye, yt = f(ember, xe), f(torch, xt)
        np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
        w = rng.standard_normal(tuple(yt.shape))
        (ye * ember.tensor(w)).sum().backward()
        (yt * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parity
def test_diagonal_view_semantics_match_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    for lib in (ember, torch):
        x = lib.zeros(3, 3)
        d = x.diagonal()
        d.add_(1)
        assert x.sum().item() == 3.0
        assert d._base is x
