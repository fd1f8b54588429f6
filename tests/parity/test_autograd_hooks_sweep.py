"""A differential sweep against torch 2.13, the second half of test_autograd_sweep.py: nn.Module
hooks (forward pre-hooks and hooks with with_kwargs, always_call and prepend, full backward
hooks and pre-hooks: what they see, what they may return, hook handles), the Jacobian helpers of
torch.autograd.functional (jacobian with vectorize/strategy/create_graph/strict, hessian, vjp,
jvp, hvp, vhp on tuple inputs and outputs) and forward-mode AD (torch.autograd.forward_ad) over
~60 common ops: each op's tangent for a fixed input tangent against torch's.

A case is a function of a Lib (``_sweep_results``); both libraries must raise the same exception
type or return the same results. ``raised(...)`` cases compare an error's type and which of its
key phrases the message lacks. Divergences kept on purpose are in KNOWN with a reason (and in
docs/DEVIATIONS.md).
"""
from __future__ import annotations

import numpy as np
import pytest
from _sweep import assert_verdict, raised
from _sweep_results import divergence

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.parity, pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning")]

CASES: list = []


def case(group, what, fn):
    CASES.append((group, what, fn))


RNG = np.random.default_rng(361)
A = RNG.uniform(-1.5, 1.5, (3, 4))
B = RNG.uniform(-1.5, 1.5, (3, 4))
P = RNG.uniform(0.3, 2.0, (3, 4))        # positive: log, sqrt, pow
M = RNG.uniform(-1.0, 1.0, (4, 2))
IMG = RNG.uniform(-1.0, 1.0, (2, 3, 5, 5))
KER = RNG.uniform(-1.0, 1.0, (4, 3, 3, 3))


def _fill(L, module):
    """Fixed float64 parameters (cosines), the same in both libraries."""
    module = module.double()
    with L.mod.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(L.T(np.cos(np.arange(p.numel()) + i).reshape(tuple(p.shape))))
    return module


def lin(L, i=4, o=3):
    return _fill(L, L.mod.nn.Linear(i, o))


def _scaled(L):
    """A module whose forward takes a keyword argument."""
    class Scaled(L.mod.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lin(L)

        def forward(self, x, *, k=1.0):
            return self.lin(x) * k

    return Scaled()


# --------------------------------------------------------------------------- forward hooks
def _pre(L, hook, **kw):
    m = lin(L)
    handle = m.register_forward_pre_hook(hook, **kw)
    out = m(L.G(A))
    return out, type(handle).__name__


case("forward_pre_hook", "returns None", lambda L: _pre(L, lambda m, args: None))
case("forward_pre_hook", "returns a tensor", lambda L: _pre(L, lambda m, args: args[0] * 2))
case("forward_pre_hook", "returns a tuple", lambda L: _pre(L, lambda m, args: (args[0].exp(),)))
case("forward_pre_hook", "sees a tuple", lambda L: _pre(
    L, lambda m, args: L.T(float(isinstance(args, tuple) and len(args) == 1)) * args[0]))
case("forward_pre_hook", "with_kwargs", lambda L: (lambda m: (
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"k": kwargs["k"] * 3}),
                                with_kwargs=True), m(L.G(A), k=2.0))[1])(_scaled(L)))
case("forward_pre_hook", "with_kwargs returns None", lambda L: (lambda m: (
    m.register_forward_pre_hook(lambda mod, args, kwargs: None, with_kwargs=True),
    m(L.G(A), k=2.0))[1])(_scaled(L)))
case("forward_pre_hook", "with_kwargs bad return", lambda L: raised(lambda: (lambda m: (
    m.register_forward_pre_hook(lambda mod, args, kwargs: args, with_kwargs=True),
    m(L.G(A), k=2.0)))(_scaled(L)), "forward pre-hook must return None or a tuple"))
case("forward_pre_hook", "prepend order", lambda L: _order(L, "pre"))
case("forward_pre_hook", "removed", lambda L: (lambda m: (
    m.register_forward_pre_hook(lambda mod, args: args[0] * 100).remove(),
    m(L.G(A)))[1])(lin(L)))
