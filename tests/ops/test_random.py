"""Random sampling: seeding and determinism, Generator state, generator=, out=, value ranges and
rough statistics of rand/randn/randint/randperm/normal/bernoulli/multinomial and the in-place
samplers."""
from __future__ import annotations

import numpy as np
import pytest

import ember

SAMPLERS = {
    "rand": lambda **kw: ember.rand(3, 4, **kw),
    "randn": lambda **kw: ember.randn(5, **kw),
    "randint": lambda **kw: ember.randint(0, 100, (6,), **kw),
    "randperm": lambda **kw: ember.randperm(10, **kw),
    "normal": lambda **kw: ember.normal(2.0, 3.0, (4,), **kw),
    "normal_tensor": lambda **kw: ember.normal(ember.zeros(3), ember.ones(3), **kw),
    "bernoulli": lambda **kw: ember.bernoulli(ember.full((8,), 0.5), **kw),
    "multinomial": lambda **kw: ember.multinomial(ember.tensor([0.2, 0.3, 0.5]), 2, **kw),
}


@pytest.mark.parametrize("name", SAMPLERS)
def test_manual_seed_is_bitwise_deterministic(name):
    draw = SAMPLERS[name]
    ember.manual_seed(123)
    a = draw()
    ember.manual_seed(123)
    b = draw()
    assert a.dtype == b.dtype
    assert a.numpy().tobytes() == b.numpy().tobytes()
    c = draw()  # the stream moved on
    assert name == "multinomial" or a.numpy().tobytes() != c.numpy().tobytes()


@pytest.mark.parametrize("name", SAMPLERS)
def test_generator_argument_uses_its_own_stream(name):
    draw = SAMPLERS[name]
    g1, g2 = ember.Generator().manual_seed(7), ember.Generator().manual_seed(7)
    ember.manual_seed(0)
    a = draw(generator=g1)
    ember.randn(10)  # the default stream must not affect g2
    b = draw(generator=g2)
    assert a.numpy().tobytes() == b.numpy().tobytes()


def test_generator_state_round_trip():
    g = ember.Generator().manual_seed(11)
    ember.rand(3, generator=g)
    state = g.get_state()
    assert state.dtype == ember.uint8
    a = ember.randn(5, generator=g)
    g.set_state(state)
    b = ember.randn(5, generator=g)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert g.initial_seed() == 11


def test_global_rng_state_round_trip():
    ember.manual_seed(3)
    state = ember.get_rng_state()
    a = ember.rand(4)
    ember.set_rng_state(state)
    np.testing.assert_array_equal(ember.rand(4).numpy(), a.numpy())
    assert ember.initial_seed() == 3


def test_set_state_rejects_garbage():
    g = ember.Generator()
    with pytest.raises(TypeError, match="uint8"):
        g.set_state(ember.zeros(3))
    with pytest.raises(RuntimeError, match="invalid generator state"):
        g.set_state(ember.zeros(3, dtype=ember.uint8))


def test_manual_seed_returns_default_generator():
    assert ember.manual_seed(5) is ember.default_generator


@pytest.mark.parametrize("name,make", [
    ("rand", lambda out: ember.rand(2, 3, out=out)),
    ("randn", lambda out: ember.randn(2, 3, out=out)),
    ("randint", lambda out: ember.randint(0, 5, (2, 3), out=out)),
    ("randperm", lambda out: ember.randperm(6, out=out)),
    ("normal", lambda out: ember.normal(0.0, 1.0, (2, 3), out=out)),
])
def test_out_argument_receives_the_sample(name, make):
    dtype = ember.int64 if name in ("randint", "randperm") else ember.float32
    out = ember.empty(0, dtype=dtype)
    ember.manual_seed(9)
    res = make(out)
    assert res is out and out.numel() == 6
    ember.manual_seed(9)
    np.testing.assert_array_equal(make(None).numpy(), out.numpy())


# ---------------------------------------------------------------------------------------------
# ranges and statistics (n large enough that the bounds below fail with negligible probability)


def test_rand_range_and_moments():
    x = ember.rand(20000).numpy()
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.01 and abs(x.var() - 1 / 12) < 0.005


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16, ember.float32, ember.float64])
def test_rand_and_randn_dtypes(dtype):
    assert ember.rand(3, dtype=dtype).dtype == dtype
    assert ember.randn(3, dtype=dtype).dtype == dtype


def test_sampling_integer_dtype_raises():
    with pytest.raises(RuntimeError, match="floating-point dtype.*int64"):
        ember.rand(2, dtype=ember.int64)


def test_randn_moments():
    x = ember.randn(20000).numpy()
    assert abs(x.mean()) < 0.03 and abs(x.std() - 1.0) < 0.03


def test_randint_range_dtype_and_coverage():
    x = ember.randint(3, 10, (5000,))
    assert x.dtype == ember.int64
    assert set(np.unique(x.numpy())) == set(range(3, 10))
    assert ember.randint(5, (3,)).numpy().max() < 5
    assert ember.randint(0, 2, (4,), dtype=ember.uint8).dtype == ember.uint8
    with pytest.raises(RuntimeError, match="from=5 >= to=5"):
        ember.randint(5, 5, (2,))


