"""Gap classes huggingface/transformers (5.24) found under the alias: names it imports at import
time (float8 dtypes, DTensor placements, FSDP policies, CUDA classes in annotations, custom ops,
pytree keys) and behaviours its models rely on (``x in tensor``, writing into
``arange(n).expand(1, -1)``, scaled_dot_product_attention of a query that may attend to no key,
safetensors' loading through ``UntypedStorage.from_file``).
Each is checked against torch 2.13."""
from __future__ import annotations

import collections
import dataclasses
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

_F8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]
# in range, between representable values, past the largest finite, infinities, NaN, tiny,
# negative and both zeros (torch's float8_e4m3fn saturates; e8m0fnu takes magnitudes)
_VALUES = [0.1, 1.3, -3.7, 240.0, 247.0, 449.0, 464.0, 500.0, 57344.0, 61440.0, 1e6, 1e30,
           -1e30, float("inf"), float("-inf"), float("nan"), 1e-3, 1e-9, 0.0, -0.0]


@pytest.mark.parametrize("name", _F8)
def test_float8_casts_round_and_saturate_as_torch(name):
    e, t = getattr(ember, name), getattr(torch, name)
    src = np.array(_VALUES, np.float32)
    got = ember.from_numpy(src).to(e)
    want = torch.from_numpy(src).to(t)
    assert got.dtype is e and str(got.dtype) == f"ember.{name}"
    # the same bits, except that a NaN may be another of the format's NaN encodings
    finite = ~np.isnan(want.float().numpy())
    np.testing.assert_array_equal(got.view(ember.uint8).numpy()[finite],
                                  want.view(torch.uint8).numpy()[finite])
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
    # from float64 and bfloat16 too, and copy_ into a float8 tensor casts the same way
    np.testing.assert_array_equal(ember.from_numpy(src).double().to(e).float().numpy(),
                                  torch.from_numpy(src).double().to(t).float().numpy())
    dst = ember.zeros(len(_VALUES), dtype=e)
    dst.copy_(ember.from_numpy(src))
    np.testing.assert_array_equal(dst.float().numpy(), want.float().numpy())
    assert got.is_floating_point() and e.is_floating_point and e.itemsize == 1
    assert e.is_signed == t.is_signed


@pytest.mark.parametrize("name", _F8)
def test_float8_finfo_matches_torch(name):
    a, b = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(a, field) == getattr(b, field), field
    assert a.dtype == b.dtype == name


def test_float8_storage_operations_and_promotion():
    x = ember.tensor([0.5, -2.0, 3.0, 7.0]).to(ember.float8_e4m3fn)
    y = torch.tensor([0.5, -2.0, 3.0, 7.0]).to(torch.float8_e4m3fn)
    for f in (lambda m, v: m.cat([v, v]), lambda m, v: v[1:3], lambda m, v: v.clone(),
              lambda m, v: v.reshape(2, 2).t().contiguous(),
              lambda m, v: m.zeros(3, dtype=v.dtype), lambda m, v: v.to(m.bfloat16).float()):
        np.testing.assert_array_equal(f(ember, x).float().numpy(), f(torch, y).float().numpy())
    assert ember.promote_types(ember.float8_e5m2, ember.float8_e5m2) is ember.float8_e5m2
    with pytest.raises(RuntimeError, match="Promotion for Float8 Types is not supported"):
        ember.promote_types(ember.float8_e4m3fn, ember.float32)
    with pytest.raises(RuntimeError, match="Promotion for Float8 Types is not supported"):
        torch.promote_types(torch.float8_e4m3fn, torch.float32)
    w = ember.tensor([1.5, -2.0], requires_grad=True)
    w.to(ember.float8_e5m2).float().sum().backward()  # the gradient flows back in float32
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])


