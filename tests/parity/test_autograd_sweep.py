"""A differential sweep of the autograd API against torch 2.13: torch.autograd.grad and
Tensor.backward with every argument (grad_outputs, retain_graph, create_graph to third order,
allow_unused, materialize_grads, is_grads_batched, inputs=), the errors users search for
(non-scalar outputs, a freed graph, in-place modification of a saved tensor or a leaf's view,
requires_grad on integers and non-leaves), .grad of non-leaves, retain_grad, detach/detach_,
gradient accumulation, tensor hooks, saved-tensor hooks, custom autograd.Function in both forms,
torch.utils.checkpoint and the grad-mode switches.

A case is a function of a Lib (``_sweep_results``); it runs on ember and on torch and both must
raise the same exception type or return the same results (float64 leaves' gradients too). Where
a case's point is an error message, it returns ``raised(...)``: the exception's type and which
of the key phrases its text lacks, so ember must keep the phrases torch users search for. Custom
Functions, checkpoint, grad modes and gradcheck are in test_autograd_function_sweep.py; module
hooks, autograd.functional and forward-mode AD in test_autograd_hooks_sweep.py.
Divergences kept on purpose are in KNOWN with a reason (and in docs/DEVIATIONS.md).
"""
from __future__ import annotations

import numpy as np
import pytest
from _autograd_inputs import W, X, Y, ag, mix
from _sweep import assert_verdict, raised, warned
from _sweep_results import divergence

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.parity, pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning")]

CASES: list = []


def case(group, what, fn):
    CASES.append((group, what, fn))


# --------------------------------------------------------------------------- autograd.grad
case("grad", "scalar", lambda L: ag(L).grad(mix(L, L.G(X)).sum(), L.leaves[0]))
case("grad", "inputs as a tensor", lambda L: ag(L).grad((L.G(X) ** 3).sum(), L.leaves[0]))
case("grad", "two inputs", lambda L: ag(L).grad(mix(L, L.G(X), L.G(W)).sum(), L.leaves))
case("grad", "grad_outputs tensor", lambda L: ag(L).grad(
    mix(L, L.G(X)), L.leaves, grad_outputs=L.T(np.arange(6.0))))
case("grad", "grad_outputs list", lambda L: ag(L).grad(
    [L.G(X).exp(), L.leaves[0].sum()], L.leaves, grad_outputs=[L.T(Y), None]))
case("grad", "grad_outputs None for scalar", lambda L: ag(L).grad(
    [L.G(X).sum()], L.leaves, grad_outputs=[None]))
case("grad", "grad_outputs 0-d for scalar", lambda L: ag(L).grad(
    L.G(X).sum() * 2, L.leaves, grad_outputs=L.T(3.0)))
case("grad", "non-scalar no grad_outputs", lambda L: raised(
    lambda: ag(L).grad(L.G(X) * 2, L.leaves), "grad can be implicitly created only for scalar"))
case("grad", "complex output no grad_outputs", lambda L: raised(
    lambda: ag(L).grad((L.G(X) * 1j).sum(), L.leaves), "only for real scalar outputs"))
case("grad", "grad_outputs bad shape", lambda L: raised(
    lambda: ag(L).grad(L.G(X) * 2, L.leaves, L.T(np.ones((4, 3)))), "Mismatch in shape"))
case("grad", "grad_outputs broadcastable", lambda L: raised(
    lambda: ag(L).grad(L.G(X) * 2, L.leaves, L.T(np.ones(4))), "Mismatch in shape"))
case("grad", "grad_outputs float32", lambda L: ag(L).grad(
    L.G(X) * 2, L.leaves, L.T(Y, "float32")))
case("grad", "grad_outputs int", lambda L: raised(
    lambda: ag(L).grad(L.G(X) * 2, L.leaves, L.T(np.ones((3, 4), np.int64)))))