case("forward_hook", "replaces output", lambda L: (lambda m: (
    m.register_forward_hook(lambda mod, args, out: out.tanh()), m(L.G(A)))[1])(lin(L)))
case("forward_hook", "returns None", lambda L: (lambda m, seen: (
    m.register_forward_hook(lambda mod, args, out: seen.append(tuple(out.shape))),
    m(L.G(A)), seen)[1:])(lin(L), []))
case("forward_hook", "with_kwargs", lambda L: (lambda m: (
    m.register_forward_hook(lambda mod, args, kwargs, out: out * kwargs["k"],
                            with_kwargs=True), m(L.G(A), k=3.0))[1])(_scaled(L)))
case("forward_hook", "always_call on error", lambda L: _always(L, True))
case("forward_hook", "not called on error", lambda L: _always(L, False))
case("forward_hook", "prepend order", lambda L: _order(L, "post"))
case("forward_hook", "removed twice", lambda L: (lambda m: (lambda h: (
    h.remove(), h.remove(), m(L.G(A))))(m.register_forward_hook(
        lambda mod, args, out: out * 0)))(lin(L))[2])
case("forward_hook", "on a submodule", lambda L: (lambda seq: (
    seq[0].register_forward_hook(lambda mod, args, out: out.relu()), seq(L.G(A)))[1])(
    L.mod.nn.Sequential(lin(L), lin(L, 3, 2))))
case("forward_hook", "handle context manager", lambda L: (lambda m: (
    _with_handle(m.register_forward_hook(lambda mod, a, o: o * 5), lambda: m(L.G(A))),
    m(L.leaves[0])))(lin(L)))


def _global(L, kind, hook, **kw):
    """A hook of every module (register_module_<kind>_hook) around a two-layer model's call
    and backward; removed afterwards."""
    register = getattr(L.mod.nn.modules.module, f"register_module_{kind}_hook")
    handle = register(hook, **kw)
    try:
        x = L.G(A)
        out = L.mod.nn.Sequential(lin(L), lin(L, 3, 2))(x)
        out.pow(2).sum().backward()
        return out.detach(), x.grad
    finally:
        handle.remove()


case("global hooks", "forward_pre", lambda L: _global(
    L, "forward_pre", lambda m, args: (args[0] * 2,)))
case("global hooks", "forward", lambda L: _global(L, "forward", lambda m, args, out: out.tanh()))
case("global hooks", "forward with_kwargs", lambda L: _global(
    L, "forward", lambda m, args, kwargs, out: out * (1 + len(kwargs)), with_kwargs=True))
case("global hooks", "full_backward", lambda L: _global(
    L, "full_backward", lambda m, gi, go: tuple(None if g is None else g * 3 for g in gi)))
case("global hooks", "full_backward_pre", lambda L: _global(
    L, "full_backward_pre", lambda m, go: (go[0] * 0.5,)))
case("global hooks", "order with own", lambda L: _global_order(L))


def _global_order(L):
    log = []
    m = lin(L)
    m.register_forward_hook(lambda mod, a, o: log.append("own"))
    handle = L.mod.nn.modules.module.register_module_forward_hook(
        lambda mod, a, o: log.append("global"))
    try:
        m(L.T(A))
    finally:
        handle.remove()
    m(L.T(A))
    return log


def _with_handle(handle, fn):
    with handle:
        return fn()


def _order(L, kind):
    m = lin(L)
    log = []
    for tag, prepend in (("a", False), ("b", True), ("c", False), ("d", True)):
        if kind == "pre":
            m.register_forward_pre_hook(lambda mod, args, t=tag: log.append(t),
                                        prepend=prepend)
        else:
            m.register_forward_hook(lambda mod, args, out, t=tag: log.append(t), prepend=prepend)
    m(L.T(A))
    return log


def _always(L, always):
    class Fails(L.mod.nn.Module):
        def forward(self, x):
            raise ValueError("forward failed")

    m, seen = Fails(), []
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=always)
    return raised(lambda: m(L.T(A)), "forward failed"), seen


