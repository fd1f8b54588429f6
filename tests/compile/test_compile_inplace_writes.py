"""In-place writes into tensors that live outside a compiled function (buffers, arguments,
closure tensors) are recorded and replayed in order, with version bumps and guards on the
written tensors (NOTE [In-place writes in a compiled call] in ember/_dynamo/writes.py).

Each compiled function runs with fullgraph=True where the write is new: before, every such
write was a graph break (Unsupported under fullgraph), or, for fill_/zero_, a replay that
skipped the write."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember._dynamo.exc import Unsupported
from ember.testing import assert_close


def _t(*shape, seed=0, dtype=np.float32):
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


# ----------------------------------------------------------------------------- a KV cache
class KVCache(nn.Module):
    def __init__(self, heads, length, dim):
        super().__init__()
        self.register_buffer("k_cache", ember.zeros(1, heads, length, dim))
        self.register_buffer("v_cache", ember.zeros(1, heads, length, dim))

    def update(self, input_pos, k, v):
        self.k_cache[:, :, input_pos] = k
        self.v_cache[:, :, input_pos] = v
        return self.k_cache, self.v_cache


class Decoder(nn.Module):
    """One attention layer decoding from a KV cache, as gpt-fast's model does."""

    def __init__(self, vocab=11, dim=8, heads=2, length=12):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.emb = nn.Embedding(vocab, dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, vocab, bias=False)
        self.kv_cache = KVCache(heads, length, self.hd)
        self.register_buffer("causal", ember.tril(ember.ones(length, length, dtype=ember.bool)))

    def forward(self, tokens, input_pos):
        b, s = tokens.shape
        q, k, v = self.qkv(self.emb(tokens)).split(self.heads * self.hd, dim=-1)
        q, k, v = (t.view(b, s, self.heads, self.hd).transpose(1, 2) for t in (q, k, v))
        k, v = self.kv_cache.update(input_pos, k, v)
        mask = self.causal[None, None, input_pos]
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(b, s, -1))


def _decode_one(model, tokens, input_pos):
    return model(tokens, input_pos).argmax(-1)


@pytest.mark.parametrize("index_dtype", [ember.int64, ember.int32])
def test_kv_cache_decode_loop_matches_eager(index_dtype):
    ember.manual_seed(0)
    model = Decoder()
    twin = copy.deepcopy(model)
    step = ember.compile(_decode_one, fullgraph=True)
    with ember.no_grad():
        prompt = ember.tensor([[1, 4, 2]])
        pos = ember.arange(3)
        tok, tok_eager = model(prompt, pos)[:, -1:].argmax(-1), twin(prompt, pos)[:, -1:].argmax(-1)
        assert_close(model.kv_cache.k_cache, twin.kv_cache.k_cache)
        for i in range(3, 10):
            input_pos = ember.tensor([i], dtype=index_dtype)
            tok = step(model, tok, input_pos)
            tok_eager = _decode_one(twin, tok_eager, input_pos)
            assert_close(tok, tok_eager)
            # the cache read back after every step: the replay wrote row i, as eager did
            assert_close(model.kv_cache.k_cache, twin.kv_cache.k_cache)
            assert_close(model.kv_cache.v_cache, twin.kv_cache.v_cache)
            assert model.kv_cache.k_cache._version == twin.kv_cache.k_cache._version
    assert float(model.kv_cache.k_cache[0, :, 9].abs().sum()) > 0  # the last step's row
    assert step.stats["captures"] == 1 and step.stats["hits"] == 6


# ----------------------------------------------------------------------------- each op
# (name, write(target, x, idx)): every write is followed by a read of the target in the call
WRITES = {
    "setitem_basic": lambda t, x, idx: t.__setitem__((slice(1, 3),), x[:2]),
    "setitem_tensor_index": lambda t, x, idx: t.__setitem__(idx, x[:2]),
    "setitem_slice_and_index": lambda t, x, idx: t.__setitem__((slice(None), idx % 3),
                                                               x[:2, 0].unsqueeze(0)),
    "setitem_scalar": lambda t, x, idx: t.__setitem__(idx, 2.5),
    "index_copy_": lambda t, x, idx: t.index_copy_(0, idx, x[:2]),
    "index_put_": lambda t, x, idx: t.index_put_((idx,), x[:2]),
    "index_put_accumulate": lambda t, x, idx: t.index_put_((idx,), x[:2], accumulate=True),
    "copy_": lambda t, x, idx: t.copy_(x),
    "fill_": lambda t, x, idx: t.fill_(1.5),
    "zero_": lambda t, x, idx: t.zero_(),
    "add_": lambda t, x, idx: t.add_(x, alpha=2),
    "mul_": lambda t, x, idx: t.mul_(x),
    "clamp_": lambda t, x, idx: t.clamp_(min=0.0),
    "iadd": lambda t, x, idx: t.__iadd__(x),
}