def test_dtensor_placements_are_records_like_torchs():
    from torch.distributed.tensor import Partial as TP
    from torch.distributed.tensor import Replicate as TR
    from torch.distributed.tensor import Shard as TS
    from torch.distributed.tensor.placement_types import _StridedShard as TSS

    from ember.distributed.tensor import Partial, Placement, Replicate, Shard
    from ember.distributed.tensor.placement_types import _StridedShard
    assert not isinstance(_StridedShard(0), Shard) and not isinstance(TSS(0), TS)
    for e, t in ((Shard(1), TS(1)), (Replicate(), TR()), (Partial(), TP()),
                 (Partial("max"), TP("max")), (_StridedShard(0, split_factor=2),
                                               TSS(0, split_factor=2))):
        assert (repr(e), str(e)) == (repr(t), str(t))
        assert isinstance(e, Placement)
        assert (e.is_shard(), e.is_replicate(), e.is_partial()) == \
            (t.is_shard(), t.is_replicate(), t.is_partial())
    assert Shard(1) == Shard(1) and Shard(1) != Shard(0) and Shard(0) != Replicate()
    assert hash(Shard(2)) == hash(Shard(2)) and len({Replicate(), Replicate()}) == 1
    assert Shard(0).is_shard(0) and not Shard(0).is_shard(1) and Partial().is_partial("sum")
    for size, chunks in ((10, 3), (7, 4), (3, 5), (0, 2), (8, 2)):
        for rank in range(chunks):
            assert Shard.local_shard_size_and_offset(size, chunks, rank) == \
                TS.local_shard_size_and_offset(size, chunks, rank), (size, chunks, rank)


def test_dtensor_names_raise_when_used():
    from ember.distributed.device_mesh import DeviceMesh, init_device_mesh
    from ember.distributed.tensor import DTensor, Shard, distribute_tensor
    from ember.distributed.tensor._utils import compute_local_shape_and_global_offset
    assert not isinstance(ember.ones(2), DTensor) and issubclass(DTensor, ember.Tensor)
    for call in (lambda: distribute_tensor(ember.ones(2), None, [Shard(0)]),
                 lambda: DTensor.from_local(ember.ones(2)), lambda: DTensor(),
                 lambda: DeviceMesh("cpu", [0]), lambda: init_device_mesh("cpu", (1,)),
                 lambda: compute_local_shape_and_global_offset((2,), None, [Shard(0)])):
        with pytest.raises(NotImplementedError, match="ember has no device meshes or DTensor"):
            call()


def test_fsdp_names():
    from torch.distributed import fsdp as tf

    from ember.distributed._composable.fsdp import fully_shard as old_path
    from ember.distributed.fsdp import (
        CPUOffloadPolicy,
        FSDPModule,
        FullyShardedDataParallel,
        MixedPrecisionPolicy,
        OffloadPolicy,
        fully_shard,
    )
    for e, t in ((MixedPrecisionPolicy, tf.MixedPrecisionPolicy),
                 (CPUOffloadPolicy, tf.CPUOffloadPolicy)):
        assert [(f.name, f.default) for f in dataclasses.fields(e)] == \
            [(f.name, f.default) for f in dataclasses.fields(t)]
    assert issubclass(CPUOffloadPolicy, OffloadPolicy) and old_path is fully_shard
    assert MixedPrecisionPolicy(param_dtype=ember.bfloat16).param_dtype is ember.bfloat16
    lin = ember.nn.Linear(2, 2)
    assert not isinstance(lin, (FullyShardedDataParallel, FSDPModule))
    for call in (lambda: fully_shard(lin), lambda: FullyShardedDataParallel(lin)):
        with pytest.raises(NotImplementedError, match="ember has no fully sharded data"):
            call()


def test_other_import_time_names_raise_when_used():
    from torch.nn.attention import flex_attention as tfa

    from ember.distributed.checkpoint.hf_storage import (
        HuggingFaceStorageReader,
        HuggingFaceStorageWriter,
    )
    from ember.nn.attention import flex_attention as fa
    assert fa._DEFAULT_SPARSE_BLOCK_SIZE == tfa._DEFAULT_SPARSE_BLOCK_SIZE
    assert fa.AuxRequest(lse=True) == tfa.AuxRequest(lse=True) == (True, False)
    assert fa.AuxOutput()._fields == tfa.AuxOutput()._fields
    for cls in (HuggingFaceStorageReader, HuggingFaceStorageWriter):
        with pytest.raises(NotImplementedError, match="no distributed checkpoints"):
            cls("path")