# --------------------------------------------------------------------------- backward hooks
def _bw(L, module, register, hook, inputs, prepend=None):
    seen = []

    def record(mod, *grads):
        seen.append([[None if g is None else g.detach().clone() for g in gs] for gs in grads])
        return hook(*grads)

    kw = {} if prepend is None else {"prepend": prepend}
    getattr(module, register)(record, **kw)
    out = module(*inputs)
    (out * L.T(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))).sum().backward()
    return seen, [t.grad for t in inputs]


_FULL, _PRE = "register_full_backward_hook", "register_full_backward_pre_hook"
case("full_backward_hook", "sees grads", lambda L: _bw(L, lin(L), _FULL, lambda gi, go: None,
                                                       [L.G(A)]))
case("full_backward_hook", "replaces grad_input", lambda L: _bw(
    L, lin(L), _FULL, lambda gi, go: (gi[0] * 2,), [L.G(A)]))
case("full_backward_hook", "input without grad", lambda L: _bw(
    L, lin(L), _FULL, lambda gi, go: None, [L.T(A)]) + (lin(L).weight.grad,))
case("full_backward_hook", "two inputs", lambda L: _bw(
    L, _fill(L, L.mod.nn.Bilinear(4, 4, 2)), _FULL, lambda gi, go: (gi[0], gi[1] * 0),
    [L.G(A), L.G(B)]))
case("full_backward_hook", "wrong count", lambda L: raised(lambda: _bw(
    L, lin(L), _FULL, lambda gi, go: (gi[0], gi[0]), [L.G(A)])))
case("full_backward_hook", "inplace module", lambda L: raised(lambda: _bw(
    L, L.mod.nn.ReLU(inplace=True), _FULL, lambda gi, go: None, [L.G(A) * 1])))
case("full_backward_hook", "inplace op after", lambda L: raised(lambda: (lambda m: (
    m.register_full_backward_hook(lambda mod, gi, go: None), m(L.G(A)).relu_().sum()
    .backward(), L.leaves[0].grad))(lin(L))))
case("full_backward_hook", "sequential", lambda L: _bw(
    L, L.mod.nn.Sequential(lin(L), L.mod.nn.Tanh(), lin(L, 3, 2)), _FULL,
    lambda gi, go: None, [L.G(A)]))
case("full_backward_hook", "prepend", lambda L: _bw_order(L, _FULL))
case("full_backward_pre_hook", "sees grad_output", lambda L: _bw(
    L, lin(L), _PRE, lambda go: None, [L.G(A)]))
case("full_backward_pre_hook", "replaces grad_output", lambda L: _bw(
    L, lin(L), _PRE, lambda go: (go[0] * 3,), [L.G(A)]))
case("full_backward_pre_hook", "prepend", lambda L: _bw_order(L, _PRE))
case("full_backward_pre_hook", "removed", lambda L: (lambda m, x: (
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 0,)).remove(),
    m(x).sum().backward(), x.grad)[2])(lin(L), L.G(A)))
case("full_backward_hook", "tuple output", lambda L: (lambda m, x, seen: (
    m.register_full_backward_hook(lambda mod, gi, go: seen.append(len(go))),
    sum(o.sum() for o in m(x)).backward(), x.grad, seen)[2:])(_split(L), L.G(A), []))
case("full_backward_hook", "and forward hooks", lambda L: (lambda m, x: (
    m.register_forward_hook(lambda mod, a, out: out * 2),
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,)),
    m(x).sum().backward(), x.grad)[3])(lin(L), L.G(A)))


def _mixed_io(L):
    """A module with a number among its arguments and its outputs, and an output that does
    not require grad: the hooks' tuples have one entry per argument/output."""
    class Mixed(L.mod.nn.Module):
        def forward(self, x, k, y):
            return x * k * y, 3, (x * 0).detach()

    return Mixed()


def _shapes(grads):
    return [None if g is None else tuple(g.shape) for g in grads]


def _mixed_hooks(L, replace):
    m, seen = _mixed_io(L), []
    m.register_full_backward_pre_hook(lambda mod, go: seen.append(_shapes(go)) or (
        (go[0] * 2, None, None) if replace else None))
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((_shapes(gi), _shapes(go))) or (
        (gi[0] * 3, None, gi[2]) if replace else None))
    x = L.G(A)
    m(x, 2.0, L.T(B))[0].sum().backward()
    return seen, x.grad