def _indices(seed):
    return ember.tensor([(seed + 1) % 4, (seed + 3) % 4])


@pytest.mark.parametrize("name", sorted(WRITES))
def test_write_into_an_argument(name):
    write = WRITES[name]

    def fn(t, x, idx):
        before = t * 1
        write(t, x, idx)
        return before + t * 2  # the later read sees the written values

    f = ember.compile(fn, fullgraph=True)
    target, twin = _t(4, 3, seed=9), _t(4, 3, seed=9)
    with ember.no_grad():
        for seed in range(3):
            x, idx = _t(4, 3, seed=seed), _indices(seed)
            assert_close(f(target, x, idx), fn(twin, x, idx))
            assert_close(target, twin)
            assert target._version == twin._version
    assert f.stats["captures"] == 1


class Holder(nn.Module):
    def __init__(self, write):
        super().__init__()
        self.write = write
        self.register_buffer("buf", _t(4, 3, seed=9))

    def forward(self, x, idx):
        before = self.buf.sum(0)
        self.write(self.buf, x, idx)
        return self.buf * 2 + before


@pytest.mark.parametrize("name", sorted(WRITES))
def test_write_into_a_buffer(name):
    m = Holder(WRITES[name])
    twin = Holder(WRITES[name])
    f = ember.compile(m, fullgraph=True)
    for seed in range(3):  # grad mode on: nothing requires grad, so nothing records autograd
        x, idx = _t(4, 3, seed=seed), _indices(seed)
        assert_close(f(x, idx), twin(x, idx))
        assert_close(m.buf, twin.buf)
        assert m.buf._version == twin.buf._version
    assert f.dynamo_ctx.stats["captures"] == 1


def test_write_into_a_closure_tensor_and_a_view_of_a_buffer():
    table = ember.zeros(3, 4)

    def fn(x):
        table[1].add_(x)                 # a view of a closure tensor
        row = table[:, 2]
        row.fill_(float(3))              # a basic view, written whole
        table.view(-1)[ember.tensor([0, 11])] = x[:2]  # setitem into a reshaped view
        return table.sum(1)

    twin_table = ember.zeros(3, 4)

    def twin(x):
        twin_table[1].add_(x)
        twin_table[:, 2].fill_(3.0)
        twin_table.view(-1)[ember.tensor([0, 11])] = x[:2]
        return twin_table.sum(1)

    f = ember.compile(fn, fullgraph=True)
    for seed in range(3):
        x = _t(4, seed=seed)
        assert_close(f(x), twin(x))
        assert_close(table, twin_table)
        assert table._version == twin_table._version


def test_writes_keep_eager_order_with_reads_between():
    def fn(buf, x):
        a = buf.sum()
        buf.mul_(2)
        b = buf.sum()
        buf[0] = x[0]
        c = buf.sum()
        buf.add_(1)
        return ember.stack([a, b, c, buf.sum()])

    f = ember.compile(fn, fullgraph=True)
    buf, twin = _t(3, seed=1), _t(3, seed=1)
    for seed in range(3):
        x = _t(3, seed=seed)
        assert_close(f(buf, x), fn(twin, x))
        assert_close(buf, twin)


def test_random_sampler_into_a_fresh_tensor_draws_again_each_call():
    def fn(p):
        q = ember.empty_like(p).exponential_(1)
        return (p / q).argmax(-1)

    f = ember.compile(fn, fullgraph=True)
    p = _t(5, 7).abs()
    for seed in range(4):
        ember.manual_seed(seed)
        got = f(p)
        ember.manual_seed(seed)
        assert_close(got, fn(p))
    ember.manual_seed(0)
    draws = {tuple(f(p).tolist()) for _ in range(4)}
    assert len(draws) > 1  # not one captured draw


def test_explain_names_the_write():
    m = Holder(WRITES["setitem_tensor_index"])
    report = ember._dynamo.explain(m)(_t(4, 3), _indices(0))
    assert report.graph_break_count == 0
    assert report.replayed_calls == ["__setitem__ into an outside tensor of shape [4, 3]"]