case("grad", "grad_outputs too few", lambda L: raised(
    lambda: ag(L).grad([L.G(X).sum(), L.leaves[0].prod()], L.leaves, [L.T(1.0)])))
case("grad", "unused input", lambda L: raised(
    lambda: ag(L).grad(L.G(X).sum(), [L.leaves[0], L.G(Y)]), "appears to not have been used"))
case("grad", "allow_unused", lambda L: ag(L).grad(L.G(X).sum(), [L.leaves[0], L.G(Y)],
                                                  allow_unused=True))
case("grad", "materialize_grads", lambda L: ag(L).grad(
    L.G(X).sum(), [L.leaves[0], L.G(Y)], allow_unused=True, materialize_grads=True))
case("grad", "materialize_grads alone", lambda L: ag(L).grad(
    L.G(X).sum(), [L.leaves[0], L.G(Y)], materialize_grads=True))
case("grad", "materialize without allow_unused", lambda L: raised(
    lambda: ag(L).grad(L.G(X).sum(), [L.leaves[0], L.G(Y)], allow_unused=False,
                       materialize_grads=True), "allow_unused"))
case("grad", "input does not require grad", lambda L: raised(
    lambda: ag(L).grad(L.G(X).sum(), [L.leaves[0], L.T(Y)]), "does not require grad"))
case("grad", "output does not require grad", lambda L: raised(
    lambda: ag(L).grad(L.T(X).sum(), [L.G(Y)]), "does not require grad and does not have a "
                                                "grad_fn"))
case("grad", "empty inputs", lambda L: raised(lambda: ag(L).grad(L.G(X).sum(), [])))
case("grad", "non-leaf input", lambda L: (lambda h: ag(L).grad((h * h).sum(), h))(
    L.G(X).exp()))
case("grad", "output is the input", lambda L: ag(L).grad(L.G(X), L.leaves, L.T(Y)))
case("grad", "second call freed graph", lambda L: (lambda y: (ag(L).grad(y, L.leaves), raised(
    lambda: ag(L).grad(y, L.leaves), "Trying to backward through the graph a second time",
    "retain_graph=True")))(mix(L, L.G(X)).sum()))
case("grad", "retain_graph", lambda L: (lambda y: (ag(L).grad(y, L.leaves, retain_graph=True),
                                                   ag(L).grad(y, L.leaves)))(
    mix(L, L.G(X)).sum()))
case("grad", "double backward", lambda L: (lambda g: ag(L).grad((g * g).sum(), L.leaves))(
    ag(L).grad(mix(L, L.G(X)).sum(), L.leaves, create_graph=True)[0]))
case("grad", "triple backward", lambda L: (lambda g2: ag(L).grad(g2.sum(), L.leaves))(
    ag(L).grad(ag(L).grad(mix(L, L.G(X), L.G(W)).sum(), L.leaves[0], create_graph=True)[0]
               .pow(2).sum(), L.leaves, create_graph=True)[0]))
case("grad", "double backward, two detaches of one tensor", lambda L: (lambda x: (
    lambda a, b: (lambda ga: ag(L).grad((ga * ga).sum(), [a, b]))(ag(L).grad(
        (a * b * a.exp()).sum(), a, create_graph=True)[0]))(
        x.detach().requires_grad_(), x.detach().requires_grad_()))(L.T(X)))
case("grad", "create_graph result", lambda L: ag(L).grad((L.G(X) ** 3).sum(), L.leaves,
                                                         create_graph=True))
case("grad", "grad of grad_outputs", lambda L: (lambda v: ag(L).grad(
    ag(L).grad(mix(L, L.G(X)), L.leaves, v, create_graph=True)[0].sum(), v))(
    L.G(np.arange(6.0))))
case("grad", "is_grads_batched", lambda L: ag(L).grad(
    mix(L, L.G(X)), L.leaves, L.T(np.eye(6)), is_grads_batched=True))
