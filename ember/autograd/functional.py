"""Higher-level autograd: vjp, jvp, jacobian, hessian, hvp, vhp (torch.autograd.functional).

Every function takes ``inputs`` as a Tensor or a tuple of Tensors and gives its results in the
same form (a tuple for a tuple). ``strict=True`` refuses an output that does not depend on an
input (else its gradient is zeros); ``create_graph=True`` keeps the results differentiable.
Forward-mode strategies are computed in reverse mode (same values; docs/DEVIATIONS.md).
"""
from __future__ import annotations

import numpy as np


def _tup(x):
    from .._tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x), isinstance(x, Tensor)


def _check_tensors(values, what, fn_name):
    from .._tensor import Tensor
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            raise TypeError(f"The {what} given to {fn_name} must be either a Tensor or a tuple "
                            f"of Tensors but the given {what} has an element of invalid type "
                            f"{type(v).__name__} at index {i}.")


def _prep(inputs, create_graph, fn_name):
    """The inputs as fresh leaves (or, with create_graph, views keeping their graph)."""
    ins, single = _tup(inputs)
    _check_tensors(ins, "inputs", fn_name)
    ins = tuple(i.detach().requires_grad_(True) if not create_graph or not i.requires_grad
                else i.view_as(i) for i in ins)
    return ins, single


def _outputs(out, fn_name):
    from .._tensor import Tensor
    if not isinstance(out, (Tensor, tuple, list)):
        raise TypeError(f"The outputs of the user-provided function given to {fn_name} must be "
                        "either a Tensor or a tuple of Tensors but the given outputs of the "
                        f"user-provided function has type {type(out)}.")
    outs, single = _tup(out)
    _check_tensors(outs, "outputs of the user-provided function", fn_name)
    return outs, single


def _vectors(v, like, fn_name, of):
    """v as a tuple matching ``like`` (the outputs for vjp, the inputs for jvp/vhp/hvp); None
    only for a single one-element tensor, then a 1."""
    from .._tensor import _make
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if the {of} a single Tensor "
                               "with a single element.")
        return (_make(np.ones(like[0]._data.shape, like[0]._data.dtype)),)
    vs, _ = _tup(v)
    _check_tensors(vs, "v", fn_name)
    if len(vs) != len(like):
        raise RuntimeError(f"{fn_name}: v has {len(vs)} tensors, expected {len(like)} (one per "
                           f"{'output' if 'returns' in of else 'input'}).")
    for vv, x in zip(vs, like):
        if tuple(vv.shape) != tuple(x.shape):
            raise RuntimeError(f"v has invalid size: should be {x.shape} but got {vv.shape}.")
    return vs


def _fill(gs, like, strict, what):
    """gs with zeros for the Nones; under strict a None raises ``what(i)``'s message."""
    from .._tensor import _make
    res = []
    for i, (g, x) in enumerate(zip(gs, like)):
        if g is None:
            if strict:
                raise RuntimeError(what(i))
            g = _make(np.zeros(x._data.shape, x._data.dtype))
        res.append(g)
    return tuple(res)


def _independent(i):
    return (f"The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.")


def _grad(outs, ins, vs, create_graph):
    """autograd.grad that gives None for every input when no output requires grad."""
    from . import grad
    pairs = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
    if not pairs:
        return (None,) * len(ins)
    return grad([o for o, _ in pairs], ins, [v for _, v in pairs], retain_graph=True,
                create_graph=create_graph, allow_unused=True)


def _detached(values, create_graph):
    return values if create_graph else tuple(t.detach() for t in values)


