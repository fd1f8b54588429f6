"""nn.Module, Parameter, Buffer and the containers: registration, traversal, state_dict,
conversion, hooks, repr."""
from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.fc2 = nn.Linear(4, 2)
        self.register_buffer("steps", ember.zeros(1))
        self.register_buffer("scratch", ember.ones(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.bn(self.fc1(x)).relu())


# ----------------------------------------------------------------------------- Parameter
def test_parameter_shares_storage_and_requires_grad():
    t = ember.zeros(3)
    p = nn.Parameter(t)
    assert p.requires_grad and isinstance(p, ember.Tensor)
    t.add_(1)
    np.testing.assert_array_equal(p.detach().numpy(), [1, 1, 1])
    assert p._version == t._version
    assert not nn.Parameter(ember.zeros(2), requires_grad=False).requires_grad
    assert type(p * 2) is ember.Tensor and type(p.detach()) is ember.Tensor


def test_parameter_repr_and_copies():
    p = nn.Parameter(ember.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.requires_grad
    q.data.add_(1)
    np.testing.assert_array_equal(p.detach().numpy(), [1, 2])
    r = pickle.loads(pickle.dumps(p))
    assert isinstance(r, nn.Parameter) and r.requires_grad
    np.testing.assert_array_equal(r.detach().numpy(), [1, 2])


def test_parameter_rejects_int_requires_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(ember.tensor([1, 2]))
    assert not nn.Parameter(ember.tensor([1, 2]), requires_grad=False).requires_grad


def test_buffer_assignment_registers_with_persistence():
    m = nn.Module()
    m.a = nn.Buffer(ember.ones(2))
    m.b = nn.Buffer(ember.ones(2), persistent=False)
    assert isinstance(m.a, ember.Tensor) and isinstance(m.a, nn.Buffer)
    assert not isinstance(ember.ones(2), nn.Buffer)
    assert [n for n, _ in m.named_buffers()] == ["a", "b"]
    assert list(m.state_dict()) == ["a"]


# ----------------------------------------------------------------------------- registration
def test_registration_by_attribute_and_methods():
    m = Net()
    assert [n for n, _ in m.named_parameters()] == [
        "fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in m.named_buffers()] == [
        "steps", "scratch", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert [n for n, _ in m.named_children()] == ["fc1", "bn", "fc2"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "bn", "fc2"]
    assert [n for n, _ in m.named_parameters(prefix="net", recurse=False)] == []
    m.extra = nn.Parameter(ember.zeros(1))
    m.add_module("head", nn.ReLU())
    m.register_module("tail", nn.Identity())
    m.register_parameter("nothing", None)
    assert "extra" in dict(m.named_parameters()) and m.nothing is None
    assert [n for n, _ in m.named_children()][-2:] == ["head", "tail"]
    assert "fc1" in dir(m) and "extra" in dir(m)


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(TypeError, match="cannot assign 'ember.FloatTensor' object to parameter"):
        m.register_parameter("w", ember.zeros(1))
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("a.b", ember.zeros(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    m.w = nn.Parameter(ember.zeros(1))
    with pytest.raises(TypeError, match="as parameter 'w'"):
        m.w = ember.zeros(1)
    m.sub = nn.ReLU()
    with pytest.raises(TypeError, match="as child module 'sub'"):
        m.sub = 3
    m.attr = 1
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("attr", ember.zeros(1))
    with pytest.raises(ValueError, match="non-leaf"):
        m.register_parameter("v", _nonleaf_parameter())
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'missing'"):
        m.missing

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ember.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def _nonleaf_parameter():
    p = nn.Parameter(ember.zeros(1))
    q = nn.Parameter(ember.zeros(1))
    q._grad_fn = (p * 2).grad_fn  # a parameter carrying history, as torch forbids
    return q


def test_reassignment_moves_between_registries_and_delattr():
    m = nn.Module()
    m.x = nn.Parameter(ember.zeros(1))
    m.x = None
    assert m.x is None and "x" in m._parameters
    m.register_buffer("b", ember.zeros(1))
    m.b = ember.ones(1)
    assert m._buffers["b"].item() == 1
    del m.b
    assert "b" not in m._buffers
    m.c = nn.Linear(1, 1)
    del m.c
    assert "c" not in m._modules
    with pytest.raises(AttributeError):
        m.c


def test_shared_parameters_listed_once():
    shared = nn.Linear(2, 2)
    net = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(net.parameters())) == 2
    assert len(list(net.named_parameters(remove_duplicate=False))) == 4
    assert len(list(net.modules())) == 3
    net.tie = shared.weight
    assert len(list(net.parameters())) == 2


def test_get_submodule_and_get_parameter():
    outer = nn.Sequential(OrderedDict(body=Net()))
    assert outer.get_submodule("body.fc1") is outer.body.fc1
    assert outer.get_submodule("") is outer
    assert outer.get_parameter("body.fc2.bias") is outer.body.fc2.bias
    assert outer.get_buffer("body.bn.running_var") is outer.body.bn.running_var
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        outer.get_submodule("body.nope")
    with pytest.raises(AttributeError, match="is not an nn.Parameter"):
        outer.get_parameter("body.bn.running_mean")


# ----------------------------------------------------------------------------- modes and grads
def test_train_eval_propagate():
    m = Net()
    assert m.training and m.bn.training
    assert m.eval() is m
    assert not m.training and not m.bn.training and not m.fc1.training
    m.train()
    assert m.bn.training
    with pytest.raises(ValueError, match="boolean"):
        m.train("no")


def test_zero_grad_and_requires_grad_():
    m = Net()
    m(ember.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_apply_visits_children_first():
    seen = []
    Net().apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Linear", "Net"]


def test_to_double_keeps_parameter_identity_and_version():
    m = Net()
    w = m.fc1.weight
    version = w._version
    m.fc1.weight.grad = ember.ones(4, 3)
    assert m.double() is m
    assert m.fc1.weight is w and w.dtype == ember.float64 and w._version == version
    assert w.grad.dtype == ember.float64
    assert m.bn.num_batches_tracked.dtype == ember.int64  # integer buffers keep their dtype
    m.to(ember.float32)
    assert w.dtype == ember.float32
    m.half()
    assert w.dtype == ember.float16
    m.to(ember.zeros(1, dtype=ember.float64))
    assert w.dtype == ember.float64
    with pytest.raises(TypeError, match="floating point"):
        m.to(ember.int32)
    with pytest.raises(RuntimeError, match="CUDA"):
        m.to("cuda")
    with pytest.raises(RuntimeError, match="CUDA"):
        m.cuda()
    assert m.to("cpu") is m and m.cpu() is m


def test_share_memory_returns_module():
    m = nn.Linear(2, 2)
    assert m.share_memory() is m


# ----------------------------------------------------------------------------- state dict
def test_state_dict_keys_values_and_prefix():
    m = Net()
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["steps", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias",
                        "bn.running_mean", "bn.running_var", "bn.num_batches_tracked",
                        "fc2.weight", "fc2.bias"]
    assert not sd["fc1.weight"].requires_grad and type(sd["fc1.weight"]) is ember.Tensor
    sd["fc1.bias"].zero_()  # detached values share memory with the module
    assert float(m.fc1.bias.abs().sum()) == 0
    assert m.state_dict(keep_vars=True)["fc1.weight"] is m.fc1.weight
    assert list(m.fc1.state_dict(prefix="x.")) == ["x.weight", "x.bias"]
    assert sd._metadata["bn"]["version"] == 2


def test_state_dict_round_trip_gives_identical_outputs(rng):
    a, b = Net(), Net()
    x = ember.tensor(rng.standard_normal((6, 3)).astype(np.float32))
    a(x)  # move the running statistics away from their initial values
    a.eval(), b.eval()
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())


def test_load_state_dict_copies_in_place_keeping_references():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    w = b.weight
    b.load_state_dict(a.state_dict())
    assert b.weight is w
    np.testing.assert_array_equal(w.detach().numpy(), a.weight.detach().numpy())


def test_load_state_dict_missing_unexpected_and_shape_errors():
    m = Net()
    sd = m.state_dict()
    del sd["fc1.bias"]
    sd["extra"] = ember.zeros(1)
    sd["fc2.nope"] = ember.zeros(1)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(sd)
    msg = str(info.value)
    assert "Error(s) in loading state_dict for Net" in msg
    assert 'Missing key(s) in state_dict: "fc1.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "extra", "fc2.nope"' in msg
    result = m.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc1.bias"]
    assert result.unexpected_keys == ["extra", "fc2.nope"]
    bad = m.state_dict()
    bad["fc1.weight"] = ember.zeros(5, 3)
    with pytest.raises(RuntimeError, match=r"size mismatch for fc1.weight: copying a param with "
                                           r"shape ember.Size\(\[5, 3\]\) from checkpoint, the "
                                           r"shape in current model is ember.Size\(\[4, 3\]\)"):
        m.load_state_dict(bad, strict=False)
    with pytest.raises(TypeError, match="dict-like"):
        m.load_state_dict([1, 2])


def test_batchnorm_loads_checkpoint_without_num_batches_tracked():
    bn = nn.BatchNorm1d(3)
    sd = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
    assert bn.load_state_dict(sd).missing_keys == []


@pytest.mark.parity
def test_state_dict_loads_into_torch_and_back(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                 torch.nn.ReLU(), torch.nn.Linear(4, 2))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in ours.state_dict().items()})
    x = rng.standard_normal((5, 3)).astype(np.float32)
    ours.eval(), theirs.eval()
    np.testing.assert_allclose(ours(ember.tensor(x)).detach().numpy(),
                               theirs(torch.from_numpy(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    back = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    back.load_state_dict({k: ember.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    back.eval()
    np.testing.assert_array_equal(back(ember.tensor(x)).detach().numpy(),
                                  ours(ember.tensor(x)).detach().numpy())


def test_extra_state_round_trip():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 1

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

    a, b = WithExtra(), WithExtra()
    a.value = 7
    sd = a.state_dict()
    assert sd["_extra_state"] == {"value": 7}
    b.load_state_dict(sd)
    assert b.value == 7


def test_extra_state_key_without_set_extra_state_is_unexpected_as_torch():
    import torch

    from ember.nn.modules import module as ember_module
    assert ember_module._EXTRA_STATE_KEY_SUFFIX == torch.nn.modules.module._EXTRA_STATE_KEY_SUFFIX
    assert ember_module._IncompatibleKeys is type(nn.Linear(1, 1).load_state_dict(
        nn.Linear(1, 1).state_dict()))
    for lib in (torch, ember):
        m = lib.nn.Linear(2, 2)
        sd = m.state_dict()
        sd["_extra_state"] = 1
        assert m.load_state_dict(sd, strict=False).unexpected_keys == ["_extra_state"]
        with pytest.raises(RuntimeError, match='Unexpected key.*"_extra_state"'):
            m.load_state_dict(sd)


# ----------------------------------------------------------------------------- hooks
def test_forward_hooks_modify_and_remove():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or out + 1)
    x = ember.ones(1, 2)
    out = m(x)
    np.testing.assert_allclose(out.detach().numpy(), m.bias.detach().numpy()[None] + 1,
                               rtol=1e-6)
    assert calls == [ember.Size([1, 2])]
    h1.remove()
    h2.remove()
    np.testing.assert_allclose(m(x).detach().numpy(), m.forward(x).detach().numpy())
    assert len(calls) == 1


def test_forward_hooks_with_kwargs_and_prepend_and_context_manager():
    class Scale(nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    m = Scale()
    order = []
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": 3.0}),
                                with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: order.append(("kw", kwargs)),
                            with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: order.append("first"), prepend=True)
    assert m(ember.ones(1)).item() == 3.0
    assert order == ["first", ("kw", {"factor": 3.0})]
    with m.register_forward_hook(lambda mod, args, out: out * 0):
        assert m(ember.ones(1)).item() == 0.0
    assert m(ember.ones(1)).item() == 3.0


def test_full_backward_hook_sees_and_replaces_gradients():
    m = nn.Linear(3, 2)
    seen = {}

    def hook(mod, grad_input, grad_output):
        seen["in"], seen["out"] = grad_input, grad_output
        return (grad_input[0] * 2,)

    handle = m.register_full_backward_hook(hook)
    x = ember.randn(4, 3, requires_grad=True)
    m(x).sum().backward()
    assert seen["out"][0].shape == ember.Size([4, 2])
    np.testing.assert_allclose(seen["out"][0].numpy(), np.ones((4, 2)))
    expected = np.ones((4, 2)) @ m.weight.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), 2 * expected, rtol=1e-6)
    handle.remove()
    x.grad = None
    m(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_full_backward_hook_without_input_grad_gets_none():
    m = nn.Linear(3, 2)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go[0].shape)))
    pre = []
    m.register_full_backward_pre_hook(lambda mod, go: pre.append(go[0].shape))
    m(ember.randn(4, 3)).sum().backward()
    assert seen == [((None,), ember.Size([4, 2]))]
    assert pre == [ember.Size([4, 2])]
    assert m.weight.grad is not None


def test_missing_forward_raises():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


# ----------------------------------------------------------------------------- containers
def test_sequential_indexing_slicing_and_mutation():
    a, b, c = nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1)
    s = nn.Sequential(a, b)
    assert s[0] is a and s[-1] is b and len(s) == 2
    assert isinstance(s[0:1], nn.Sequential) and s[0:1][0] is a
    s.append(c)
    assert s[2] is c and list(s) == [a, b, c]
    s.insert(1, nn.Tanh())
    assert [type(m).__name__ for m in s] == ["Linear", "Tanh", "ReLU", "Linear"]
    del s[1]
    assert list(s._modules) == ["0", "1", "2"] and s[1] is b
    s2 = s + nn.Sequential(nn.Sigmoid())
    assert len(s2) == 4 and isinstance(s2[3], nn.Sigmoid)
    s.extend([nn.Identity()])
    assert len(s) == 4
    s[3] = nn.Tanh()
    assert isinstance(s[3], nn.Tanh)
    with pytest.raises(IndexError):
        s[10]
    named = nn.Sequential(OrderedDict(first=a, second=b))
    assert named.first is a
    assert nn.Sequential(a, b)(ember.ones(1, 2)).shape == ember.Size([1, 2])


def test_module_list_and_dict():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and len(list(layers.parameters())) == 6
    layers.append(nn.ReLU())
    layers.insert(0, nn.Tanh())
    assert isinstance(layers[0], nn.Tanh) and isinstance(layers[-1], nn.ReLU)
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    del layers[0]
    assert list(layers._modules) == ["0", "1", "2", "3"]
    layers += [nn.Identity()]
    assert len(layers) == 5
    d = nn.ModuleDict({"a": nn.Linear(1, 1), "b": nn.ReLU()})
    d["c"] = nn.Tanh()
    assert list(d.keys()) == ["a", "b", "c"] and "a" in d and len(d) == 3
    assert [n for n, _ in d.named_parameters()] == ["a.weight", "a.bias"]
    assert d.pop("b").__class__ is nn.ReLU and len(d) == 2


def test_parameter_list_and_dict():
    plist = nn.ParameterList([nn.Parameter(ember.ones(2)), ember.zeros(3)])
    assert isinstance(plist[1], nn.Parameter) and len(plist) == 2
    plist.append(ember.ones(1))
    assert [n for n, _ in plist.named_parameters()] == ["0", "1", "2"]
    pdict = nn.ParameterDict({"w": ember.ones(2)})
    pdict["b"] = nn.Parameter(ember.zeros(1))
    assert isinstance(pdict["w"], nn.Parameter) and list(pdict) == ["w", "b"]
    assert [n for n, _ in pdict.named_parameters()] == ["w", "b"]
    m = nn.Module()
    m.plist = plist
    assert len(list(m.parameters())) == 3
    assert "(0): Parameter containing: [ember.float32 of size 2]" in repr(plist)


# ----------------------------------------------------------------------------- repr
def test_repr_nested_matches_torch_format():
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(),
                        nn.Sequential(nn.Linear(3, 3, bias=False), nn.Dropout(0.1)))
    expected = ("Sequential(\n"
                "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
                "  (1): ReLU()\n"
                "  (2): Sequential(\n"
                "    (0): Linear(in_features=3, out_features=3, bias=False)\n"
                "    (1): Dropout(p=0.1, inplace=False)\n"
                "  )\n"
                ")")
    assert repr(net) == expected