def test_eager_backend_replays_the_writes():
    m, twin = Holder(WRITES["index_copy_"]), Holder(WRITES["index_copy_"])
    f = ember.compile(m, backend="eager", fullgraph=True)
    for seed in range(3):
        x, idx = _t(4, 3, seed=seed), _indices(seed)
        assert_close(f(x, idx), twin(x, idx))
        assert_close(m.buf, twin.buf)


# ----------------------------------------------------------------------------- guards
def test_buffer_replaced_by_another_tensor_is_written_not_the_old_one():
    m = Holder(WRITES["setitem_tensor_index"])
    f = ember.compile(m, fullgraph=True)
    x, idx = _t(4, 3, seed=1), _indices(1)
    f(x, idx)
    old = m.buf
    kept = old.clone()
    m.buf = ember.zeros(4, 3)  # same shape and dtype: only the object changed
    f(x, idx)
    assert_close(old, kept)  # the old memory is left alone
    twin = ember.zeros(4, 3)
    twin[idx] = x[:2]
    assert_close(m.buf, twin)
    assert f.dynamo_ctx.stats["captures"] == 2


def test_submodule_holding_the_cache_replaced():
    model = Decoder()
    step = ember.compile(_decode_one, fullgraph=True)
    with ember.no_grad():
        step(model, ember.tensor([[3]]), ember.tensor([0]))
        old = model.kv_cache
        model.kv_cache = KVCache(2, 12, 4)  # as gpt-fast's setup_caches() does
        step(model, ember.tensor([[3]]), ember.tensor([1]))
    assert float(old.k_cache[:, :, 1].abs().sum()) == 0
    assert float(model.kv_cache.k_cache[:, :, 1].abs().sum()) > 0
    assert float(model.kv_cache.k_cache[:, :, 0].abs().sum()) == 0


def test_resized_or_reallocated_buffer():
    m = Holder(WRITES["copy_"])
    f = ember.compile(m, fullgraph=True)
    x = _t(4, 3, seed=1)
    f(x, _indices(0))
    fresh = ember.zeros(4, 3)
    m.buf.data = fresh  # new memory, same shape: the replay writes there
    f(x, _indices(0))
    assert_close(fresh, x)
    m.buf = ember.zeros(5, 3)  # a new shape: captured again (and copy_ now raises, as eager)
    with pytest.raises(RuntimeError, match="copy_"):
        f(x, _indices(0))


def test_index_dtype_change_recompiles():
    def fn(buf, x, idx):
        buf[:, idx] = x
        return buf.sum()

    f = ember.compile(fn, fullgraph=True)
    buf, twin = ember.zeros(2, 5), ember.zeros(2, 5)
    for dt, seed in [(ember.int64, 0), (ember.int32, 1), (ember.int32, 2)]:
        idx = ember.tensor([seed, seed + 2], dtype=dt)
        x = _t(2, 2, seed=seed)
        assert_close(f(buf, x, idx), fn(twin, x, idx))
        assert_close(buf, twin)
    assert f.stats["captures"] == 2 and f.stats["recompiles"] == 1


def test_write_into_an_unreachable_tensor_is_a_graph_break():
    class Slots:
        __slots__ = ("_t",)  # private: the state guard does not walk it

    def fn(holder, x):
        holder._t.add_(x)
        return x * 2

    box = Slots()
    box._t = ember.zeros(3)
    with pytest.raises(Unsupported, match="cannot guard against its replacement"):
        ember.compile(fn, fullgraph=True)(box, _t(3))
    box._t = ember.zeros(3)
    f = ember.compile(fn)
    twin = ember.zeros(3)
    for seed in range(2):
        x = _t(3, seed=seed)
        f(box, x)
        twin.add_(x)
    assert_close(box._t, twin)


def test_write_into_a_tensor_in_public_slots_replays_and_follows_its_replacement():
    class Slots:
        __slots__ = ("t",)  # walked like a __dict__ attribute (NOTE [Guards on Python state])

    def fn(holder, x):
        holder.t.add_(x)
        return x * 2

    box = Slots()
    box.t = ember.zeros(3)
    f = ember.compile(fn, fullgraph=True)
    twin = ember.zeros(3)
    for seed in range(3):
        x = _t(3, seed=seed)
        f(box, x)
        twin.add_(x)
    assert_close(box.t, twin)
    assert f.stats["hits"] == 2
    box.t = ember.ones(3)
    f(box, x)
    assert_close(box.t, 1 + x)