def test_cuda_classes_exist_and_refuse_like_a_cpu_build():
    for name in ("CUDAGraph", "Stream", "Event"):
        assert isinstance(getattr(ember.cuda, name), type)
        with pytest.raises(RuntimeError, match=f"ember.cuda.{name}: ember has no CUDA backend"):
            getattr(ember.cuda, name)()
    with ember.cuda.StreamContext(None) as s, ember.cuda.stream(None):
        assert s is None
    with torch.cuda.StreamContext(None), torch.cuda.stream(None):
        pass
    assert ember.cuda.is_current_stream_capturing() is False
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        ember.cuda.default_stream()
    with pytest.raises(RuntimeError, match="graphs cannot be captured"):
        ember.cuda.graph(None)


# custom ops' schemas come from annotations, evaluated in the defining module's globals
def _scaled_ember(x: ember.Tensor, k: float) -> ember.Tensor:
    return x * 2 * k


def _scaled_torch(x: torch.Tensor, k: float) -> torch.Tensor:
    return x * 2 * k


def _register(lib, name):
    fn = _scaled_ember if lib is ember else _scaled_torch
    return lib.library.custom_op(f"compat_{lib.__name__}::{name}", mutates_args=())(fn)


def test_custom_op_calls_gradients_and_errors_as_torch():
    results = []
    for lib in (ember, torch):
        op = _register(lib, "scaled")
        assert repr(op) == f"<CustomOpDef(compat_{lib.__name__}::scaled)>"
        x = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        y = op(x, 1.5)
        with pytest.raises(RuntimeError, match="no autograd formula was registered"):
            y.sum().backward()

        def setup(ctx, inputs, output):
            ctx.k = inputs[1]

        def backward(ctx, grad):
            return grad * 2 * ctx.k, None

        lib.library.register_autograd(f"compat_{lib.__name__}::scaled", backward,
                                      setup_context=setup)
        ns = getattr(lib.ops, f"compat_{lib.__name__}")
        y = ns.scaled(x, k=3.0)
        y.sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), ns.scaled.default(x, 0.5).detach()
                        .numpy()))
        with pytest.raises(ValueError, match="Parameter x must have a type annotation"):
            lib.library.custom_op(f"compat_{lib.__name__}::bare", lambda x: x, mutates_args=())
    for a, b in zip(results[0], results[1], strict=True):
        np.testing.assert_array_equal(a, b)
    op = ember.library.custom_op("compat_ember::plain", lambda x: x + 1, mutates_args=(),
                                 schema="(Tensor x) -> Tensor")
    assert ember.library.register_fake(op)(lambda x: ember.empty_like(x)) is op._fake
    with pytest.raises(AttributeError, match="has no attribute 'compat_nothing'"):
        ember.ops.compat_nothing


def test_contains_compares_elements_as_torch():
    for lib in (ember, torch):
        t = lib.tensor([[1, 2], [3, 4]])
        got = [2 in t, 5 in t, lib.tensor(3) in t, lib.tensor([1, 2]) in t, 2.0 in t,
               True in lib.tensor([0, 1]), 1 in lib.tensor([])]
        assert got == [True, False, True, True, True, True, False]
        with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
            "a" in t  # noqa: B015
        with pytest.raises(RuntimeError, match="must match the size"):
            lib.tensor([1, 2, 3]) in t  # noqa: B015


def test_expand_that_only_adds_unit_dims_is_writable():
    for lib in (ember, torch):
        buf = lib.arange(6).expand((1, -1))  # BERT's position_ids buffer
        assert buf.is_contiguous() and buf.stride()[-1] == 1
        buf.copy_(lib.arange(6).expand((1, -1)) * 2)
        np.testing.assert_array_equal(buf.numpy(), [[0, 2, 4, 6, 8, 10]])
        with pytest.raises(RuntimeError):
            lib.arange(3).expand(2, 3).copy_(lib.ones(2, 3, dtype=lib.long))
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    x.expand(1, 1, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])