case("full_backward_hook", "non-tensor arguments and outputs", lambda L: _mixed_hooks(L, False))
case("full_backward_hook", "replacing with non-tensor positions",
     lambda L: _mixed_hooks(L, True))


def _split(L):
    class Split(L.mod.nn.Module):
        def forward(self, x):
            return x.exp(), x * 3

    return Split()


def _bw_order(L, register):
    m, log = lin(L), []
    for tag, prepend in (("a", False), ("b", True), ("c", False)):
        getattr(m, register)(lambda mod, *g, t=tag: log.append(t), prepend=prepend)
    m(L.G(A)).sum().backward()
    return log


# --------------------------------------------------------------------------- autograd.functional
def af(L):
    return L.mod.autograd.functional


def f1(x):
    return (x.sin() * x).matmul(x.t()).tanh()


def f2(x, w):
    return (x.exp().matmul(w)).sin(), x.sum(0) * w.sum()


def fs(x, w):
    return ((x.matmul(w)) ** 2).sum() + x.sin().prod()


W2 = RNG.uniform(-0.5, 0.5, (4, 2))
X2 = RNG.uniform(-0.5, 0.5, (3, 4))
case("jacobian", "single", lambda L: af(L).jacobian(f1, L.T(X2)))
case("jacobian", "tuple in and out", lambda L: af(L).jacobian(f2, (L.T(X2), L.T(W2))))
case("jacobian", "vectorize", lambda L: af(L).jacobian(f2, (L.T(X2), L.T(W2)), vectorize=True))
case("jacobian", "forward-mode", lambda L: af(L).jacobian(
    f1, L.T(X2), vectorize=True, strategy="forward-mode"))
case("jacobian", "forward-mode no vectorize", lambda L: raised(lambda: af(L).jacobian(
    f1, L.T(X2), strategy="forward-mode"), "vectorize=True"))
case("jacobian", "bad strategy", lambda L: raised(lambda: af(L).jacobian(
    f1, L.T(X2), strategy="sideways")))
case("jacobian", "create_graph", lambda L: (lambda j: (j.requires_grad, j))(af(L).jacobian(
    f1, L.G(X2), create_graph=True)))
case("jacobian", "create_graph then grad", lambda L: (lambda x: ag_grad(L, af(L).jacobian(
    f1, x, create_graph=True).pow(2).sum(), x))(L.G(X2)))
case("jacobian", "no create_graph", lambda L: af(L).jacobian(f1, L.G(X2)).requires_grad)
case("jacobian", "strict independent", lambda L: raised(lambda: af(L).jacobian(
    lambda x, w: x * 2, (L.T(X2), L.T(W2)), strict=True), "independent of input 1"))
case("jacobian", "not strict independent", lambda L: af(L).jacobian(
    lambda x, w: x * 2, (L.T(X2), L.T(W2))))
case("jacobian", "strict and vectorize", lambda L: raised(lambda: af(L).jacobian(
    f1, L.T(X2), strict=True, vectorize=True), "not supported together"))
case("jacobian", "scalar output", lambda L: af(L).jacobian(lambda x: x.pow(3).sum(), L.T(X2)))
case("jacobian", "0-d input", lambda L: af(L).jacobian(lambda x: x * L.T(A), L.T(0.7)))
case("jacobian", "non-tensor output", lambda L: raised(lambda: af(L).jacobian(
    lambda x: 3.0, L.T(X2))))
case("jacobian", "list inputs", lambda L: af(L).jacobian(f2, [L.T(X2), L.T(W2)]))
case("hessian", "single", lambda L: af(L).hessian(lambda x: fs(x, L.T(W2)), L.T(X2)))
case("hessian", "tuple", lambda L: af(L).hessian(fs, (L.T(X2), L.T(W2))))
case("hessian", "vectorize", lambda L: af(L).hessian(fs, (L.T(X2), L.T(W2)), vectorize=True))
case("hessian", "forward-mode outer", lambda L: af(L).hessian(
    fs, (L.T(X2), L.T(W2)), vectorize=True, outer_jacobian_strategy="forward-mode"))
