"""gradcheck / gradgradcheck: compare analytical gradients with central finite differences.

NOTE [Complex gradcheck]: a complex input or output counts as two real ones, its real parts
then its imaginary parts, so both Jacobians are real matrices. A column of the numerical one
perturbs Re x_j (or Im x_j) by eps; a row of the analytical one is the gradient of the real
loss Re o_r (seed 1) or Im o_r (seed 1j), which under torch's convention (the gradient of a
complex input is dL/dRe + i dL/dIm) gives the row's entries as the real and imaginary parts
of the input's gradient.
"""
from __future__ import annotations

import numpy as np


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients disagree."""


def _as_tuple(x):
    from .._tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _outputs(func, inputs):
    from .._tensor import Tensor
    out = func(*inputs)
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor))


def _parts(a):
    """The real numbers of an array: itself, or its real then imaginary parts (flattened)."""
    if a.dtype.kind == "c":
        return np.concatenate([a.real.reshape(-1), a.imag.reshape(-1)]).astype(np.float64)
    return a.astype(np.float64).reshape(-1)


def _real_size(t):
    return t.numel() * (2 if t._data.dtype.kind == "c" else 1)


def _numerical(func, inputs, eps):
    """J[k][i]: d out_k / d in_i as (out_numel, in_numel) arrays, by central differences."""
    from .._tensor import Tensor
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    # no no_grad() here: func may itself differentiate (gradgradcheck)
    outs = _outputs(func, inputs)
    jac = [[np.zeros((_real_size(o), _real_size(inputs[i]))) for i in diff] for o in outs]
    for col, i in enumerate(diff):
        x = inputs[i]._data
        flat = x.reshape(-1) if x.flags.c_contiguous else None
        if flat is None:
            raise GradcheckError("gradcheck: inputs must be contiguous")
        steps = (eps, eps * 1j) if x.dtype.kind == "c" else (eps,)
        for part, step in enumerate(steps):  # see NOTE [Complex gradcheck]
            for j in range(flat.size):
                orig = flat[j]
                flat[j] = orig + step
                plus = [_parts(o._data) for o in _outputs(func, inputs)]
                flat[j] = orig - step
                minus = [_parts(o._data) for o in _outputs(func, inputs)]
                flat[j] = orig
                for k in range(len(outs)):
                    jac[k][col][:, part * flat.size + j] = (plus[k] - minus[k]) / (2 * eps)
    return jac, diff, outs


def _analytical(func, inputs, diff):
    from .._tensor import _make
    from . import grad as autograd_grad
    outs = _outputs(func, inputs)
    jac = [[np.zeros((_real_size(o), _real_size(inputs[i]))) for i in diff] for o in outs]
    for k, o in enumerate(outs):
        if not o.requires_grad or not (o.is_floating_point() or o.is_complex()):
            continue
        seeds = (1, 1j) if o.is_complex() else (1,)
        for part, value in enumerate(seeds):  # see NOTE [Complex gradcheck]
            for r in range(o.numel()):
                seed = np.zeros(o._data.size, o._data.dtype)
                seed[r] = value
                gs = autograd_grad(o, [inputs[i] for i in diff],
                                   _make(seed.reshape(o._data.shape)),
                                   retain_graph=True, allow_unused=True)
                for col, g in enumerate(gs):
                    if g is not None:
                        row = _parts(g._data)
                        if inputs[diff[col]].is_complex() and not g.is_complex():
                            row = np.concatenate([row, np.zeros_like(row)])
                        jac[k][col][part * o.numel() + r, :] = row
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, fast_mode=False, masked=None, check_forward_ad=False,
              check_backward_ad=True):
    """True if func's gradients match finite differences for the float64 inputs given."""
    from .._tensor import Tensor
    inputs = _as_tuple(inputs)
    if not any(isinstance(t, Tensor) and t.requires_grad for t in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.requires_grad and \
                t._data.dtype not in (np.float64, np.complex128):
            import warnings
            warnings.warn(f"gradcheck: input #{i} requires gradient and is not a double "
                          f"precision floating point or complex tensor (it is {t.dtype}); "
                          "finite differences will be inaccurate. Use .double().", stacklevel=2)
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("gradcheck: Expected at least one of check_forward_ad or "
                             "check_backward_ad to be True")
    num, diff, outs = _numerical(func, inputs, eps)
    # a Function with only a jvp() is checked with check_backward_ad=False: no backward pass
    ana = _analytical(func, inputs, diff) if check_backward_ad else None
    for k in range(len(outs) if check_backward_ad else 0):
        for col, i in enumerate(diff):
            a, n = ana[k][col], num[k][col]
            if not np.allclose(a, n, atol=atol, rtol=rtol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n")
    if check_forward_ad:
        try:
            _check_forward(func, inputs, diff, num, atol, rtol)
        except GradcheckError:
            if raise_exception:
                raise
            return False
    return True


def _check_forward(func, inputs, diff, num, atol, rtol):
    from .._tensor import _make
    from . import forward_ad as fwAD
    for col, i in enumerate(diff):
        x = inputs[i]
        for j in range(x.numel()):
            t = np.zeros(x._data.size, x._data.dtype)
            t[j] = 1
            with fwAD.dual_level():
                args = list(inputs)
                args[i] = fwAD.make_dual(x.detach(), _make(t.reshape(x._data.shape)))
                outs = _outputs(func, args)
                for k, o in enumerate(outs):
                    tan = fwAD.unpack_dual(o).tangent
                    got = np.zeros(o.numel()) if tan is None else tan._data.reshape(-1)
                    if not np.allclose(got, num[k][col][:, j], atol=atol, rtol=rtol):
                        raise GradcheckError(f"forward AD mismatch for output {k} wrt input {i}"
                                             f" column {j}: {got} vs {num[k][col][:, j]}")


def _random_like(rng, a):
    r = np.asarray(rng.standard_normal(a.shape))  # an array even when 0-d (perturbed in place)
    if a.dtype.kind == "c":
        r = r + 1j * rng.standard_normal(a.shape)
    return np.asarray(r, a.dtype)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, **kw):
    """gradcheck of the function that maps inputs to their vector-Jacobian products."""
    from .._tensor import Tensor, _make
    from . import grad as autograd_grad
    inputs = _as_tuple(inputs)
    outs = [o for o in _outputs(func, inputs) if o.requires_grad]  # skip integer outputs
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_make(_random_like(rng, o._data)).requires_grad_() for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]

    def first_grads(*args):
        ins, gos = args[:n_in], args[n_in:]
        o = [x for x in _outputs(func, ins) if x.requires_grad]
        gs = autograd_grad(o, [ins[i] for i in diff], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