case("grad", "is_grads_batched two outputs", lambda L: ag(L).grad(
    [L.G(X).exp(), L.leaves[0].sum(0)], L.leaves, [L.T(np.ones((2, 3, 4))),
                                                   L.T(np.ones((2, 4)))], is_grads_batched=True))
case("grad", "is_grads_batched bad shape", lambda L: raised(
    lambda: ag(L).grad(L.G(X) * 2, L.leaves, L.T(np.ones((2, 4, 3))), is_grads_batched=True)))
case("grad", "integer input", lambda L: raised(
    lambda: L.T(np.arange(3)).requires_grad_(), "only Tensors of floating point"))
case("grad", "tensor(requires_grad) integer", lambda L: raised(
    lambda: L.mod.tensor([1, 2], requires_grad=True), "floating point"))
case("grad", "complex output real grad_outputs", lambda L: raised(lambda: ag(L).grad(
    L.G(X) * (1 + 2j), L.leaves, L.T(Y)), "both grad_output and output are required to have "
                                         "the same dtype"))
case("grad", "complex output complex grad_outputs", lambda L: ag(L).grad(
    L.G(X) * (1 + 2j), L.leaves, L.T(X + 1j * Y)))
case("grad", "complex leaf", lambda L: ag(L).grad(
    (L.G(X) * (1 + 2j)).abs().sum(), L.leaves))

# --------------------------------------------------------------------------- Tensor.backward
def _backward(L, *, build=mix, **kw):
    x = L.G(X)
    build(L, x).sum().backward(**kw)
    return x.grad


case("backward", "scalar", lambda L: _backward(L))
case("backward", "non-scalar", lambda L: raised(
    lambda: (L.G(X) * 2).backward(), "grad can be implicitly created only for scalar outputs"))
case("backward", "gradient=", lambda L: (mix(L, L.G(X)).backward(L.T(np.arange(6.0))),
                                         L.leaves[0].grad))
case("backward", "gradient bad shape", lambda L: raised(
    lambda: (L.G(X) * 2).backward(L.T(np.ones(12))), "Mismatch in shape"))
case("backward", "accumulates", lambda L: (_backward(L), mix(L, L.leaves[0]).sum().backward(),
                                           L.leaves[0].grad))
case("backward", "retain_graph twice", lambda L: (lambda y: (
    y.backward(retain_graph=True), y.backward(), L.leaves[0].grad))(mix(L, L.G(X)).sum()))
case("backward", "twice freed", lambda L: (lambda y: (y.backward(), raised(
    y.backward, "Trying to backward through the graph a second time")))(
    mix(L, L.G(X)).sum()))
case("backward", "twice freed saved output", lambda L: (lambda y: (y.backward(), raised(
    y.backward, "Trying to backward through the graph a second time")))(L.G(X).exp().sum()))
case("backward", "twice through a leaf op", lambda L: (lambda y: (y.backward(), y.backward(),
                                                                  L.leaves[0].grad))(
    (L.G(X) + 1).sum()))
case("backward", "inputs=", lambda L: (mix(L, L.G(X), L.G(W)).sum().backward(
    inputs=[L.leaves[1]]), L.leaves[0].grad, L.leaves[1].grad))
case("backward", "inputs= tensor", lambda L: (mix(L, L.G(X), L.G(W)).sum().backward(
    inputs=L.leaves[0]), L.leaves[0].grad, L.leaves[1].grad))
case("backward", "inputs= empty", lambda L: raised(
    lambda: L.G(X).sum().backward(inputs=[]), "cannot be empty"))
case("backward", "inputs= non-leaf", lambda L: (lambda h: (
    (h * h).sum().backward(inputs=[h]), h.grad, L.leaves[0].grad))(L.G(X).exp()))
case("backward", "inputs= unused", lambda L: (L.G(X).sum().backward(inputs=[L.G(Y)]),
                                              L.leaves[1].grad))
