"""Two-operand einsum through matmul (NOTE [Two-operand einsum as a matmul] in
ember/ops/products.py): the values np.einsum gives in float64, torch's accuracy in float32,
gradients, and the forms that keep np.einsum's own path."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from ember.ops.products import _einsum_as_matmul

CASES = [  # equation, shape of a, shape of b
    ("bhij,bhjd->bhid", (2, 3, 4, 5), (2, 3, 5, 6)),
    ("bhid,bhjd->bhij", (2, 3, 4, 6), (2, 3, 5, 6)),
    ("ij,jk->ki", (3, 4), (4, 5)),
    ("i,j->ij", (3,), (4,)),
    ("ij,ij->", (3, 4), (3, 4)),
    ("bij,bj->bi", (2, 3, 4), (2, 4)),
    ("abc,cd->dba", (2, 3, 4), (4, 5)),
    ("ij,jk->ik", (0, 4), (4, 5)),
    ("ij,jk->ik", (3, 0), (0, 5)),
]


@pytest.mark.parametrize("eq,sa,sb", CASES)
def test_matches_numpy_einsum_in_float64(rng, eq, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    got = _einsum_as_matmul(eq, a, b)
    assert got is not None and got.flags.c_contiguous
    np.testing.assert_allclose(got, np.einsum(eq, a, b), rtol=1e-12, atol=1e-12)
    out = ember.einsum(eq, ember.tensor(a), ember.tensor(b))
    np.testing.assert_allclose(out.numpy(), np.einsum(eq, a, b), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("eq,sa,sb", [("ii,ij->j", (3, 3), (3, 4)), ("ij,jk->i", (3, 4), (4, 5)),
                                      ("...ij,...jk->...ik", (2, 3, 4), (2, 4, 5)),
                                      ("ij,jk->ik", (3, 1), (4, 5))])
def test_other_forms_keep_numpys_path(rng, eq, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    assert _einsum_as_matmul(eq, a, b) is None
    if "1" not in str(sa):
        np.testing.assert_allclose(ember.einsum(eq, ember.tensor(a), ember.tensor(b)).numpy(),
                                   np.einsum(eq, a, b), rtol=1e-12)


def test_float32_sums_are_as_accurate_as_torchs(rng):
    # attention's V gradient P^T G over 4096 queries: positive terms, where one running sum
    # per output (np.einsum's loop) loses ~7x the accuracy of BLAS's blocked sums
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    p, g = (rng.random((2, 4096, 64)).astype(np.float32) for _ in range(2))
    exact = np.einsum("bij,bid->bjd", p.astype(np.float64), g.astype(np.float64))

    def rel_err(lib):
        got = lib.einsum("bij,bid->bjd", lib.tensor(p), lib.tensor(g)).numpy()
        return np.abs(got.astype(np.float64) - exact).max() / np.abs(exact).max()

    assert rel_err(ember) <= 2 * rel_err(torch)


def test_gradcheck():
    a = ember.randn(2, 3, 4, dtype=ember.float64, requires_grad=True)
    b = ember.randn(2, 4, 5, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda x, y: ember.einsum("bij,bjk->bki", x, y), (a, b))