@pytest.mark.parity
def test_repr_equals_torch_for_the_same_architecture():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")

    def build(lib):
        n = lib.nn
        return n.Sequential(
            n.Conv2d(1, 8, 3, padding=1), n.BatchNorm2d(8), n.ReLU(inplace=True),
            n.MaxPool2d(2), n.Flatten(), n.Dropout(0.25),
            n.ModuleList([n.Linear(4, 4) for _ in range(3)]),
            n.ModuleDict({"act": n.GELU(approximate="tanh"), "norm": n.LayerNorm(4)}),
            n.Embedding(10, 3, padding_idx=0), n.LeakyReLU(0.2), n.Softmax(dim=1),
            n.GroupNorm(2, 4), n.EmbeddingBag(5, 2, mode="sum"), n.CrossEntropyLoss(),
            n.Unflatten(1, (2, 2)), n.Hardtanh(-2.0, 2.0), n.PReLU(), n.Bilinear(2, 3, 4))

    assert repr(build(ember)) == repr(build(torch))


def test_setstate_restores_pickled_module():
    m = Net()
    state = m.__dict__.copy()
    del state["_forward_hooks_with_kwargs"]
    clone = Net.__new__(Net)
    clone.__setstate__(state)
    assert clone(ember.randn(2, 3)).shape == ember.Size([2, 2])
    restored = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(restored.fc1.weight.detach().numpy(),
                                  m.fc1.weight.detach().numpy())
    assert isinstance(restored.fc1.weight, nn.Parameter)