case("backward", "create_graph", lambda L: (
    (L.G(X) ** 3).sum().backward(create_graph=True), L.leaves[0].grad.requires_grad,
    L.leaves[0].grad.grad_fn is not None))
case("backward", "create_graph then grad of grad", lambda L: (
    mix(L, L.G(X)).sum().backward(create_graph=True),
    ag(L).grad(L.leaves[0].grad.pow(2).sum(), L.leaves[0])))
case("backward", "autograd.backward tensors", lambda L: (
    ag(L).backward([L.G(X).exp(), L.leaves[0].sum()], [L.T(Y), None]), L.leaves[0].grad))
case("backward", "autograd.backward grad_tensors", lambda L: (
    ag(L).backward(L.G(X) * 3, grad_tensors=L.T(Y)), L.leaves[0].grad))
case("backward", "retained twice then freed", lambda L: raised(lambda: (lambda y: (
    y.backward(retain_graph=True), y.backward(), y.backward()))(L.G(X).exp().sum()),
    "second time"))
case("grad", "inputs duplicated", lambda L: (lambda x: ag(L).grad((x * 3).sum(), [x, x]))(
    L.G(X)))
case("grad", "output listed twice", lambda L: (lambda x: (lambda y: ag(L).grad([y, y], x))(
    (x * 3).sum()))(L.G(X)))
case("backward", "no grad_fn", lambda L: raised(
    lambda: L.T(X).sum().backward(), "does not require grad and does not have a grad_fn"))
case("backward", "complex scalar", lambda L: raised(
    lambda: (L.G(X) * 1j).sum().backward(), "real scalar outputs"))

# --------------------------------------------------------------------------- .grad and leaves
case("leaf", "non-leaf .grad warns", lambda L: warned(
    lambda: (lambda h: (h.sum().backward(), h.grad)[1])(L.G(X) * 2), "not a leaf", "retain_grad"))
case("leaf", "leaf .grad no warning", lambda L: warned(lambda: (lambda x: (
    x.sum().backward(), x.grad)[1])(L.G(X))))
case("leaf", "retain_grad", lambda L: (lambda h: (h.retain_grad(), (h * h).sum().backward(),
                                                  h.grad, h.retains_grad))(L.G(X) * 2))
case("leaf", "retain_grad on leaf", lambda L: (lambda x: (x.retain_grad(), x.sum().backward(),
                                                          x.grad, x.retains_grad))(L.G(X)))
case("leaf", "retain_grad no grad", lambda L: raised(lambda: L.T(X).retain_grad(),
                                                     "doesn't require gradient"))
case("leaf", "retain_grad accumulates", lambda L: (lambda h: (
    h.retain_grad(), h.sum().backward(retain_graph=True), (h * 3).sum().backward(),
    h.grad))(L.G(X) * 2))
case("leaf", "is_leaf", lambda L: (L.G(X).is_leaf, (L.leaves[0] * 2).is_leaf, L.T(X).is_leaf,
                                   L.leaves[0].detach().is_leaf, L.leaves[0][0].is_leaf))
case("leaf", "requires_grad_ False on non-leaf", lambda L: raised(
    lambda: (L.G(X) * 2).requires_grad_(False), "you can only change requires_grad flags of "
                                               "leaf variables"))
case("leaf", "requires_grad_ True on non-leaf", lambda L: (L.G(X) * 2).requires_grad_(True))
case("leaf", "requires_grad = False on non-leaf", lambda L: raised(
    lambda: setattr(L.G(X) * 2, "requires_grad", False), "leaf variables"))
case("leaf", "requires_grad_ on a leaf's view", lambda L: raised(
    lambda: L.G(X)[0].requires_grad_(False)))
case("leaf", "requires_grad_ float32", lambda L: L.T(X, "float32").requires_grad_())
case("leaf", "requires_grad_ bool", lambda L: raised(
    lambda: L.T(X > 0).requires_grad_(), "floating point"))