case("hessian", "non-scalar", lambda L: raised(lambda: af(L).hessian(f1, L.T(X2)),
                                               "single element"))
case("hessian", "create_graph", lambda L: af(L).hessian(
    lambda x: fs(x, L.T(W2)), L.G(X2), create_graph=True).requires_grad)
case("hessian", "linear function strict", lambda L: raised(lambda: af(L).hessian(
    lambda x: (x * 2).sum(), L.T(X2), strict=True)))
case("hessian", "linear function", lambda L: af(L).hessian(lambda x: (x * 2).sum(), L.T(X2)))
case("vjp", "single", lambda L: af(L).vjp(f1, L.T(X2), L.T(np.ones((3, 3)))))
case("vjp", "tuple", lambda L: af(L).vjp(f2, (L.T(X2), L.T(W2)), (L.T(np.ones((3, 2))),
                                                                    L.T(np.ones(4)))))
case("vjp", "v None scalar", lambda L: af(L).vjp(lambda x: fs(x, L.T(W2)), L.T(X2)))
case("vjp", "v None non-scalar", lambda L: raised(lambda: af(L).vjp(f1, L.T(X2)),
                                                  "v can only be None"))
case("vjp", "v bad shape", lambda L: raised(lambda: af(L).vjp(f1, L.T(X2), L.T(np.ones(3)))))
case("vjp", "v too many", lambda L: raised(lambda: af(L).vjp(
    f1, L.T(X2), (L.T(np.ones((3, 3))), L.T(np.ones((3, 3)))))))
case("vjp", "strict unused", lambda L: raised(lambda: af(L).vjp(
    lambda x, w: x.sum(), (L.T(X2), L.T(W2)), strict=True), "independent of input 1"))
case("vjp", "unused zeros", lambda L: af(L).vjp(lambda x, w: x.sum(), (L.T(X2), L.T(W2))))
case("vjp", "create_graph", lambda L: (lambda r: (r[0].requires_grad, r[1].requires_grad))(
    af(L).vjp(lambda x: fs(x, L.T(W2)), L.G(X2), create_graph=True)))
case("vjp", "no create_graph", lambda L: (lambda r: (r[0].requires_grad, r[1].requires_grad))(
    af(L).vjp(lambda x: fs(x, L.T(W2)), L.G(X2))))
case("jvp", "single", lambda L: af(L).jvp(f1, L.T(X2), L.T(np.cos(X2))))
case("jvp", "tuple", lambda L: af(L).jvp(f2, (L.T(X2), L.T(W2)), (L.T(np.cos(X2)),
                                                                  L.T(np.sin(W2)))))
case("jvp", "v None one element", lambda L: af(L).jvp(lambda x: x.exp() * 3, L.T(np.ones(1))))
case("jvp", "v None", lambda L: raised(lambda: af(L).jvp(f1, L.T(X2)),
                                       "v can only be None"))
case("jvp", "v bad shape", lambda L: raised(lambda: af(L).jvp(f1, L.T(X2), L.T(np.ones(4)))))
case("jvp", "strict unused", lambda L: raised(lambda: af(L).jvp(
    lambda x, w: x * 2, (L.T(X2), L.T(W2)), (L.T(X2), L.T(W2)), strict=True)))
case("hvp", "single", lambda L: af(L).hvp(lambda x: fs(x, L.T(W2)), L.T(X2), L.T(np.cos(X2))))
case("hvp", "tuple", lambda L: af(L).hvp(fs, (L.T(X2), L.T(W2)), (L.T(np.cos(X2)),
                                                                  L.T(np.sin(W2)))))
case("hvp", "non-scalar", lambda L: raised(lambda: af(L).hvp(f1, L.T(X2), L.T(X2)),
                                           "single element"))
case("vhp", "single", lambda L: af(L).vhp(lambda x: fs(x, L.T(W2)), L.T(X2), L.T(np.cos(X2))))
case("vhp", "tuple", lambda L: af(L).vhp(fs, (L.T(X2), L.T(W2)), (L.T(np.cos(X2)),
                                                                  L.T(np.sin(W2)))))