def _storage_reads(lib, path):
    """safetensors' loading path (safe_open(framework="pt")): a file storage, byte slices of it
    read as tensors of another dtype, as its Rust side does."""
    s = lib.UntypedStorage.from_file(path, shared=False, nbytes=40).untyped()
    part = s[4:12]
    t = lib.asarray(part, dtype=lib.uint8).view(dtype=lib.float32).reshape([2, 1])
    return s, part, t


def test_untyped_storage_from_file_slices_and_asarray_as_torch(tmp_path):
    path = str(tmp_path / "w.bin")
    np.arange(10, dtype=np.float32).tofile(path)
    (es, ep, et), (ts, tp, tt) = _storage_reads(ember, path), _storage_reads(torch, path)
    assert es.nbytes() == ts.nbytes() == 40 and len(es) == len(ts) and es.untyped() is es
    assert ep.nbytes() == tp.nbytes() == 8 and ep.data_ptr() - es.data_ptr() == 4
    np.testing.assert_array_equal(et.numpy(), tt.numpy())
    assert et.dtype == ember.float32 and tuple(et.shape) == tuple(tt.shape)
    assert [es[i] for i in (0, 7, -1)] == [ts[i] for i in (0, 7, -1)]
    assert es.tolist() == ts.tolist() and ember.is_storage(es)
    for sl in (slice(40, 50), slice(-100, 4), slice(None)):
        assert es[sl].nbytes() == ts[sl].nbytes()
    # no dtype: torch reads the bytes as int64; a partial last element is dropped
    for lib, s in ((ember, es), (torch, ts)):
        assert lib.asarray(s).dtype == lib.int64 and lib.asarray(s).shape == (5,)
        assert lib.asarray(s[0:6], dtype=lib.float32).shape == (1,)
    # a private mapping: writes reach the storage's tensors but not the file
    et[0, 0] = 7.0
    assert ember.asarray(es, dtype=ember.float32)[1].item() == 7.0
    assert np.fromfile(path, np.float32)[1] == 1.0
    # shared: writes reach the file
    sh = ember.UntypedStorage.from_file(path, shared=True, nbytes=40)
    ember.asarray(sh, dtype=ember.float32)[2] = -1.0
    del sh
    assert np.fromfile(path, np.float32)[2] == -1.0
    # a tensor's own storage slices as bytes too
    own = ember.arange(6.0).untyped_storage()
    assert ember.asarray(own[4:8], dtype=ember.float32).tolist() == [1.0]
    assert ember.UntypedStorage.from_file(path, shared=False, nbytes=0).nbytes() == 0
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="smaller than the required mapping size <80>"):
            lib.UntypedStorage.from_file(path, shared=False, nbytes=80)
        with pytest.raises(RuntimeError, match="only a step of 1 is supported"):
            lib.UntypedStorage.from_file(path, shared=False, nbytes=40)[::2]
        with pytest.raises(IndexError, match="index 40 out of range for storage of size 40"):
            lib.UntypedStorage.from_file(path, shared=False, nbytes=40)[40]


def test_utils_hooks_handle_as_accelerate_uses_it():
    # accelerate keeps its save/load-state hooks in a dict keyed by a handle's id
    for lib in (ember, torch):
        import importlib
        hooks = importlib.import_module(lib.__name__ + ".utils.hooks")
        store = collections.OrderedDict()  # torch's handle keeps a weak reference to it
        a, b = hooks.RemovableHandle(store), hooks.RemovableHandle(store)
        assert a.id != b.id
        store[a.id], store[b.id] = "first", "second"
        a.remove()
        assert list(store.values()) == ["second"]
        with b:
            pass
        assert store == {}
        f = hooks.unserializable_hook(lambda grad: grad)
        assert f.__torch_unserializable__ is True
    # a Module's hook handle is the same class
    h = ember.nn.Linear(2, 2).register_forward_hook(lambda *a: None)
    from ember.utils.hooks import RemovableHandle
    assert isinstance(h, RemovableHandle)