case("leaf", "grad assign bad shape", lambda L: raised(
    lambda: setattr(L.G(X), "grad", L.T(np.ones(3))), "different size"))
case("leaf", "grad assign bad dtype", lambda L: raised(
    lambda: setattr(L.G(X), "grad", L.T(X, "float32")), "different type"))
case("leaf", "grad assign then accumulate", lambda L: (
    setattr(L.G(X), "grad", L.T(Y)), (L.leaves[0] * 2).sum().backward(), L.leaves[0].grad))
case("leaf", "grad = None then backward", lambda L: (
    (L.G(X) * 2).sum().backward(), setattr(L.leaves[0], "grad", None),
    (L.leaves[0] * 3).sum().backward(), L.leaves[0].grad))
case("leaf", "grad add_ in place", lambda L: (
    (L.G(X) * 2).sum().backward(), L.leaves[0].grad.add_(1), (L.leaves[0] ** 2).sum().backward(),
    L.leaves[0].grad))

# --------------------------------------------------------------------------- detach
case("detach", "shares storage", lambda L: (lambda x: (x.detach().zero_(), x)[1])(L.T(X)))
case("detach", "no grad", lambda L: (lambda d: (d.requires_grad, d.grad_fn is None, d.is_leaf))(
    (L.G(X) * 2).detach()))
case("detach", "backward through", lambda L: raised(
    lambda: (L.G(X) * 2).detach().sum().backward(), "does not require grad"))
case("detach", "detach_ non-leaf", lambda L: (lambda h: (
    h.detach_(), h.requires_grad, h.grad_fn is None, h.is_leaf))(L.G(X) * 2))
case("detach", "detach_ on a view", lambda L: raised(
    lambda: (L.G(X) * 2)[0].detach_(), "Can't detach views in-place"))
case("detach", "detach_ leaf", lambda L: (lambda x: (x.detach_(), x.requires_grad))(L.G(X)))
case("detach", "in-place on detached breaks backward", lambda L: raised(lambda: (
    lambda y: (y.detach().add_(1), y.sum().backward()))(L.G(X).exp()),
    "modified by an inplace operation"))
case("detach", "data assign", lambda L: (lambda x: (
    setattr(x, "data", L.T(Y)), (x * 2).sum().backward(), x.grad, x))(L.G(X)))
case("detach", ".data in place is not recorded", lambda L: (lambda y: (
    y.data.add_(1), y.sum().backward(), L.leaves[0].grad))(L.G(X).exp()))

# --------------------------------------------------------------------------- in-place and versions
_VERSION = ("one of the variables needed for gradient computation has been modified by an "
            "inplace operation")
case("inplace", "saved output modified", lambda L: raised(lambda: (lambda y: (
    y.add_(1), y.sum().backward()))(L.G(X).exp()), _VERSION, "output 0 of Exp",
    "is at version 1; expected version 0"))
case("inplace", "saved input modified", lambda L: raised(lambda: (lambda h: (lambda y: (
    h.mul_(2), y.sum().backward()))(h.sin()))(L.G(X) * 1), _VERSION, "is at version 1",
    "expected version 0"))
case("inplace", "saved twice modified", lambda L: raised(lambda: (lambda h: (lambda y: (
    h.mul_(2), h.add_(1), y.sum().backward()))(h * h))(L.G(X) + 0), _VERSION, "at version 2"))
case("inplace", "unsaved input modified", lambda L: (lambda h: (lambda y: (
    h.mul_(2), y.sum().backward(), L.leaves[0].grad)[1:])(h + 1))(L.G(X) * 1))
case("inplace", "leaf in place", lambda L: raised(
    lambda: L.G(X).add_(1), "a leaf Variable that requires grad is being used in an in-place "
                            "operation"))
case("inplace", "leaf view in place", lambda L: raised(
    lambda: L.G(X)[0].mul_(2), "a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation"))