def _shaped(values, single):
    return values[0] if single else values


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    from .grad_mode import enable_grad
    ins, single = _prep(inputs, create_graph, "vjp")
    with enable_grad():
        outs, out_single = _outputs(func(*ins), "vjp")
        vs = _vectors(v, outs, "vjp", "user-provided function returns")
        gs = _fill(_grad(outs, ins, vs, create_graph), ins, strict, _independent)
    return (_shaped(_detached(outs, create_graph), out_single),
            _shaped(_detached(gs, create_graph), single))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), through the double-vjp trick (two reverse passes)."""
    from .._tensor import _make
    from .grad_mode import enable_grad
    ins, single = _prep(inputs, create_graph, "jvp")
    vs = _vectors(v, ins, "jvp", "input to the user-provided function is")
    with enable_grad():
        outs, out_single = _outputs(func(*ins), "jvp")
        # u is a dummy cotangent: J^T u is linear in u, so d/du <J^T u, v> = J v
        us = tuple(_make(np.zeros(o._data.shape, o._data.dtype)).requires_grad_() for o in outs)
        gs = _grad(outs, ins, us, True)
        if strict:
            _fill(gs, ins, True, _independent)
        pairs = [(g, vv) for g, vv in zip(gs, vs) if g is not None and g.requires_grad]
        res = (None,) * len(outs)
        if pairs:
            from . import grad
            res = grad([g for g, _ in pairs], us, [vv for _, vv in pairs],
                       create_graph=create_graph, allow_unused=True)
        res = _fill(res, outs, False, _independent)
    return (_shaped(_detached(outs, create_graph), out_single),
            _shaped(_detached(res, create_graph), out_single))


def _check_strategy(name, strategy, vectorize):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(f'{name} must be either "forward-mode" or "reverse-mode"; got '
                             f"{strategy!r}.")
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian is only implemented for `vectorize=True`.")


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian d func(inputs) / d inputs, row by row with reverse mode (``vectorize`` and
    ``strategy`` give the same values)."""
    from .._tensor import _make
    from ..ops.join import stack
    from .grad_mode import enable_grad
    _check_strategy("Expected strategy", strategy, vectorize)
    if strict and vectorize:
        raise RuntimeError("jacobian: `strict=True` and `vectorized=True` are not supported "
                           "together. Please either set `strict=False` or `vectorize=False`.")
    ins, single = _prep(inputs, create_graph, "jacobian")
    with enable_grad():
        outs, out_single = _outputs(func(*ins), "jacobian")
        result = []
        for j, o in enumerate(outs):
            flat = o.reshape(-1)
            rows = [[] for _ in ins]
            for r in range(flat.numel()):
                gs = _grad((flat[r],), ins, (None,), create_graph)
                gs = _fill(gs, ins, strict, lambda i, j=j: (
                    f"Output {j} of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."))
                for k, g in enumerate(gs):
                    rows[k].append(g)
            per_in = []
            for k, x in enumerate(ins):
                shape = tuple(o.shape) + tuple(x.shape)
                jk = (stack(rows[k]).reshape(shape) if rows[k]
                      else _make(np.zeros(shape, x._data.dtype)))
                per_in.append(jk if create_graph else jk.detach())
            result.append(_shaped(tuple(per_in), single))
    return _shaped(tuple(result), out_single)


def _scalar_output(func, fn_name):
    """func, checked to return a single one-element tensor."""
    from .._tensor import Tensor

    def checked(*xs):
        out = func(*xs)
        if not isinstance(out, Tensor):
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                               "contain a single element")
        return out

    return checked


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    from . import grad
    _check_strategy("Expected strategy", outer_jacobian_strategy, vectorize)
    single = _tup(inputs)[1]
    scalar = _scalar_output(func, "hessian")

    def gradient(*xs):
        gs = grad(scalar(*xs).reshape(()), xs, create_graph=True, allow_unused=True)
        gs = _fill(gs, xs, strict, _independent)
        if strict:
            _fill([g if g.requires_grad else None for g in gs], xs, True, lambda i: (
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode."))
        return _shaped(gs, single)

    return jacobian(gradient, inputs, create_graph=create_graph, vectorize=vectorize)


def _second_order(func, inputs, v, create_graph, strict, fn_name):
    """(func(inputs), v^T H) for vhp and hvp (H is symmetric, so both are the same)."""
    from .grad_mode import enable_grad
    ins, single = _prep(inputs, create_graph, fn_name)
    vs = _vectors(v, ins, fn_name, "input to the user-provided function is")
    with enable_grad():
        out = _scalar_output(func, fn_name)(*ins)
        gs = _fill(_grad((out,), ins, (None,), True), ins, strict, _independent)
        res = _fill(_grad(gs, ins, vs, create_graph), ins, strict, lambda i: (
            f"The jacobian of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode."))
    return (out if create_graph else out.detach()), _shaped(_detached(res, create_graph), single)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    return _second_order(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): the same as vhp for a twice continuously differentiable func."""
    return _second_order(func, inputs, v, create_graph, strict, "hvp")