def test_deepcopy_module_is_independent():
    m = Net()
    c = copy.deepcopy(m)
    with ember.no_grad():
        c.fc1.weight.fill_(0)
    assert float(m.fc1.weight.abs().sum()) > 0
    assert isinstance(c.fc1.weight, nn.Parameter)


@pytest.mark.parametrize("kind", ["parameter", "tensor"])
def test_deepcopy_leaves_post_accumulate_grad_hooks_behind(kind):
    # a hook belongs to the tensor it was registered on (torch keeps it outside __dict__): the
    # copy has none, and hooks registered on the copy never reach the original
    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        t = lib.ones(2, requires_grad=True)
        if kind == "parameter":
            t = lib.nn.Parameter(t.detach())
        seen = []
        t.register_post_accumulate_grad_hook(lambda p, seen=seen: seen.append("original"))
        c = copy.deepcopy(t)
        c.register_post_accumulate_grad_hook(lambda p, seen=seen: seen.append("copy"))
        (c * 2).sum().backward()
        (t * 2).sum().backward()
        assert seen == ["copy", "original"], (lib.__name__, seen)


def test_attribute_reads_follow_the_registries():
    # attribute reads look in _parameters, _buffers, _modules in that order, each time: an
    # entry changed in the dicts directly (as parametrize/pruning code does) is what reads see
    m = nn.Linear(2, 2)
    new = nn.Parameter(ember.ones(2, 2))
    m._parameters["weight"] = new
    assert m.weight is new
    del m._parameters["bias"]
    m._buffers["bias"] = ember.zeros(2)
    assert m.bias is m._buffers["bias"]
    m._modules["bias2"] = nn.ReLU()
    assert isinstance(m.bias2, nn.ReLU)

    class Early(nn.Module):
        def __init__(self):
            self.x  # read before Module.__init__: no registries yet

    with pytest.raises(AttributeError, match="'Early' object has no attribute 'x'"):
        Early()


