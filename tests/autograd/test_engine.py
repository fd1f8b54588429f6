"""The backward engine: accumulation, grad(), retain/create_graph, hooks, grad modes."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


def t64(a, rg=True):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=rg)


def test_backward_accumulates_into_leaves():
    x = t64([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1, 2, 3]) + 3)


def test_broadcast_gradient_reduced_to_input_shape():
    a = t64(np.ones((3, 1)))
    b = t64(np.arange(4.0))
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    np.testing.assert_allclose(a.grad.numpy(), np.full((3, 1), 6.0))
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 3.0))


def test_second_backward_raises_torch_phrase():
    x = t64([1.0, 2.0])
    y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = t64([1.0, 2.0])
    y = x.exp().sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]))


def test_nonscalar_backward_needs_gradient():
    x = t64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    (x * 2).backward(ember.tensor([1.0, 10.0], dtype=ember.float64))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0])


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        ember.ones(2).sum().backward()


def test_autograd_grad_does_not_touch_dot_grad():
    x = t64([1.0, 2.0])
    (g,) = ember.autograd.grad((x ** 2).sum(), x)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    assert x.grad is None and not g.requires_grad


def test_autograd_grad_unused_input():
    x, y = t64([1.0]), t64([2.0])
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        ember.autograd.grad((x * 2).sum(), [x, y])
    gx, gy = ember.autograd.grad((x * 2).sum(), [x, y], allow_unused=True)
    assert gy is None and gx.item() == 2.0


def test_autograd_grad_wrt_intermediate():
    x = t64([1.0, 2.0])
    h = x * 3
    out = (h * h).sum()
    (gh,) = ember.autograd.grad(out, h)
    np.testing.assert_allclose(gh.numpy(), 2 * 3 * np.array([1.0, 2.0]))


def test_backward_inputs_restricts_accumulation():
    x, y = t64([1.0]), t64([2.0])
    (x * y).sum().backward(inputs=[x])
    assert x.grad.item() == 2.0 and y.grad is None


def test_double_backward_and_hessian_vector_product():
    x = t64([1.0, 2.0, 3.0])
    v = ember.tensor([1.0, 0.5, -1.0], dtype=ember.float64)
    y = (x ** 3).sum() + (x[0] * x[1])
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    (hv,) = ember.autograd.grad(g, x, grad_outputs=v)
    hess = np.diag(6 * np.array([1.0, 2.0, 3.0]))
    hess[0, 1] = hess[1, 0] = 1.0
    np.testing.assert_allclose(hv.numpy(), hess @ v.numpy())


@pytest.mark.parametrize("fn", [
    lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / (b + 3),
    lambda a, b: (a.abs() + 1) ** b, lambda a, b: a.exp() * b.tanh(),
    lambda a, b: (a * a + 1).log(),
    lambda a, b: a.sigmoid() * b.sin(), lambda a, b: a @ b.t(), lambda a, b: (a * b).sum(1),
    lambda a, b: (a * b).mean(0), lambda a, b: ember.where(a > 0, a, b),
    lambda a, b: a.clamp(-0.5, 0.5) * b, lambda a, b: ember.maximum(a, b),
    lambda a, b: a.amax(1) * b.sum(), lambda a, b: a.reshape(6).cumsum(0),
], ids=["add", "sub", "mul", "div", "pow", "exp_tanh", "log", "sigmoid_sin", "matmul", "sum",
        "mean", "where", "clamp", "maximum", "amax", "cumsum"])
def test_gradcheck_and_gradgradcheck_core_ops(fn, rng):
    a = ember.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = ember.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


def test_integer_tensor_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        ember.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        ember.arange(3).requires_grad_()


def test_requires_grad_of_non_leaf_cannot_be_cleared():
    x = t64([1.0])
    y = x * 2
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad_(False)
    assert not x.detach().requires_grad and x.detach()._vc is x._vc


def test_grad_fn_names_and_next_functions():
    x = t64([1.0, 2.0])
    y = (x * 2).sum()
    assert y.grad_fn.name() == "SumBackward0"
    (mul, _), = y.grad_fn.next_functions
    assert mul.name() == "MulBackward0"
    acc, _ = mul.next_functions[0]
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is x
    assert x.is_leaf and not y.is_leaf


def test_tensor_hook_modifies_gradient_and_can_be_removed():
    x = t64([1.0, 2.0])
    y = x * 2
    h = y.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 20.0])
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_leaf_hook_and_retain_grad():
    x = t64([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(g.numpy().copy()))
    y = x * 3
    y.retain_grad()
    (y * y).sum().backward()
    np.testing.assert_allclose(seen[0], 2 * 3 * 3 * np.array([1.0, 2.0]))
    np.testing.assert_allclose(y.grad.numpy(), 2 * 3 * np.array([1.0, 2.0]))


@pytest.mark.parametrize("mode", ["ctx", "decorator"])
def test_no_grad_and_enable_grad(mode):
    x = t64([1.0])
    if mode == "ctx":
        with ember.no_grad():
            y = x * 2
            with ember.enable_grad():
                z = x * 2
    else:
        @ember.no_grad()
        def f():
            return x * 2
        y = f()
        z = ember.enable_grad()(lambda: x * 2)()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad
    assert ember.is_grad_enabled()


def test_set_grad_enabled_and_inference_mode():
    x = t64([1.0])
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert ember.is_grad_enabled()
    with ember.inference_mode():
        assert not (x * 2).requires_grad and ember.is_inference_mode_enabled()
    assert (x * 2).requires_grad


@pytest.mark.parity
def test_gradients_match_torch_on_a_small_network(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    xs = rng.standard_normal((5, 4))
    w1, w2 = rng.standard_normal((4, 6)), rng.standard_normal((6, 3))
    ours = [ember.tensor(a, requires_grad=True) for a in (xs, w1, w2)]
    ref = [torch.tensor(a, requires_grad=True) for a in (xs, w1, w2)]
    for lib, (x, a, b) in ((ember, ours), (torch, ref)):
        h = (x @ a).tanh()
        out = (h @ b).sigmoid()
        loss = (out * out).mean() + lib.logsumexp(h, dim=1).sum() + h.std()
        loss.backward()
    for o, r in zip(ours, ref):
        np.testing.assert_allclose(o.grad.numpy(), r.grad.numpy(), rtol=1e-10, atol=1e-12)


# --- AccumulateGrad steals an unshared first gradient (engine._can_steal) -------------------

def _count_copies(monkeypatch):
    from ember.autograd import engine
    copies = []
    real = engine._copy_grad
    monkeypatch.setattr(engine, "_copy_grad", lambda a: copies.append(a.shape) or real(a))
    return copies


def test_unshared_first_gradient_is_not_copied(monkeypatch):
    copies = _count_copies(monkeypatch)
    lin = ember.nn.Linear(4, 3)
    lin(ember.randn(5, 4)).sum().backward()
    assert copies == []
    np.testing.assert_allclose(lin.bias.grad.numpy(), np.full(3, 5.0))


def test_first_gradient_is_not_copied_after_an_engine_sum(monkeypatch):
    # x feeds two ops, so the engine sums its gradient in a buffer it owns while the Linear's
    # parameter gradients are still to be accumulated; a leftover reference from that
    # bookkeeping once made each of them a copy
    copies = _count_copies(monkeypatch)
    lin = ember.nn.Linear(4, 3)
    x = ember.randn(5, 4, requires_grad=True)
    (lin(x).sum() + (x * x).sum()).backward()
    assert copies == []
    w = lin.weight.detach().numpy()
    np.testing.assert_allclose(lin.bias.grad.numpy(), np.full(3, 5.0))
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.tile(x.detach().numpy().sum(0), (3, 1)),
                               rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), w.sum(0) + 2 * x.detach().numpy(), rtol=1e-5)


class _SameTwice(ember.autograd.Function):
    """Hands one gradient tensor to both inputs, or a view of it to the second."""

    @staticmethod
    def forward(ctx, a, b, view):
        ctx.view = view
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g, (g.view(-1).view(g.shape) if ctx.view else g), None


@pytest.mark.parametrize("view", [False, True])
def test_shared_gradient_is_copied_for_all_but_the_last_owner(monkeypatch, view):
    copies = _count_copies(monkeypatch)
    a = ember.randn(3, requires_grad=True)
    b = ember.randn(3, requires_grad=True)
    _SameTwice.apply(a, b, view).backward(ember.ones(3) * 2)
    assert len(copies) >= 1  # the two leaves must not share one array
    a.grad.add_(100)
    np.testing.assert_allclose(b.grad.numpy(), np.full(3, 2.0))
    np.testing.assert_allclose(a.grad.numpy(), np.full(3, 102.0))


def test_user_held_gradient_is_not_stolen():
    a = ember.randn(3, requires_grad=True)
    g = ember.ones(3)
    a.backward(g)  # a leaf: the root gradient goes straight to AccumulateGrad
    a.grad.add_(1)
    np.testing.assert_allclose(g.numpy(), np.ones(3))


# --- several gradients for one edge are summed in place (engine NOTE [Sums]) -----------------

class _Fan(ember.autograd.Function):
    """y = a + b + c with a backward that hands the SAME gradient tensor to all three inputs,
    and keeps a reference to it (as an op holding its output would)."""

    held = []

    @staticmethod
    def forward(ctx, a, b, c):
        return a + b + c

    @staticmethod
    def backward(ctx, g):
        _Fan.held.append(g)
        return g, g, g


def test_shared_weight_gradients_sum_without_ember_adds(monkeypatch):
    calls = []
    real = ember.Tensor.__add__
    monkeypatch.setattr(ember.Tensor, "__add__", lambda a, b: calls.append(1) or real(a, b))
    w = ember.randn(3, 4, requires_grad=True)
    x = ember.randn(5, 3)
    h = x
    for _ in range(4):  # w used by four steps: its AccumulateGrad gets four gradients
        h = ember.tanh(h @ w)[:, :3]
    calls.clear()
    h.sum().backward()
    assert calls == []
    # the reference: the same loop through autograd.grad with create_graph (the ember add)
    w2 = w.detach().clone().requires_grad_()
    h2 = x
    for _ in range(4):
        h2 = ember.tanh(h2 @ w2)[:, :3]
    (g2,) = ember.autograd.grad(h2.sum(), w2, create_graph=True)
    np.testing.assert_allclose(w.grad.numpy(), g2.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_sum_never_writes_an_incoming_gradient():
    _Fan.held.clear()
    a = ember.randn(3, requires_grad=True)
    x = a * 1.0
    y = _Fan.apply(x, x, x)  # x's node receives the same tensor three times
    y.backward(ember.full((3,), 2.0))
    (g,) = _Fan.held
    np.testing.assert_allclose(g.numpy(), np.full(3, 2.0))  # not 4 or 6
    np.testing.assert_allclose(a.grad.numpy(), np.full(3, 6.0))


def test_hooked_and_retained_sums_are_not_written_later():
    seen = []
    w = ember.randn(3, requires_grad=True)
    u = w * 2.0
    u.retain_grad()
    u.register_hook(lambda g: seen.append(g))
    z = (u * 1.0) + (u * 3.0) + (u * 5.0)  # three gradients summed into u's edge
    z.backward(ember.ones(3))
    np.testing.assert_allclose(u.grad.numpy(), np.full(3, 9.0))
    np.testing.assert_allclose(seen[0].numpy(), np.full(3, 9.0))
    np.testing.assert_allclose(w.grad.numpy(), np.full(3, 18.0))
    # a second backward accumulates into .grad (in place, as torch), but the tensors handed out
    # by the first one keep their values
    held = seen[0]
    w2 = w * 1.0
    ((w2 * 1.0) + (w2 * 1.0)).backward(ember.ones(3))
    np.testing.assert_allclose(w.grad.numpy(), np.full(3, 20.0))
    np.testing.assert_allclose(held.numpy(), np.full(3, 9.0))


def test_autograd_grad_returns_a_sum_that_later_backwards_leave_alone():
    w = ember.randn(4, requires_grad=True)
    y = (w * 2.0).sum() + (w * 3.0).sum()
    (g,) = ember.autograd.grad(y, w, retain_graph=True)
    np.testing.assert_allclose(g.numpy(), np.full(4, 5.0))
    (g2,) = ember.autograd.grad(y, w)
    np.testing.assert_allclose(g.numpy(), np.full(4, 5.0))
    assert g2 is not g


def test_create_graph_sum_stays_differentiable():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    y = (x * x).sum() + (x * x * x).sum()  # x reaches the sum along several edges
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 2 * x.detach().numpy()
                               + 3 * x.detach().numpy() ** 2)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 + 6 * x.detach().numpy())


def test_sum_of_different_dtypes_promotes_like_the_ember_add():
    # a custom Function can return a gradient of another dtype for an input with no recorded
    # metadata; the ember add promotes it, so the fast path must step aside
    from ember.autograd.engine import _add_owned
    a = ember.ones(3, dtype=ember.float32)
    b = ember.ones(3, dtype=ember.float64)
    assert _add_owned(a, b, set()).dtype == (a + b).dtype
    owned = set()
    s = _add_owned(a, a, owned)
    assert s is not a and id(s) in owned
    assert _add_owned(s, a, owned) is s
    np.testing.assert_allclose(s.numpy(), np.full(3, 3.0))
    np.testing.assert_allclose(a.numpy(), np.ones(3))
    # 0-d gradients stay 0-d arrays (NumPy's add of two 0-d arrays returns a scalar)
    z = ember.tensor(2.0, requires_grad=True)
    y = z * 3.0
    (y.view(()) + y.view(())).backward()
    assert isinstance(_add_owned(ember.tensor(1.0), ember.tensor(2.0), set())._data, np.ndarray)
    np.testing.assert_allclose(z.grad.numpy(), 6.0)


@pytest.mark.parity
def test_shared_cell_weights_match_torch(rng):
    torch = pytest.importorskip("torch")
    cell = ember.nn.LSTMCell(3, 5)
    ref = torch.nn.LSTMCell(3, 5)
    ref.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy())
                         for k, v in cell.state_dict().items()})
    xs = rng.standard_normal((6, 2, 3)).astype(np.float32)
    for lib, m in ((ember, cell), (torch, ref)):
        h = c = lib.zeros(2, 5)
        for t in range(6):
            h, c = m(lib.from_numpy(xs[t]), (h, c))
        (h.sum() + c.sum()).backward()
    for name, p in cell.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), dict(ref.named_parameters())[name].grad
                                   .numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_of_a_sum_is_dense_as_torch(create_graph):
    torch = pytest.importorskip("torch")
    a = np.arange(12.0).reshape(3, 4)
    x, ref = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    # the gradient of sum() is its 0-d incoming gradient expanded (a zero-stride view)
    (x.sum() ** 2).backward(create_graph=create_graph)
    (ref.sum() ** 2).backward(create_graph=create_graph)
    assert x.grad.stride() == ref.grad.stride() == (4, 1)
    np.testing.assert_array_equal(x.grad.detach().numpy(), ref.grad.detach().numpy())
    assert x.grad.requires_grad == ref.grad.requires_grad == create_graph
    if create_graph:  # still differentiable
        (gx,) = ember.autograd.grad((x.grad * x).sum(), x)
        (gref,) = torch.autograd.grad((ref.grad * ref).sum(), ref)
        np.testing.assert_array_equal(gx.numpy(), gref.numpy())


# --- a leaf's gradient is accumulated as soon as it is complete (NOTE [Leaves first]) -------

def _leaf_events(lib, chain):
    events = []
    a = lib.ones(3, requires_grad=True)
    b = lib.ones(3, requires_grad=True)
    for name, t in (("a", a), ("b", b)):
        t.register_post_accumulate_grad_hook(lambda p, name=name: events.append(name))
    h = a * 2  # older than b's branch: runs after it
    h.register_hook(lambda g: events.append("h"))
    k = b.exp()
    for _ in range(chain):
        k = k * 1.5
    (h + k).sum().backward()
    return events


@pytest.mark.parametrize("chain", [0, 2])
def test_leaf_accumulates_before_older_ready_nodes_run(chain):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    ours = _leaf_events(ember, chain)
    assert ours == ["b", "h", "a"]  # b's .grad is there before a's branch starts
    assert ours == _leaf_events(torch, chain)


def test_engine_runs_the_newest_of_several_ready_nodes_after_a_chain():
    # a chain (the one-ready-node slot) meeting a fork: the newest ready node still runs first
    torch = pytest.importorskip("torch", reason="torch oracle not installed")

    def order(lib):
        seen = []
        x = lib.ones(2, requires_grad=True)
        parts = []
        for i in range(3):
            p = x * (i + 1)
            p.register_hook(lambda g, i=i: seen.append(i))
            parts.append(p.exp().sin())
        (parts[0] + parts[1] + parts[2]).sum().backward()
        return seen, x.grad

    (ours, g_ours), (theirs, g_theirs) = order(ember), order(torch)
    assert ours == theirs == [2, 1, 0]
    np.testing.assert_allclose(g_ours.numpy(), g_theirs.numpy(), rtol=1e-6)


def test_tensor_hook_result_of_another_shape_or_dtype_raises():
    for on_leaf in (True, False):
        for bad, what in ((lambda g: g[0], "size"), (lambda g: g.float(), "type")):
            x = ember.ones(3, 4, dtype=ember.float64, requires_grad=True)
            h = x if on_leaf else x * 1
            h.register_hook(bad)
            with pytest.raises(RuntimeError, match=f"hook '<lambda>' has changed the {what}"):
                (h * 2).sum().backward()
            assert x.grad is None


def test_post_accumulate_hook_returning_a_value_raises():
    x = ember.ones(2, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda p: p.grad * 2)
    with pytest.raises(RuntimeError, match="post accumulate grad hooks should return None"):
        x.sum().backward()


def test_grad_argument_errors():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="`inputs` argument to `grad\\(\\)` cannot be empty"):
        ember.autograd.grad(x.sum(), [])
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        ember.autograd.grad([x.sum(), x.prod()], x, [ember.tensor(1.0)])
    with pytest.raises(ValueError, match="needs allow_unused=True"):
        ember.autograd.grad(x.sum(), x, allow_unused=False, materialize_grads=True)


def test_inference_mode_false_records_and_no_grad_wraps_generators():
    with ember.inference_mode():
        with ember.inference_mode(False):
            assert ember.is_grad_enabled() and not ember.is_inference_mode_enabled()
    x = ember.ones(2, requires_grad=True)

    @ember.no_grad()
    def steps(t):
        got = yield t * 2
        yield t * got

    gen = steps(x)
    first = next(gen)
    assert ember.is_grad_enabled() and not first.requires_grad  # the caller's mode is kept
    assert not gen.send(3.0).requires_grad


def test_gradcheck_needs_an_input_that_requires_grad():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda t: t * 2, (ember.ones(2, dtype=ember.float64),))


def test_node_hook_replaces_grad_inputs_and_node_metadata():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.grad_fn.metadata["tag"] = "scaled"
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 0.5, None))
    y.sum().backward()
    assert x.grad.tolist() == [1.5, 1.5] and y.grad_fn.metadata == {"tag": "scaled"}


def test_graph_increment_version_and_mutation_on_saved_tensors():
    graph = ember.autograd.graph
    x = ember.tensor([0.5, 1.0], dtype=ember.float64, requires_grad=True)
    y = x.exp()
    graph.increment_version(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    with graph.allow_mutation_on_saved_tensors():
        y = x.exp()
        y.mul_(2)                      # backward still uses exp(x) as saved
        y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([0.5, 1.0]))


def test_anomaly_mode_without_nan_check_lets_nan_through():
    x = ember.tensor([0.0, 1.0], dtype=ember.float64, requires_grad=True)
    with ember.autograd.detect_anomaly(check_nan=False):
        (x.sqrt() * ember.tensor([0.0, 1.0], dtype=ember.float64)).sum().backward()
    assert np.isnan(x.grad.numpy()[0])


def test_retained_grad_is_taken_after_every_tensor_hook():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    h.retain_grad()
    h.register_hook(lambda g: g * 2)   # registered after retain_grad: still applies to h.grad
    h.sum().backward()
    assert h.grad.tolist() == [2.0, 2.0] and x.grad.tolist() == [2.0, 2.0]


def test_real_grad_output_for_a_complex_output_raises():
    z = ember.tensor([1.0 + 1.0j, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="same dtype. Mismatch in dtype: grad_output\\[0\\] "
                                           "has a dtype of ember.float64"):
        ember.autograd.grad(z * 2, z, ember.ones(2, dtype=ember.float64))


def test_second_derivative_through_two_tensors_sharing_one_array():
    x = ember.tensor([0.5, -1.0], dtype=ember.float64)
    a, b = x.detach().requires_grad_(), x.detach().requires_grad_()   # one ndarray, two leaves
    (ga,) = ember.autograd.grad((a * b).sum(), a, create_graph=True)   # ga = b
    (gb,) = ember.autograd.grad(ga.sum(), b, allow_unused=True)
    assert gb is not None and gb.tolist() == [1.0, 1.0]