def test_join_names_accelerate_imports():
    from torch.distributed.algorithms.join import Join as TJoin

    from ember.distributed.algorithms.join import Join, Joinable, JoinHook
    for cls in (Join, TJoin):
        with pytest.raises(ValueError, match="requires at least one joinable"):
            cls([], enable=False)
    with Join([Joinable()], enable=False) as j:  # disabled: a no-op context
        assert j is not None
    with pytest.raises(NotImplementedError, match="Join: uneven inputs across ranks"):
        with Join([Joinable()], enable=True):
            pass
    assert JoinHook().post_hook(True) is None
    with pytest.raises(NotImplementedError, match="join_hook"):
        Joinable().join_hook()
    from ember.distributed.fsdp import FullyShardedDataParallel
    from ember.distributed.fsdp.fully_sharded_data_parallel import FullyShardedDataParallel as F
    assert F is FullyShardedDataParallel and not isinstance(ember.nn.Linear(1, 1), F)


def _mamba_combine(left, right):  # transformers' Mamba: (decay, input) pairs of a linear scan
    return left[0] * right[0], right[0] * left[1] + right[1]


@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_matches_torch(reverse):
    from torch._higher_order_ops.associative_scan import associative_scan as t_scan

    from ember._higher_order_ops.associative_scan import associative_scan as e_scan
    rng = np.random.default_rng(0)
    a, b = rng.random((2, 5, 3)), rng.random((2, 5, 3))
    got = e_scan(_mamba_combine, (ember.tensor(a), ember.tensor(b)), dim=1, reverse=reverse,
                 combine_mode="generic")
    want = t_scan(_mamba_combine, (torch.tensor(a), torch.tensor(b)), dim=1, reverse=reverse,
                  combine_mode="generic")
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
    # one tensor, a negative dim: a cumulative sum
    x = rng.random((3, 4))
    np.testing.assert_allclose(
        e_scan(lambda p, q: p + q, ember.tensor(x), dim=-1, reverse=reverse,
               combine_mode="generic").numpy(),
        t_scan(lambda p, q: p + q, torch.tensor(x), dim=-1, reverse=reverse,
               combine_mode="generic").numpy(), rtol=1e-12)


def test_associative_scan_gradients_and_errors():
    from ember._higher_order_ops.associative_scan import associative_scan as scan
    x = ember.tensor(np.random.default_rng(1).random(4) + 0.5, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda t: scan(lambda p, q: p * q, t, dim=0, combine_mode="generic"), (x,))
    assert scan(lambda p, q: p + q, ember.zeros(2, 0), dim=1, combine_mode="generic").shape \
        == (2, 0)
    with pytest.raises(ValueError, match="'pointwise' needs every input tensor on CUDA"):
        scan(lambda p, q: p + q, ember.ones(3), dim=0)
    with pytest.raises(ValueError, match="must be 'pointwise' or 'generic', but got 'bad'"):
        scan(lambda p, q: p + q, ember.ones(3), dim=0, combine_mode="bad")
    with pytest.raises(ValueError, match=r"along dim 1; got shapes \[\(2, 5\), \(2, 4\)\]"):
        scan(_mamba_combine, (ember.ones(2, 5), ember.ones(2, 4)), dim=1, combine_mode="generic")
    with pytest.raises(IndexError, match="dim 2 is out of range for tensors of 2 dimensions"):
        scan(lambda p, q: p + q, ember.ones(2, 5), dim=2, combine_mode="generic")