def test_always_call_forward_hook_runs_when_forward_raises():
    class Fails(nn.Module):
        def forward(self, x):
            raise ValueError("forward failed")

    m, seen = Fails(), []
    m.register_forward_hook(lambda mod, args, out: seen.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, args, out: seen.append(("plain", out)))
    with pytest.raises(ValueError, match="forward failed"):
        m(ember.ones(2))
    assert seen == [("always", None)]


def test_global_module_hooks_run_before_each_modules_own():
    from ember.nn.modules.module import (
        register_module_forward_hook,
        register_module_forward_pre_hook,
        register_module_full_backward_hook,
    )
    log = []
    m = nn.Linear(2, 2)
    m.register_forward_hook(lambda mod, args, out: log.append("own"))
    handles = [register_module_forward_pre_hook(lambda mod, args: log.append("pre")),
               register_module_forward_hook(lambda mod, args, out: log.append("global")),
               register_module_full_backward_hook(lambda mod, gi, go: log.append("backward"))]
    try:
        m(ember.ones(1, 2, requires_grad=True)).sum().backward()
    finally:
        for h in handles:
            h.remove()
    m(ember.ones(1, 2))
    assert log == ["pre", "global", "own", "backward", "own"]


def test_full_backward_hooks_see_one_entry_per_argument_and_output():
    class Mixed(nn.Module):
        def forward(self, x, k, y):
            return x * k * y, 3, (x * 0).detach()

    m, seen = Mixed(), []
    m.register_full_backward_pre_hook(lambda mod, go: seen.append(len(go)))
    m.register_full_backward_hook(
        lambda mod, gi, go: seen.append((gi[1], go[1], go[2])) or (gi[0] * 3, None, gi[2]))
    x = ember.ones(2, requires_grad=True)
    m(x, 2.0, ember.ones(2))[0].sum().backward()
    assert seen == [3, (None, None, None)] and x.grad.tolist() == [6.0, 6.0]
