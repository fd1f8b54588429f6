"""The meta device (ember/_meta.py, NOTE [Meta tensors]): shapes, dtypes and strides of
factory and op results against torch's meta tensors, the idioms programs use it for, errors."""
import copy
import gc
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import function as _function

torch = pytest.importorskip("torch", reason="torch is the oracle for meta shapes and dtypes")


def _same_meta(ours, ref):
    assert ours.is_meta and ref.is_meta
    assert str(ours.device) == "meta"
    assert tuple(ours.shape) == tuple(ref.shape)
    assert str(ours.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    if ref.is_contiguous():  # views of meta tensors report contiguous strides (DEVIATIONS)
        assert ours.stride() == ref.stride()


FACTORIES = {
    "empty": lambda lib: lib.empty(2, 3, device="meta"),
    "zeros": lambda lib: lib.zeros((4,), dtype=lib.int32, device="meta"),
    "ones": lambda lib: lib.ones(2, 1, 5, device="meta", requires_grad=True),
    "full": lambda lib: lib.full((3, 2), 7, device="meta"),
    "rand": lambda lib: lib.rand(3, device="meta"),
    "randn": lambda lib: lib.randn(2, 2, dtype=lib.float64, device="meta"),
    "randint": lambda lib: lib.randint(0, 5, (6,), device="meta"),
    "arange": lambda lib: lib.arange(10, device="meta"),
    "eye": lambda lib: lib.eye(3, device="meta"),
    "zeros_like": lambda lib: lib.zeros_like(lib.empty(2, 5, device="meta")),
    "empty_like": lambda lib: lib.empty_like(lib.ones(3, dtype=lib.float16), device="meta"),
    "new_zeros": lambda lib: lib.empty(2, device="meta").new_zeros(4, 4),
    "scalar": lambda lib: lib.empty((), device="meta"),
    "to": lambda lib: lib.ones(2, 3).to("meta"),
    "to_dtype": lambda lib: lib.ones(2, 3).to(device="meta", dtype=lib.float64),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factory_outputs_match_torch(name):
    ours, ref = FACTORIES[name](ember), FACTORIES[name](torch)
    _same_meta(ours, ref)
    assert ours.requires_grad == ref.requires_grad
    assert repr(ours).replace("ember.", "torch.") == repr(ref)


def _inputs(lib):
    g = torch.Generator().manual_seed(0)
    return (lib.empty(4, 6, device="meta"), lib.empty(6, 3, device="meta"),
            lib.empty(2, 4, 6, device="meta"), lib.empty(6, device="meta"),
            lib.empty(2, 4, dtype=lib.int64, device="meta"), g)


OPS = {
    "add": lambda lib, a, b, c, v, i: a + v,
    "mul_scalar": lambda lib, a, b, c, v, i: a * 2.5,
    "promote": lambda lib, a, b, c, v, i: i + 1.5,
    "cpu_0d": lambda lib, a, b, c, v, i: a * lib.tensor(3.0),
    "matmul": lambda lib, a, b, c, v, i: a @ b,
    "bmm": lambda lib, a, b, c, v, i: c @ b,
    "linear": lambda lib, a, b, c, v, i: F.linear(c, b.t()) if lib is ember else
    torch.nn.functional.linear(c, b.t()),
    "view": lambda lib, a, b, c, v, i: c.view(8, 6),
    "reshape": lambda lib, a, b, c, v, i: c.reshape(-1),
    "transpose": lambda lib, a, b, c, v, i: c.transpose(1, 2).contiguous(),
    "cat": lambda lib, a, b, c, v, i: lib.cat([a, a], dim=-1),
    "stack": lambda lib, a, b, c, v, i: lib.stack([a, a]),
    "sum": lambda lib, a, b, c, v, i: c.sum(-1),
    "mean_keepdim": lambda lib, a, b, c, v, i: c.mean(dim=1, keepdim=True),
    "max": lambda lib, a, b, c, v, i: a.max(dim=0).values,
    "argmax": lambda lib, a, b, c, v, i: a.argmax(-1),
    "softmax": lambda lib, a, b, c, v, i: lib.softmax(c, dim=-1),
    "gelu": lambda lib, a, b, c, v, i: (F if lib is ember else torch.nn.functional).gelu(a),
    "layer_norm": lambda lib, a, b, c, v, i: (F if lib is ember else torch.nn.functional)
    .layer_norm(c, (6,)),
    "embedding": lambda lib, a, b, c, v, i: (F if lib is ember else torch.nn.functional)
    .embedding(i, a),
    "sdpa": lambda lib, a, b, c, v, i: (F if lib is ember else torch.nn.functional)
    .scaled_dot_product_attention(c, c, c, is_causal=True),
    "cross_entropy": lambda lib, a, b, c, v, i: (F if lib is ember else torch.nn.functional)
    .cross_entropy(a, i[0]),
    "split": lambda lib, a, b, c, v, i: a.split(2, dim=1)[1],
    "index": lambda lib, a, b, c, v, i: c[:, 1:3, None],
    "where": lambda lib, a, b, c, v, i: lib.where(a > 0, a, v),
    "rsqrt_pow": lambda lib, a, b, c, v, i: a.pow(2).mean(-1, keepdim=True).rsqrt(),
    # (no probabilities to draw from: the result's shape and dtype; ember raised "invalid
    # multinomial distribution" reading the stand-in's zeros)
    "multinomial": lambda lib, a, b, c, v, i: lib.multinomial(a.softmax(-1), 3),
    "multinomial_replacement": lambda lib, a, b, c, v, i: v.exp().multinomial(
        9, replacement=True),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_outputs_match_torch(name):
    a, b, c, v, i, _ = _inputs(ember)
    ta, tb, tc, tv, ti, _ = _inputs(torch)
    ours, ref = OPS[name](ember, a, b, c, v, i), OPS[name](torch, ta, tb, tc, tv, ti)
    _same_meta(ours, ref)


def test_in_place_ops_and_inits_keep_a_meta_tensor():
    x = ember.empty(3, 4, device="meta")
    assert x.add_(1) is x and x.zero_() is x and x.is_meta
    for init in (ember.nn.init.normal_, ember.nn.init.kaiming_uniform_, ember.nn.init.zeros_,
                 ember.nn.init.trunc_normal_, ember.nn.init.orthogonal_):
        assert init(x) is x and x.is_meta


def test_errors_name_what_has_no_data():
    x = ember.empty(2, 3, device="meta")
    with pytest.raises(RuntimeError, match="Tensor on device cpu is not on the expected device "
                                           r"meta.*shape \(2, 3\)"):
        x + ember.ones(2, 3)
    with pytest.raises(RuntimeError, match="item.*meta"):
        ember.empty(1, device="meta").item()
    with pytest.raises(TypeError, match="meta device type tensor to numpy"):
        x.numpy()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        x.tolist()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        x.to("cpu")
    with pytest.raises(RuntimeError, match="bool.*meta"):
        bool(ember.empty((), device="meta"))
    with pytest.raises(RuntimeError, match="backward.*meta"):
        ember.empty(2, device="meta", requires_grad=True).sum().backward()
    with pytest.raises(RuntimeError, match="device 'xpu' is not available"):
        ember.zeros(2, device="xpu")


def test_device_context_and_default_device():
    with ember.device("meta"):
        m = ember.nn.Linear(4, 3)
        x = ember.randn(2, 4)
    assert m.weight.is_meta and m.bias.is_meta and x.is_meta
    assert isinstance(m.weight, ember.nn.Parameter) and m.weight.requires_grad
    assert not ember.zeros(1).is_meta
    ember.set_default_device("meta")
    try:
        assert ember.get_default_device() == ember.device("meta") and ember.ones(2).is_meta
    finally:
        ember.set_default_device("cpu")
    assert not ember.ones(2).is_meta


class _Block(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = ember.nn.Embedding(11, 8)
        self.norm = ember.nn.LayerNorm(8)
        self.fc = ember.nn.Linear(8, 11)
        self.register_buffer("pos", ember.arange(5).float())

    def forward(self, idx):
        h = self.norm(self.emb(idx)) + self.pos[: idx.shape[1], None]
        return F.cross_entropy(self.fc(F.gelu(h)).view(-1, 11), idx.view(-1))


def test_build_on_meta_then_to_empty_init_and_train_one_step():
    with ember.device("meta"):
        model = _Block()
    assert all(t.is_meta for t in model.state_dict().values())
    assert model(ember.zeros(2, 5, dtype=ember.int64, device="meta")).is_meta
    model.to_empty(device="cpu")
    ember.manual_seed(0)
    for p in model.parameters():
        ember.nn.init.normal_(p, std=0.1)
    model.pos.copy_(ember.arange(5).float())
    assert not any(t.is_meta for t in model.state_dict().values())
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    idx = ember.randint(0, 11, (2, 5))
    before = model(idx)
    before.backward()
    opt.step()
    assert model(idx).item() < before.item()


def test_deepcopy_state_dict_and_assign_load():
    model = _Block()
    meta = copy.deepcopy(model).to("meta")
    assert all(p.is_meta for p in meta.parameters()) and not model.fc.weight.is_meta
    clone = copy.deepcopy(meta)
    assert clone.fc.weight.is_meta and clone.fc.weight is not meta.fc.weight
    with pytest.warns(UserWarning, match="no-op.*assign=True"):
        clone.load_state_dict(model.state_dict())
    assert clone.fc.weight.is_meta
    clone.load_state_dict(model.state_dict(), assign=True)
    assert isinstance(clone.fc.weight, ember.nn.Parameter) and not clone.fc.weight.is_meta
    idx = ember.randint(0, 11, (2, 5))
    np.testing.assert_allclose(clone(idx).item(), model(idx).item(), rtol=1e-6)


def test_ensembling_with_functional_call_and_vmap_over_stacked_params():
    # the torch.func model-ensembling tutorial: a meta copy is the stateless base model
    from ember.func import functional_call, stack_module_state, vmap
    ember.manual_seed(0)
    models = [ember.nn.Sequential(ember.nn.Linear(4, 6), ember.nn.ReLU(), ember.nn.Linear(6, 2))
              for _ in range(3)]
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def f(p, b, x):
        return functional_call(base, (p, b), (x,))

    x = ember.randn(5, 4)
    out = vmap(f, in_dims=(0, 0, None))(params, buffers, x)
    assert not out.is_meta and tuple(out.shape) == (3, 5, 2)
    for k, m in enumerate(models):
        np.testing.assert_allclose(out[k].detach().numpy(), m(x).detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_the_op_hook_leaves_with_the_last_meta_tensor():
    x = ember.empty(2, device="meta")
    assert _function._batch_hook[0] is not None
    del x
    gc.collect()
    assert _function._batch_hook[0] is None


def test_conv_net_forward_in_training_mode_on_meta():
    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Dropout(0.1), nn.Flatten()).to("meta")
    ours = build(ember)(ember.randn(2, 3, 8, 8, device="meta"))
    _same_meta(ours, build(torch)(torch.randn(2, 3, 8, 8, device="meta")))


@pytest.mark.parametrize("op", [
    lambda x: ember.nonzero(x), lambda x: x.nonzero(), lambda x: ember.unique(x),
    lambda x: x[x > 0], lambda x: ember.masked_select(x, x > 0),
    lambda x: ember.bincount(x.long().flatten()),
])
def test_ops_whose_size_depends_on_the_data_refuse(op):
    # the stand-in's values would make a size up: torch raises for these too
    with pytest.raises(RuntimeError, match="depends on the data.*meta"):
        op(ember.randn(2, 3, device="meta"))


def test_pickle_keeps_meta_and_save_refuses():
    import io
    import pickle
    x = ember.empty(2, 3, dtype=ember.float16, device="meta", requires_grad=True)
    y = pickle.loads(pickle.dumps(x))
    assert y.is_meta and tuple(y.shape) == (2, 3) and y.dtype == ember.float16 and y.requires_grad
    with pytest.raises(RuntimeError, match=r"save: cannot save a meta tensor of shape \(2, 3\)"):
        ember.save({"w": x}, io.BytesIO())


@pytest.mark.parametrize("build", [
    lambda lib: lib.nn.Linear(2, 3, device="meta").weight,
    lambda lib: lib.nn.Conv2d(1, 2, 3, device="meta").weight,
    lambda lib: lib.nn.BatchNorm1d(3, device="meta").running_var,
    lambda lib: lib.nn.Embedding(4, 3, device="meta").weight,
    lambda lib: lib.nn.LSTM(2, 3, device="meta").weight_hh_l0,
    lambda lib: lib.nn.MultiheadAttention(4, 2, device="meta").in_proj_weight,
])
def test_layers_built_with_device_meta(build):
    _same_meta(build(ember), build(torch))


def test_legacy_constructor_refuses_meta_as_torch():
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu but "
                                               "device type: meta was passed"):
            lib.Tensor(2, 3, device="meta")


_NOT_OPS = {"manual_seed", "seed", "set_default_device", "set_default_dtype", "load", "save",
            "compile", "set_printoptions", "set_num_threads", "set_rng_state",
            "use_deterministic_algorithms", "set_grad_enabled", "set_num_interop_threads"}


def test_no_public_function_turns_a_meta_tensor_into_a_cpu_one():
    # every ember.<fn>(meta tensor) that succeeds must return meta tensors: a CPU result would
    # hold values made up from the stand-in (NOTE [Meta tensors])
    leaked = []
    for name in sorted(n for n in dir(ember) if not n.startswith("_") and n not in _NOT_OPS):
        fn = getattr(ember, name)
        if not callable(fn) or isinstance(fn, type) and not issubclass(fn, ember.Tensor):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = fn(ember.rand(3, 4, device="meta"))
        except Exception:  # refusing (any error) is allowed; a CPU result is not
            continue
        if _cpu_tensor_in(res):
            leaked.append(name)
    assert not leaked, f"CPU results from meta inputs: {leaked}"



def _cpu_tensor_in(res):
    """Whether a call's result (a tensor, or a tuple/list of results) holds a non-meta tensor."""
    return any(isinstance(r, ember.Tensor) and not r.is_meta
               for r in (res if isinstance(res, (tuple, list)) else (res,)))


def test_no_tensor_method_turns_a_meta_tensor_into_a_cpu_one():
    # the same for x.<method>() without arguments (the ones that read data are refused)
    leaked = []
    for name in sorted(n for n in dir(ember.Tensor) if not n.startswith("__")):
        x = ember.rand(3, 4, device="meta")
        try:
            method = getattr(x, name)
            if not callable(method):
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = method()
        except Exception:  # refusing is allowed; a CPU result is not
            continue
        if _cpu_tensor_in(res):
            leaked.append(name)
    assert not leaked, f"CPU results from meta inputs: {leaked}"


def test_random_functions_take_their_first_argument_by_keyword():
    # d2l's train_ch11 calls torch.normal(mean=0.0, std=0.01, size=(n, 1), requires_grad=True):
    # the meta wrapper around the random functions must pass keyword forms through
    ours = ember.normal(mean=0.0, std=0.01, size=(3, 1), requires_grad=True)
    ref = torch.normal(mean=0.0, std=0.01, size=(3, 1), requires_grad=True)
    assert tuple(ours.shape) == tuple(ref.shape) and ours.requires_grad and not ours.is_meta
    assert ember.bernoulli(input=ember.full((4,), 1.0)).tolist() == [1.0] * 4
    assert ember.poisson(input=ember.zeros(3)).tolist() == torch.poisson(
        input=torch.zeros(3)).tolist()
    _same_meta(ember.normal(mean=ember.zeros(2, 3, device="meta"), std=1.0),
               torch.normal(mean=torch.zeros(2, 3, device="meta"), std=1.0))
    _same_meta(ember.bernoulli(input=ember.zeros(5, device="meta")),
               torch.bernoulli(input=torch.zeros(5, device="meta")))
