"""grad_fn._saved_<name> / _raw_saved_<name>: the values an op saved, by torch's names."""
import numpy as np
import pytest

import ember


def _names(node):
    return sorted(n for n in dir(node) if n.startswith(("_saved_", "_raw_saved_")))


def test_mul_saves_its_inputs_as_self_and_other():
    a = ember.randn(5, requires_grad=True)
    b = ember.ones(5, requires_grad=True)
    y = a * b
    assert y.grad_fn._saved_self is a
    assert y.grad_fn._saved_other is b
    assert _names(y.grad_fn) == ["_raw_saved_other", "_raw_saved_self",
                                 "_saved_other", "_saved_self"]


def test_same_tensor_twice_fills_both_names():
    x = ember.randn(4, requires_grad=True)
    y = x * x
    assert y.grad_fn._saved_self is x and y.grad_fn._saved_other is x


def test_saved_output_is_result_equal_but_not_the_same_object():
    a = ember.randn(5, requires_grad=True)
    y = ember.exp(a)
    r = y.grad_fn._saved_result
    assert r.equal(y) and r is not y
    assert r.grad_fn is y.grad_fn  # as torch: the unpacked output points back at its node


def test_scalar_argument_comes_back_as_a_number():
    a = ember.randn(3, requires_grad=True)
    y = a.pow(2)
    assert y.grad_fn._saved_self is a
    assert y.grad_fn._saved_exponent == 2
    assert isinstance(y.grad_fn._saved_exponent, (int, float))


def test_ctx_values_by_torch_name():
    a = ember.randn(3, requires_grad=True)
    b = ember.randn(3, requires_grad=True)
    assert ember.sub(a, b, alpha=2).grad_fn._saved_alpha == 2
    m = ember.randn(3, 4, requires_grad=True)
    node = m.sum(1).grad_fn
    assert tuple(node._saved_dim) == (1,)
    assert node._saved_keepdim is False
    assert tuple(node._saved_self_sym_sizes) == (3, 4)


def test_missing_name_is_attribute_error_naming_the_node():
    y = ember.randn(3, requires_grad=True) * 2
    with pytest.raises(AttributeError, match=r"'MulBackward0' object has no attribute '_saved_x'"):
        y.grad_fn._saved_x
    assert not hasattr(y.grad_fn, "_saved_nothing")
    with pytest.raises(AttributeError, match="no attribute 'plain_missing'"):
        y.grad_fn.plain_missing


def test_freed_after_backward_raises_runtime_error():
    a = ember.randn(3, requires_grad=True)
    y = a * a
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn._saved_self
    y2 = a * a
    y2.sum().backward(retain_graph=True)
    assert y2.grad_fn._saved_self is a


def test_custom_function_ctx_has_no_saved_names():
    class Double(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    y = Double.apply(ember.randn(2, requires_grad=True))
    assert _names(y.grad_fn) == []
    with pytest.raises(AttributeError):
        y.grad_fn._saved_self


def test_saved_tensors_hooks_run_on_access_every_time():
    calls = []

    def pack(t):
        calls.append("pack")
        return t.detach().clone()

    def unpack(p):
        calls.append("unpack")
        return p

    x = ember.ones(5, requires_grad=True)
    with ember.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x.pow(2)
    first = y.grad_fn._saved_self
    second = y.grad_fn._saved_self
    assert first is not x and np.array_equal(second.numpy(), x.detach().numpy())
    assert calls.count("unpack") == 2


def test_raw_saved_register_hooks_packs_now_and_unpacks_on_use():
    a = ember.randn(4, requires_grad=True)
    b = ember.randn(4, requires_grad=True)
    y = a * b
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t * 2, lambda p: p)
    np.testing.assert_allclose(y.grad_fn._saved_self.detach().numpy(),
                               2 * a.detach().numpy())
    y.sum().backward()
    # the gradient of b is computed from the hooked (doubled) saved value
    np.testing.assert_allclose(b.grad.numpy(), 2 * a.detach().numpy(), rtol=1e-6)


def test_raw_saved_register_hooks_errors():
    a = ember.randn(4, requires_grad=True)
    y = a * a
    raw = y.grad_fn._raw_saved_self
    raw.register_hooks(lambda t: t, lambda p: p)
    with pytest.raises(RuntimeError, match="hooks have already been set"):
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda p: p)
    y.grad_fn._raw_saved_other.register_hooks(lambda t: t, lambda p: 3)
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor.*int"):
        y.grad_fn._saved_other


@pytest.mark.parity
@pytest.mark.parametrize("expr", [
    "a * b", "a / b", "torch.exp(a)", "torch.tanh(a)", "torch.sigmoid(a)", "torch.relu(a)",
    "a.abs().pow(b)", "a.pow(3)", "torch.sub(a, b, alpha=3)", "m.sum(1)", "torch.sin(a)",
    "torch.log(a.abs())",
])
def test_parity_names_and_values(expr):
    torch = pytest.importorskip("torch")
    data = {"a": np.random.default_rng(0).standard_normal(5).astype(np.float32),
            "b": np.random.default_rng(1).standard_normal(5).astype(np.float32),
            "m": np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)}

    def run(lib):
        env = {k: lib.tensor(v, requires_grad=True) for k, v in data.items()}
        env["torch"] = lib
        return eval(expr, env).grad_fn

    tn, en = run(torch), run(ember)
    tnames = {n for n in _names(tn) if not n.endswith(("_sym_strides", "_sym_sizes"))}
    enames = set(_names(en))
    # ember may keep more than torch (pow keeps its result too); torch's names are all there
    assert tnames <= enames, (expr, tnames - enames)
    for n in tnames:
        if n.startswith("_raw_"):
            continue
        tv, ev = getattr(tn, n), getattr(en, n)
        if isinstance(tv, torch.Tensor):
            np.testing.assert_allclose(ev.detach().numpy(), tv.detach().numpy(), rtol=1e-6)
        else:
            assert (tuple(ev) if isinstance(ev, (list, tuple)) else ev) == \
                (tuple(tv) if isinstance(tv, (list, tuple)) else tv), n