case("inplace", "leaf in place under no_grad", lambda L: (lambda x: (
    _add_one_without_grad(L, x), x.requires_grad, x.is_leaf,
    (x * 2).sum().backward(), x.grad, x.detach()))(L.G(X)))
case("inplace", "view of non-leaf in place", lambda L: (lambda h: (
    h[0].mul_(2), (h * L.T(Y)).sum().backward(), L.leaves[0].grad)[1:])(L.G(X) * 1))
case("inplace", "base in place after view", lambda L: (lambda h: (lambda v: (
    h.mul_(3), (v * v).sum().backward(), L.leaves[0].grad, v.grad_fn is not None))(h[:, 1]))(
    L.G(X).exp()))
case("inplace", "in place on non-leaf grads", lambda L: (lambda h: (
    h.sigmoid_().mul_(L.T(Y)).sum().backward(), L.leaves[0].grad))(L.G(X) * 2))
case("inplace", "_version counts", lambda L: (lambda t: (
    t._version, t.add_(1)._version, t.mul_(2)._version, t[0].zero_()._version, t._version))(
    L.T(X)))
case("inplace", "in place into a saved tensor's view", lambda L: raised(lambda: (lambda h: (
    lambda y: (h[0].add_(1), y.sum().backward()))(h.exp()))(L.G(X) * 1), _VERSION))
case("inplace", "out= on a leaf", lambda L: raised(
    lambda: L.mod.add(L.G(X), 1, out=L.G(Y))))
case("inplace", "copy_ into a requires-grad view", lambda L: (lambda h: (
    h[1].copy_(L.G(Y)[1]), h.pow(2).sum().backward(), L.leaves[0].grad, L.leaves[1].grad)[1:])(
    L.G(X) * 1))

def _add_one_without_grad(L, x):
    with L.mod.no_grad():
        x.add_(1)


# --------------------------------------------------------------------------- accumulation
def _zero_grad(L, set_to_none):
    lin = L.mod.nn.Linear(4, 2).double()
    lin(L.T(X)).sum().backward()
    opt = L.mod.optim.SGD(lin.parameters(), lr=0.1)
    opt.zero_grad(set_to_none=set_to_none)
    lin.zero_grad(set_to_none=set_to_none)
    return lin.weight.grad, lin.bias.grad


case("accumulate", "zero_grad set_to_none", lambda L: _zero_grad(L, True))
case("accumulate", "zero_grad to zeros", lambda L: _zero_grad(L, False))
case("accumulate", "over three calls", lambda L: (lambda x: [
    (mix(L, x) * k).sum().backward() for k in (1.0, 2.0, -0.5)] and x.grad)(L.G(X)))
case("accumulate", "shared leaf in one graph", lambda L: (lambda x: (
    (x * x + x.exp() + x.matmul(L.T(W)).sum()).sum().backward(), x.grad)[1])(L.G(X)))
case("accumulate", "broadcast leaf", lambda L: (lambda b: (
    (L.T(X) * b).sum().backward(), b.grad)[1])(L.G(np.ones(4))))
case("accumulate", "expanded leaf", lambda L: (lambda b: (
    (b.expand(3, 4) * L.T(X)).sum().backward(), b.grad)[1])(L.G(np.ones((1, 4)))))
case("accumulate", "grad is not the gradient tensor", lambda L: (lambda x: (
    (lambda g: (x.sum().backward(), x.grad is g))(L.T(Y)), x.grad))(L.G(X)))

# --------------------------------------------------------------------------- tensor hooks
def _hooked(L, hook, *, on="leaf"):
    x = L.G(X)
    seen = []
    h = x * 2 if on == "non-leaf" else x

    def record(g):
        seen.append(g.clone())
        return hook(g)

    handle = h.register_hook(record)
    mix(L, h).sum().backward()
    return x.grad, seen, type(handle).__name__ == "RemovableHandle"


