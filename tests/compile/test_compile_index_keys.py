"""ember.compile on indexing with tensors inside the key (NOTE [Sequences of values as op
arguments] in ember/_dynamo/capture.py), 0-d index tensors, boolean masks, the *_like
factories, and writes made outside ops (setitem without autograd, factories with out=): a
compiled call reads this call's indices and keeps every write, never replays the captured
ones."""
from __future__ import annotations

import pytest

# a fresh compile cache per test (autouse fixture) and the float32 input helper
from test_compile_dynamic import _fresh, _t  # noqa: F401

import ember
from ember._dynamo.exc import Unsupported
from ember.testing import assert_close


def _columns(x, idx):
    return x[:, idx] * 2


def test_index_tensor_in_a_key_is_read_at_each_call():
    f = ember.compile(_columns, fullgraph=True)
    x = _t(3, 5)
    for idx in ([0, 1], [3, 4], [4, 0]):
        i = ember.tensor(idx)
        assert_close(f(x, i), _columns(x, i))
    assert f.stats["eager"] == 0
    report = ember._dynamo.explain(_columns)(x, ember.tensor([1, 2]))
    assert report.graph_break_count == 0 and report.graph_count == 1


def test_causal_mask_rows_picked_by_positions_as_gpt_fast_does():
    mask = ember.tril(ember.ones(8, 8, dtype=ember.bool))

    def attend(scores, input_pos):
        m = mask[None, None, input_pos]
        return ember.where(m, scores, ember.zeros_like(scores)).softmax(-1)

    f = ember.compile(attend, fullgraph=True)
    s = _t(1, 2, 3, 8)
    for pos in ([0, 1, 2], [5, 6, 7], [2, 4, 6]):
        p = ember.tensor(pos)
        assert_close(f(s, p), attend(s, p))


def test_gradient_through_an_index_with_a_tensor_key():
    def loss(x, w, idx):
        return (x[idx, 1:] * w).sum()

    f = ember.compile(loss, fullgraph=True)
    w = _t(3, seed=1)
    for idx in ([0, 2], [3, 3], [1, 0]):
        x = _t(4, 4, rg=True)
        i = ember.tensor(idx)
        f(x, w, i).backward()
        want = ember.autograd.grad(loss(x, w, i), [x])[0]
        assert_close(x.grad, want)


def test_callable_backend_gets_the_key_as_a_tuple_of_graph_values():
    seen = []

    def backend(gm, example_inputs):
        seen.append(gm)
        return gm.forward

    f = ember.compile(_columns, backend=backend)
    x = _t(3, 5)
    for idx in ([0, 1], [2, 3]):
        i = ember.tensor(idx)
        assert_close(f(x, i), _columns(x, i))
    assert len(seen) == 1


def test_zero_dim_index_tensor_is_a_data_dependent_read():
    def pick(x, i):
        return x[i] * 2

    f = ember.compile(pick)
    x = ember.arange(5.0)
    for i in (1, 3, 0):
        assert_close(f(x, ember.tensor(i)), pick(x, ember.tensor(i)))
    with pytest.raises(Unsupported, match="data-dependent"):
        ember.compile(pick, fullgraph=True)(x, ember.tensor(2))


def test_boolean_mask_in_a_key_is_a_graph_break():
    def select(x, m):
        return x[m] + 1

    f = ember.compile(select)
    x = _t(6)
    for bits in ([1, 0, 1, 0, 0, 0], [1, 1, 1, 0, 1, 1]):
        m = ember.tensor(bits).bool()
        assert_close(f(x, m), select(x, m))
    with pytest.raises(Unsupported, match="boolean mask"):
        ember.compile(select, fullgraph=True)(x, ember.tensor([True] * 6))


def test_like_factories_are_constants_of_the_graph():
    def g(x):
        return (x + ember.ones_like(x) + x.new_ones(x.shape[-1]) + ember.zeros_like(x)).sum()

    f = ember.compile(g, fullgraph=True)
    for seed in range(3):
        x = _t(2, 3, seed=seed)
        assert_close(f(x), g(x))


def _set_row(x):
    y = x * 1
    y[0] = 7.0
    return y + 1


def _set_column_by_tensor(x, i):
    y = x * 1
    y[:, i] = x[:, :1]
    return y


def test_setitem_on_a_value_of_the_graph_is_seen():
    # the write used to bypass the recorder: the replay returned x * 1 + 1 unwritten
    f, g = ember.compile(_set_row), ember.compile(_set_column_by_tensor)
    for seed in range(3):
        x = _t(3, 4, seed=seed)
        i = ember.tensor([seed + 1])
        assert_close(f(x), _set_row(x))
        assert_close(g(x, i), _set_column_by_tensor(x, i))
    # (a graph break before the writes into values of the graph were made functional)
    assert ember._dynamo.explain(_set_row)(_t(3, 4)).break_reasons == []


def test_factory_out_into_an_argument_is_kept():
    def fill(x, buf):
        ember.arange(3, out=buf)
        return buf + x

    f = ember.compile(fill)
    for seed in range(3):
        x, buf, twin = _t(3, seed=seed), ember.zeros(3), ember.zeros(3)
        assert_close(f(x, buf), fill(x, twin))
        assert_close(buf, twin)


# Functions whose result depends on the input's values through NumPy their wrappers run
# outside the op registry (an argsort order, a median index, argmax's result, an index cast to
# int64): NOTE [Arrays computed outside the registry] in ember/_dynamo/capture.py. Each must
# give eager's result for every input, by a graph break or by a graph reading the values.
DATA_DEPENDENT = {
    "sort": lambda x: x.sort().values * 1,
    "argsort": lambda x: x.argsort() + 0,
    "topk": lambda x: x.topk(2).values * 1,
    "kthvalue": lambda x: x.kthvalue(2).values * 1,
    "median": lambda x: ember.median(x) * 1,
    "nanmedian": lambda x: ember.nanmedian(x) * 1,
    "median_dim": lambda x: ember.median(x, 0).values * 1,
    "cummax": lambda x: x.cummax(0).values * 1,
    "mode": lambda x: x.round().mode().values * 1,
    "quantile": lambda x: ember.quantile(x, 0.3) * 1,
    "gather_int32": lambda x: x.gather(0, (x > 0).int()) * 1,
    "scatter_int32": lambda x: x.scatter(0, (x > 0).int(), 5.0) * 1,
    "index_at_argmax": lambda x: x[x.argmax()] * 1,
    "plus_argmax": lambda x: x + x.argmax(),
    "index_select_view": lambda x: x.index_select(0, (x > 0).long().reshape(-1)) * 1,
}


@pytest.mark.parametrize("name", sorted(DATA_DEPENDENT))
def test_values_computed_outside_ops_are_never_replayed(name):
    fn = DATA_DEPENDENT[name]
    f = ember.compile(fn)
    for seed in range(4):
        x = _t(6, seed=seed)
        assert_close(f(x), fn(x))