def _sdpa(lib, q, k, v, mask):
    return lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_sdpa_query_that_attends_to_nothing_gives_zeros(kind):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 2, 3, 4)) for _ in range(3))
    allowed = np.array([[False, False, False], [True, False, False], [True, True, True]])
    weight = rng.standard_normal((2, 2, 3, 4))
    outs = []
    for lib in (ember, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        mask = lib.tensor(allowed)
        if kind == "float":
            mask = lib.zeros(3, 3, dtype=lib.float64).masked_fill(~mask, float("-inf"))
        out = _sdpa(lib, *ts, mask)
        (out * lib.tensor(weight)).sum().backward()
        outs.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(outs[0], outs[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert not np.isnan(outs[0][0]).any() and (outs[0][0][:, :, 0] == 0).all()
    ts = [ember.tensor(a, requires_grad=True) for a in (q, k, v)]
    assert ember.autograd.gradcheck(lambda *a: _sdpa(ember, *a, ember.tensor(allowed)), ts)


def test_pytree_mapping_keys_as_torch():
    from torch.utils import _pytree as tp

    from ember.utils import _pytree as ep
    d = {"a": 1, "b": [2]}
    got, want = ep._dict_flatten_with_keys(d), tp._dict_flatten_with_keys(d)
    assert [(repr(k), v) for k, v in got[0]] == [(repr(k), v) for k, v in want[0]]
    assert got[1] == want[1]
    for e, t in ((ep.MappingKey("a"), tp.MappingKey("a")), (ep.SequenceKey(1), tp.SequenceKey(1)),
                 (ep.GetAttrKey("w"), tp.GetAttrKey("w"))):
        assert (repr(e), str(e)) == (repr(t), str(t))
    assert ep.MappingKey("a") == ep.MappingKey("a") and hash(ep.SequenceKey(0)) is not None


def _flex(lib, q, k, v, **kw):
    import importlib
    fa = importlib.import_module(lib.__name__ + ".nn.attention.flex_attention")
    bias = lib.tensor([0.5, -1.0, 0.0, 2.0], dtype=lib.float64)

    def score_mod(score, b, h, q_idx, kv_idx):  # relative position and a per-head bias
        return score + 0.1 * (q_idx - kv_idx) + bias[h]

    def mask_mod(b, h, q_idx, kv_idx):  # causal, and query 1 may attend to nothing
        return (kv_idx <= q_idx) & (q_idx != 1)

    block_mask = fa.create_block_mask(mask_mod, None, None, q.shape[2], k.shape[2],
                                      device="cpu")
    out = fa.flex_attention(q, k, v, score_mod=score_mod, block_mask=block_mask,
                            enable_gqa=True, **kw)
    return out, fa.create_mask(mask_mod, 1, 1, q.shape[2], k.shape[2])


def test_flex_attention_matches_torch_eager():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in ((2, 4, 6, 8), (2, 2, 5, 8), (2, 2, 5, 3))]
    got, want = ([lib.tensor(a) for a in arrays] for lib in (ember, torch))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "called without torch.compile()"
        (t_out, t_lse), t_mask = _flex(torch, *want, return_lse=True)
        (t_out2, t_aux), _ = _flex(torch, *want, return_aux=torch.nn.attention.flex_attention
                                   .AuxRequest(lse=True))
    (e_out, e_lse), e_mask = _flex(ember, *got, return_lse=True)
    (e_out2, e_aux), _ = _flex(ember, *got, return_aux=ember.nn.attention.flex_attention
                               .AuxRequest(lse=True))
    np.testing.assert_allclose(e_out.numpy(), t_out.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(e_lse.numpy(), t_lse.numpy(), rtol=1e-12)  # -inf where masked
    np.testing.assert_allclose(e_aux.lse.numpy(), t_aux.lse.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(e_mask.numpy(), t_mask.numpy())
    assert (e_out.numpy()[:, :, 1] == 0).all() and np.isneginf(e_lse.numpy()[:, :, 1]).all()
    with pytest.raises(ValueError, match="enable_gqa=True"):
        ember.nn.attention.flex_attention.flex_attention(got[0], got[1], got[2])


def test_flex_attention_gradients():
    # torch's flex_attention has no backward on CPU: gradcheck ember's in float64
    rng = np.random.default_rng(2)
    ts = [ember.tensor(rng.standard_normal(s), requires_grad=True)
          for s in ((1, 4, 3, 2), (1, 2, 3, 2), (1, 2, 3, 2))]
    assert ember.autograd.gradcheck(lambda q, k, v: _flex(ember, q, k, v)[0], ts)