case("hook", "returns None", lambda L: _hooked(L, lambda g: None))
case("hook", "doubles", lambda L: _hooked(L, lambda g: g * 2))
case("hook", "non-leaf doubles", lambda L: _hooked(L, lambda g: g * 2, on="non-leaf"))
case("hook", "non-leaf returns None", lambda L: _hooked(L, lambda g: None, on="non-leaf"))
case("hook", "bad shape", lambda L: raised(lambda: _hooked(L, lambda g: g[0]), "hook"))
case("hook", "bad dtype", lambda L: raised(lambda: _hooked(L, lambda g: g.float())))
case("hook", "modifies in place", lambda L: _hooked(L, lambda g: g.mul_(3)))
case("hook", "registered after retain_grad", lambda L: (lambda x: (lambda h: (
    h.retain_grad(), h.register_hook(lambda g: g * 2), (h * h).sum().backward(), h.grad,
    x.grad)[3:])(x * 1))(L.G(X)))
case("hook", "registered before retain_grad", lambda L: (lambda x: (lambda h: (
    h.register_hook(lambda g: g * 2), h.retain_grad(), (h * h).sum().backward(), h.grad,
    x.grad)[3:])(x * 1))(L.G(X)))
case("hook", "no grad", lambda L: raised(lambda: L.T(X).register_hook(lambda g: g),
                                         "cannot register a hook on a tensor that doesn't "
                                         "require gradient"))
case("hook", "removed", lambda L: (lambda x: (lambda hd: (
    hd.remove(), hd.remove(), (x * 3).sum().backward(), x.grad))(
    x.register_hook(lambda g: g * 100)))(L.G(X)))
case("hook", "two hooks in order", lambda L: (lambda x: (
    x.register_hook(lambda g: g + 1), x.register_hook(lambda g: g * 10),
    (x * 3).sum().backward(), x.grad)[-1])(L.G(X)))
case("hook", "hook on output", lambda L: (lambda x: (lambda y: (
    y.register_hook(lambda g: g * 0.5), y.sum().backward(), x.grad)[-1])(x.exp()))(L.G(X)))
case("hook", "used twice runs once", lambda L: (lambda x, n: (
    x.register_hook(lambda g: n.append(1)), (x * x).sum().backward(), x.grad, len(n))[2:])(
    L.G(X), []))
case("hook", "with create_graph", lambda L: (lambda x: (
    x.register_hook(lambda g: g * x), (x ** 2).sum().backward(create_graph=True),
    ag(L).grad(x.grad.sum(), x)))(L.G(X)))
case("hook", "through autograd.grad", lambda L: (lambda x: (
    x.register_hook(lambda g: g * 2), ag(L).grad((x ** 2).sum(), x), x.grad)[1:])(L.G(X)))
case("hook", "post_accumulate sees grad", lambda L: (lambda x, seen: (
    x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone())),
    mix(L, x).sum().backward(), mix(L, x).sum().backward(), seen, x.grad)[3:])(L.G(X), []))
case("hook", "post_accumulate zeroes grad", lambda L: (lambda x: (
    x.register_post_accumulate_grad_hook(lambda p: p.grad.zero_()),
    (x * 2).sum().backward(), x.grad)[-1])(L.G(X)))
case("hook", "post_accumulate return value", lambda L: raised(lambda: (lambda x: (
    x.register_post_accumulate_grad_hook(lambda p: p * 2), (x * 2).sum().backward()))(L.G(X))))
case("hook", "post_accumulate non-leaf", lambda L: raised(
    lambda: (L.G(X) * 2).register_post_accumulate_grad_hook(lambda p: None),
    "post accumulate grad hooks cannot be registered on non-leaf tensors"))
case("hook", "post_accumulate not with autograd.grad", lambda L: (lambda x, n: (
    x.register_post_accumulate_grad_hook(lambda p: n.append(1)), ag(L).grad(x.sum(), x),
    len(n))[1:])(L.G(X), []))