case("vhp", "v None", lambda L: raised(lambda: af(L).vhp(lambda x: fs(x, L.T(W2)), L.T(X2)),
                                       "v can only be None"))


def ag_grad(L, out, x):
    return L.mod.autograd.grad(out, x)


# --------------------------------------------------------------------------- forward-mode AD
def _tangent(a):
    return np.cos(np.arange(a.size) * 0.7 + 0.3).reshape(a.shape)


def _fwd(L, fn, *arrays):
    """fn(mod, *duals)'s primals and tangents, the duals made of arrays with fixed tangents
    (an int64 array goes in as a plain tensor)."""
    fw = L.mod.autograd.forward_ad
    with fw.dual_level():
        args = [L.T(a) if a.dtype.kind != "f" else fw.make_dual(L.T(a), L.T(_tangent(a)))
                for a in arrays]
        out = fn(L.mod, *args)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return [tuple(fw.unpack_dual(o)) for o in outs if o.is_floating_point()]


def fwd(what, fn, *arrays):
    case("forward_ad", what, lambda L: _fwd(L, fn, *arrays))


IDX = np.array([2, 0, 1])
for _name in ("sin", "cos", "tan", "exp", "tanh", "sigmoid", "relu", "abs", "neg", "erf",
              "expm1", "atan", "sinh", "asinh", "square", "trunc", "frac", "sign"):
    fwd(_name, (lambda n: lambda m, x: getattr(m, n)(x))(_name), A)
for _name in ("log", "sqrt", "rsqrt", "reciprocal", "log1p", "log2", "lgamma", "digamma"):
    fwd(_name, (lambda n: lambda m, x: getattr(m, n)(x))(_name), P)
for _name in ("gelu", "silu", "softplus", "elu", "leaky_relu", "hardtanh", "mish", "logsigmoid"):
    fwd(_name, (lambda n: lambda m, x: getattr(m.nn.functional, n)(x))(_name), A)
fwd("pow scalar", lambda m, x: x ** 3, A)
fwd("pow tensor", lambda m, x, y: x ** y, P, B)
fwd("mul", lambda m, x, y: x * y, A, B)
fwd("div", lambda m, x, y: x / y, A, P)
fwd("add alpha", lambda m, x, y: m.add(x, y, alpha=2.5), A, B)
fwd("sub broadcast", lambda m, x, y: x - y, A, B[0])
fwd("atan2", lambda m, x, y: m.atan2(x, y), A, B)
fwd("clamp", lambda m, x: x.clamp(-0.5, 0.7), A)
fwd("where", lambda m, x, y: m.where(x > 0, x, y), A, B)
fwd("maximum", lambda m, x, y: m.maximum(x, y), A, B)
fwd("lerp", lambda m, x, y: m.lerp(x, y, 0.3), A, B)
fwd("addcmul", lambda m, x, y: m.addcmul(x, x, y, value=0.5), A, B)
fwd("sum", lambda m, x: x.sum(), A)
fwd("sum dim", lambda m, x: x.sum(1, keepdim=True), A)
fwd("mean", lambda m, x: x.mean(0), A)
fwd("prod", lambda m, x: x.prod(1), P)
fwd("amax", lambda m, x: x.amax(1), A)
fwd("max dim", lambda m, x: x.max(1), A)
fwd("std", lambda m, x: x.std(1), A)
fwd("var correction 0", lambda m, x: x.var(0, correction=0), A)
fwd("norm", lambda m, x: x.norm(), A)
fwd("vector_norm 3", lambda m, x: m.linalg.vector_norm(x, 3, dim=1), A)
fwd("logsumexp", lambda m, x: x.logsumexp(1), A)
fwd("cumsum", lambda m, x: x.cumsum(1), A)
fwd("cumprod", lambda m, x: x.cumprod(0), P)
fwd("matmul", lambda m, x, w: x.matmul(w), A, M)
fwd("mm", lambda m, x, w: m.mm(x, w), A, M)
fwd("bmm", lambda m, x, y: m.bmm(x, y), IMG[:, 0], IMG[:, 1])
fwd("linear", lambda m, x, w, b: m.nn.functional.linear(x, w, b), A, M.T, M[:, 0])
fwd("einsum", lambda m, x, y: m.einsum("ij,kj->ik", x, y), A, B)
fwd("outer", lambda m, x, y: m.outer(x, y), A[0], B[1])
fwd("transpose", lambda m, x: x.t(), A)
fwd("reshape", lambda m, x: x.reshape(2, 6), A)
fwd("permute", lambda m, x: x.permute(2, 0, 1), IMG[0])
fwd("expand", lambda m, x: x[:1].expand(3, 4), A)
fwd("narrow", lambda m, x: x.narrow(1, 1, 2), A)
fwd("flip", lambda m, x: x.flip(0), A)
fwd("cat", lambda m, x, y: m.cat([x, y], 1), A, B)
fwd("stack", lambda m, x, y: m.stack([x, y]), A, B)
fwd("split", lambda m, x: x.split(2, 1), A)
fwd("index", lambda m, x: x[1:, ::2], A)
fwd("index_select", lambda m, x, i: x.index_select(0, i), A, IDX)
fwd("gather", lambda m, x, i: x.gather(1, i), A, np.array([[0, 1], [3, 2], [1, 1]]))
fwd("advanced index", lambda m, x, i: x[i], A, IDX)
fwd("softmax", lambda m, x: x.softmax(1), A)
fwd("log_softmax", lambda m, x: x.log_softmax(0), A)
fwd("conv2d", lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1), IMG, KER)
fwd("conv1d", lambda m, x, w: m.nn.functional.conv1d(x, w), IMG[:, :, 0], KER[:, :, 0])
fwd("layer_norm", lambda m, x, w: m.nn.functional.layer_norm(x, (4,), w), A, B[0])
fwd("batch_norm train", lambda m, x: m.nn.functional.batch_norm(
    x, None, None, training=True), IMG)