def test_randperm_is_a_permutation():
    p = ember.randperm(50)
    assert p.dtype == ember.int64 and sorted(p.tolist()) == list(range(50))
    assert ember.randperm(0).numel() == 0
    with pytest.raises(RuntimeError, match="non-negative"):
        ember.randperm(-1)


def test_normal_forms_and_moments():
    x = ember.normal(2.0, 3.0, (20000,)).numpy()
    assert abs(x.mean() - 2.0) < 0.1 and abs(x.std() - 3.0) < 0.1
    mean = ember.tensor([0.0, 100.0])
    y = ember.normal(mean, 0.5)
    assert tuple(y.shape) == (2,) and abs(y[1].item() - 100.0) < 5
    z = ember.normal(ember.zeros(2, 1), ember.ones(3))  # mean and std broadcast
    assert tuple(z.shape) == (2, 3)
    with pytest.raises(RuntimeError, match="std >= 0"):
        ember.normal(0.0, -1.0, (2,))
    with pytest.raises(RuntimeError, match="std >= 0"):
        ember.normal(ember.zeros(2), ember.tensor([1.0, -1.0]))


def test_bernoulli_values_and_rate():
    p = ember.full((20000,), 0.3)
    x = ember.bernoulli(p)
    assert x.dtype == ember.float32 and set(np.unique(x.numpy())) <= {0.0, 1.0}
    assert abs(x.numpy().mean() - 0.3) < 0.02
    assert ember.bernoulli(ember.zeros(5)).sum().item() == 0
    assert ember.bernoulli(ember.ones(5)).sum().item() == 5
    with pytest.raises(RuntimeError, match="0 <= p|p_in >= 0"):
        ember.bernoulli(ember.tensor([1.5]))


def test_multinomial_frequencies_and_rules():
    w = ember.tensor([1.0, 0.0, 3.0])
    draws = ember.multinomial(w, 8000, replacement=True).numpy()
    assert draws.dtype == np.int64 and 1 not in draws
    assert abs((draws == 2).mean() - 0.75) < 0.03
    rows = ember.multinomial(ember.tensor([[1.0, 1.0, 1.0], [0.0, 2.0, 1.0]]), 2)
    assert tuple(rows.shape) == (2, 2)
    assert all(len(set(r)) == 2 for r in rows.tolist())  # no repeats without replacement
    with pytest.raises(RuntimeError, match="n_sample > prob_dist.size"):
        ember.multinomial(ember.tensor([0.5, 0.5]), 3)
    with pytest.raises(RuntimeError, match="inf.*nan.*< 0"):
        ember.multinomial(ember.tensor([-1.0, 2.0]), 1)


def test_inplace_samplers_stay_in_range_and_bump_version():
    x = ember.empty(5000)
    v = x._version
    x.uniform_(2.0, 3.0)
    assert x._version > v and 2.0 <= x.min().item() and x.max().item() < 3.0
    x.normal_(1.0, 2.0)
    assert abs(x.mean().item() - 1.0) < 0.15 and abs(x.std().item() - 2.0) < 0.15
    x.bernoulli_(0.25)
    assert set(np.unique(x.numpy())) <= {0.0, 1.0}
    x.exponential_(2.0)
    assert x.min().item() >= 0 and abs(x.mean().item() - 0.5) < 0.05
    i = ember.empty(100, dtype=ember.int64).random_(0, 4)
    assert set(np.unique(i.numpy())) <= {0, 1, 2, 3}


def test_inplace_sampler_on_leaf_requiring_grad_raises():
    w = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.uniform_()
    with ember.no_grad():
        w.uniform_()  # allowed without grad recording, as in torch (nn.init)


@pytest.mark.parametrize("name,args,dtype,error", [
    ("uniform_", (), ember.int64, NotImplementedError),
    ("normal_", (), ember.bool, NotImplementedError),
    ("log_normal_", (), ember.complex64, NotImplementedError),
    ("geometric_", (0.5,), ember.bool, NotImplementedError),
    ("random_", (), ember.complex64, NotImplementedError),
    ("bernoulli_", (0.5,), ember.complex64, NotImplementedError),
    ("exponential_", (), ember.int32, RuntimeError),
    ("cauchy_", (), ember.uint8, RuntimeError)])
def test_inplace_samplers_refuse_dtypes_without_a_kernel(name, args, dtype, error):
    """As torch's CPU kernels: the continuous laws want a floating tensor (uniform_/normal_
    also complex); an integer tensor used to be filled with truncated draws."""
    x = ember.zeros(4, dtype=dtype)
    with pytest.raises(error, match=f"{name}: .*{str(dtype).split('.')[-1]}"):
        getattr(x, name)(*args)


def test_random_without_bounds_covers_each_dtypes_exact_integers():
    """[0, 2**digits] for floats (every integer exact), {0, 1} for bool; bfloat16 works."""
    ember.manual_seed(0)
    assert set(np.unique(ember.zeros(500, dtype=ember.bool).random_().numpy())) == {False, True}
    b = ember.zeros(2000, dtype=ember.bfloat16).random_().float()
    assert b.max().item() <= 256 and b.max().item() > 200
    d = ember.zeros(2000, dtype=ember.float64).random_()
    assert d.max().item() > 2.0 ** 40   # float64's range is 2**53, not float32's 2**24
    assert ember.zeros(3, dtype=ember.int64).geometric_(0.5).min().item() >= 1