case("hook", "post_accumulate removed", lambda L: (lambda x, n: (
    x.register_post_accumulate_grad_hook(lambda p: n.append(1)).remove(),
    x.sum().backward(), len(n))[-1])(L.G(X), []))


# --------------------------------------------------------------------------- saved tensor hooks
def _saved_hooks(L, unpack_scale=1.0, on_cpu=False):
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t.clone()

    def unpack(t):
        return t * unpack_scale

    x = L.G(X)
    graph = L.mod.autograd.graph
    ctx = graph.save_on_cpu() if on_cpu else graph.saved_tensors_hooks(pack, unpack)
    with ctx:
        y = (x.exp() * x).sum()
    y.backward()
    return x.grad, sorted(packed)


case("saved hooks", "identity", lambda L: _saved_hooks(L))
case("saved hooks", "unpack scales", lambda L: _saved_hooks(L, unpack_scale=2.0))
case("saved hooks", "save_on_cpu", lambda L: _saved_hooks(L, on_cpu=True))
case("saved hooks", "save_on_cpu pin_memory", lambda L: _saved_on_cpu_pinned(L))
case("saved hooks", "nested innermost wins", lambda L: (lambda x, log: (
    _nest(L, x, log), x.grad, log)[1:])(L.G(X), []))
case("saved hooks", "pack returns a non-tensor", lambda L: (lambda x: (
    _pack_any(L, x), x.grad)[1])(L.G(X)))
case("saved hooks", "unpack wrong shape", lambda L: raised(lambda: _bad_unpack(L)))
case("saved hooks", "disable_saved_tensors_hooks", lambda L: raised(
    lambda: _disabled_hooks(L), "saved tensors default hooks are disabled"))


def _saved_on_cpu_pinned(L):
    x = L.G(X)
    with L.mod.autograd.graph.save_on_cpu(pin_memory=True):
        y = (x.sin() * x).sum()
    y.backward()
    return x.grad


def _nest(L, x, log):
    g = L.mod.autograd.graph
    with g.saved_tensors_hooks(lambda t: log.append("outer") or t, lambda t: t):
        with g.saved_tensors_hooks(lambda t: log.append("inner") or t, lambda t: t):
            y = x.sin().sum()
    y.backward()


def _pack_any(L, x):
    store = {}
    g = L.mod.autograd.graph

    def pack(t):
        store[len(store)] = t
        return len(store) - 1

    with g.saved_tensors_hooks(pack, lambda k: store[k]):
        y = (x * x.cos()).sum()
    y.backward()


def _bad_unpack(L):
    x = L.G(X)
    with L.mod.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t[0]):
        y = x.exp().sum()
    y.backward()


def _disabled_hooks(L):
    g = L.mod.autograd.graph
    with g.disable_saved_tensors_hooks("saved tensors default hooks are disabled"):
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass


# (group, case) -> why the difference is deliberate (docs/DEVIATIONS.md, autograd)
KNOWN: dict = {
    ("inplace", "in place on non-leaf grads"):
        "ember's in-place ops run out of place on a snapshot and save that result (NOTE "
        "[In-place autograd] in ember/ops/registry.py), so a later in-place write to the tensor "
        "does not touch what backward reads: ember returns the right gradient where torch "
        "refuses with the version-counter error",
}

# (group, case) -> found by this sweep and not yet decided: fix ember and drop the entry, or
# move it to KNOWN with a reason. Each still diverges (checked like KNOWN).
PENDING: set = set()

IDS = [f"{group}-{what}" for group, what, _ in CASES]


@pytest.mark.parametrize("group,what,fn", CASES, ids=IDS)
def test_autograd_against_torch(group, what, fn):
    assert_verdict(divergence(fn), (group, what), f"{group} ({what})", KNOWN, PENDING)