fwd("group_norm", lambda m, x: m.nn.functional.group_norm(x, 1), IMG)
fwd("normalize", lambda m, x: m.nn.functional.normalize(x, dim=1), A)
fwd("mse_loss", lambda m, x, y: m.nn.functional.mse_loss(x, y), A, B)
fwd("cross_entropy", lambda m, x, t: m.nn.functional.cross_entropy(x, t), A, IDX)
fwd("max_pool2d", lambda m, x: m.nn.functional.max_pool2d(x, 2), IMG)
fwd("avg_pool2d", lambda m, x: m.nn.functional.avg_pool2d(x, 2), IMG)
fwd("dropout eval", lambda m, x: m.nn.functional.dropout(x, 0.5, training=False), A)
fwd("in-place", lambda m, x: (x * 1).mul_(2).exp_(), A)
fwd("view then in-place", lambda m, x: (lambda h: (h[0].mul_(3), h)[1])(x * 1), A)
fwd("int output", lambda m, x: (x.argmax(1).double(), x * 2), A)
fwd("det", lambda m, x: m.linalg.det(x), A[:, :3])
fwd("inv", lambda m, x: m.linalg.inv(x + 3 * m.eye(3, dtype=x.dtype)), A[:, :3])
case("forward_ad", "setitem into a plain tensor", lambda L: _fw_write(L, lambda t, d: t.__setitem__(
    0, d[1])))
case("forward_ad", "setitem with a mask", lambda L: _fw_write(L, lambda t, d: t.__setitem__(
    d > 0, d[d > 0] * 2)))
case("forward_ad", "copy_ into a plain tensor", lambda L: _fw_write(L, lambda t, d: t.copy_(d)))
case("forward_ad", "in-place on the dual's view", lambda L: _fw_write(
    L, lambda t, d: d[0].mul_(2), show="dual"))
case("forward_ad", "complex abs", lambda L: _fwd(L, lambda m, x: (x * (1 + 1j)).abs(), A))
case("forward_ad", "no tangent", lambda L: _plain(L))
case("forward_ad", "outside dual_level", lambda L: raised(
    lambda: L.mod.autograd.forward_ad.make_dual(L.T(A), L.T(B)), "dual level"))