# ----------------------------------------------------------------------------- autograd
def test_write_into_a_leaf_that_requires_grad_raises_as_eager():
    p = ember.zeros(3, requires_grad=True)
    f = ember.compile(lambda x: p.add_(x))
    for _ in range(2):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            f(_t(3))
    with ember.no_grad():  # allowed under no_grad, as in eager
        f(_t(3))
        f(_t(3, seed=1))
    assert_close(p.detach(), _t(3) + _t(3, seed=1))


def test_write_with_autograd_before_a_read_gives_eager_gradients():
    def fn(x, buf):
        buf.add_(1)
        return (x * buf).sum()

    f = ember.compile(fn, fullgraph=True)
    buf, twin = _t(3, seed=5), _t(3, seed=5)
    for seed in range(3):
        x1 = _t(3, seed=seed).requires_grad_()
        x2 = _t(3, seed=seed).requires_grad_()
        f(x1, buf).backward()
        fn(x2, twin).backward()
        assert_close(x1.grad, x2.grad)
        assert_close(buf, twin)


def test_write_into_a_tensor_a_backward_saved_raises_at_backward_as_eager():
    def fn(x, buf):
        y = (x * buf).sum()  # saves buf for the gradient of x
        buf.add_(1)
        return y

    f = ember.compile(fn)
    for call in (fn, f, f):
        x = _t(3).requires_grad_()
        y = call(x, _t(3, seed=2))
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


def test_write_into_a_value_requiring_grad_is_not_replayed_wrong():
    def fn(x, buf):
        buf[0] = x.sum()   # records autograd: buf joins x's graph
        return (buf * 2).sum()

    f = ember.compile(fn)
    for seed in range(3):
        x1, x2 = _t(3, seed=seed).requires_grad_(), _t(3, seed=seed).requires_grad_()
        buf1, buf2 = ember.zeros(3), ember.zeros(3)
        f(x1, buf1).backward()
        fn(x2, buf2).backward()
        assert_close(x1.grad, x2.grad)
        assert_close(buf1.detach(), buf2.detach())


def test_write_in_a_call_that_splits_runs_eagerly():
    def fn(buf, x):
        buf.add_(x)
        noise = ember.empty_like(x).normal_()
        if float(x.sum()) > 0:  # data-dependent Python: a graph break that splits
            return buf * 2 + noise
        return buf - 1 + noise

    f = ember.compile(fn)
    buf, twin = ember.zeros(3), ember.zeros(3)
    for seed in range(4):
        x = _t(3, seed=seed)
        ember.manual_seed(seed)
        got = f(buf, x)
        ember.manual_seed(seed)
        assert_close(got, fn(twin, x))
        assert_close(buf, twin)
    assert "graph break" in f.last_breaks[-1][0]


def test_split_call_hands_out_index_values_op_wrappers_read():
    # a graph break that splits (numpy() of a computed value), then an index made by an op and
    # checked in Python by gather's wrapper: the replay's stand-in held garbage there
    def fn(x, t):
        labels = (t + 0).numpy()
        idx = ember.tensor(labels % 3).unsqueeze(1)
        return x.gather(1, idx).squeeze(1) * 2

    f = ember.compile(fn)
    for seed in range(4):
        x, t = _t(4, 3, seed=seed), ember.tensor([4, 1, 2, 0])  # the same labels each call
        assert_close(f(x, t), fn(x, t))
    assert f.stats.get("diverged", 0) == 0 and "numpy" in f.last_breaks[0][0]


def test_partial_writes_into_a_factory_tensor_made_in_the_call():
    def fn(x, idx):
        mask = ember.zeros(5, dtype=ember.bool)
        mask[idx] = True
        out = ember.zeros(2, 5)
        out[0] = x
        out[1, idx] = x[idx] * 2
        out[:, 4].fill_(7.0)  # a view of it, written whole
        return ember.where(mask, out, -out), out

    f = ember.compile(fn, fullgraph=True)
    results = []
    for seed in range(4):
        x, idx = _t(5, seed=seed), ember.tensor([seed % 5, (seed + 2) % 5])
        got, want = f(x, idx), fn(x, idx)
        assert_close(got[0], want[0])
        assert_close(got[1], want[1])
        results.append((got[1], want[1]))
    for got, want in results:  # each replay's tensor is its own, not one reused array
        assert_close(got, want)
    assert f.stats["captures"] == 1
    calls = ember._dynamo.explain(fn)(x, idx).replayed_calls
    assert calls[0] == "__setitem__ into a tensor made in the call of shape [5]"