case("forward_ad", "tangent bad shape", lambda L: raised(lambda: _dual(L, A, np.ones(4))))
case("forward_ad", "tangent bad dtype", lambda L: raised(lambda: _dual(L, A, B.astype(
    np.float32))))
case("forward_ad", "integer primal", lambda L: raised(lambda: _dual(L, np.arange(3),
                                                                    np.arange(3))))
case("forward_ad", "unpack after level", lambda L: (lambda d: (
    L.mod.autograd.forward_ad.unpack_dual(d).tangent))(_dual(L, A, B)))
case("forward_ad", "nested levels", lambda L: raised(lambda: _nested(L)))
case("forward_ad", "with reverse grad", lambda L: _fwd_rev(L))


def _fw_write(L, write, show="target"):
    """A write involving a dual tensor d (tangent B) into t (zeros): t's or d's (primal,
    tangent) afterwards."""
    fw = L.mod.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(L.T(A), L.T(B))
        t = L.T(np.zeros((3, 4)))
        write(t, d)
        return tuple(fw.unpack_dual(t if show == "target" else d))


def _dual(L, a, t):
    fw = L.mod.autograd.forward_ad
    with fw.dual_level():
        return fw.make_dual(L.T(a), L.T(t))


def _plain(L):
    fw = L.mod.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(L.T(A), L.T(B))
        u = fw.unpack_dual(L.T(P) * 2)
        return u.tangent, tuple(fw.unpack_dual(d * L.T(P)))


def _nested(L):
    fw = L.mod.autograd.forward_ad
    with fw.dual_level():
        with fw.dual_level():
            pass


def _fwd_rev(L):
    """A tangent computed from a leaf that requires grad, then differentiated in reverse."""
    fw = L.mod.autograd.forward_ad
    x = L.G(A)
    with fw.dual_level():
        d = fw.make_dual(x, L.T(_tangent(A)))
        tangent = fw.unpack_dual((d.sin() * d).sum()).tangent
    return L.mod.autograd.grad(tangent, x)


_HOOK_VIEWS = (
    "torch's full backward hooks hand the module views of its inputs and outputs made by a "
    "BackwardHookFunction and then refuse an in-place write to them (inside the module or "
    "after it); ember wraps them without views, so the in-place op runs and the hooks see the "
    "same gradients as without it")
# (group, case) -> why the difference is deliberate (docs/DEVIATIONS.md, autograd)
KNOWN: dict = {
    ("full_backward_hook", "inplace module"): _HOOK_VIEWS,
    ("full_backward_hook", "inplace op after"): _HOOK_VIEWS,
    ("jacobian", "list inputs"):
        "ember's autograd.functional takes a list of input tensors as the tuple it means; "
        "torch raises TypeError",
    ("hessian", "forward-mode outer"):
        "torch's forward-over-reverse hessian returns nested lists of tensors that require "
        "grad (without create_graph); ember computes it in reverse mode and returns the "
        "documented nested tuples, detached: the same values",
    ("forward_ad", "in-place on the dual's view"):
        "a tangent is a tensor of its own, not a view of its base's: an in-place write through "
        "a view updates the base's tangent but not other views' (make_dual's result is itself "
        "a view of the primal); torch's tangents alias as their tensors do",
    ("forward_ad", "complex abs"):
        "forward-mode AD through complex ops is not supported (docs/DEVIATIONS.md, complex); "
        "ember's tangent is None",
    ("forward_ad", "with reverse grad"):
        "ember's tangents are detached (forward AD records no forward-over-reverse graph, "
        "NOTE in ember/autograd/forward_ad.py), so a tangent cannot be differentiated in "
        "reverse mode; torch.func.jvp of torch.func.grad (reverse-over-forward) is supported",
}

# (group, case) -> found by this sweep and not yet decided: fix ember and drop the entry, or
# move it to KNOWN with a reason. Each still diverges (checked like KNOWN).
PENDING: set = set()

IDS = [f"{group}-{what}" for group, what, _ in CASES]


@pytest.mark.parametrize("group,what,fn", CASES, ids=IDS)
def test_autograd_hooks_against_torch(group, what, fn):
    assert_verdict(divergence(fn), (group, what), f"{group} ({what})", KNOWN, PENDING)
