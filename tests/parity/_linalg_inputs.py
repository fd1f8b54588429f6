"""What the linalg sweeps (test_linalg_sweep.py, test_linalg_decomp_sweep.py) share: makers of
well-conditioned, positive-definite and triangular operands in each dtype and layout, and the
divergence check that also wants ember's error message to name the function."""
from __future__ import annotations

import numpy as np
from _sweep_results import Lib, divergence

import ember


def _rand(shape, seed, dtype="float64"):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, size=shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.uniform(-1, 1, size=shape)
    return a


def _square(shape, seed, dtype="float64"):
    """A well-conditioned square matrix (diagonally dominant), so float32 results agree."""
    a = _rand(shape, seed, dtype)
    return a + 3 * np.eye(shape[-1])


def _spd(shape, seed, dtype="float64"):
    """A Hermitian positive-definite matrix."""
    a = _rand(shape, seed, dtype)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])


def _tri(shape, seed, upper, dtype="float64"):
    a = _square(shape, seed, dtype)
    return np.triu(a) if upper else np.tril(a)


def T(make, dtype="float64"):
    """A maker of a tensor from a numpy maker (`make(dtype)` gives the array)."""
    return lambda L: L.T(make(dtype), dtype)


def NC(make, dtype="float64"):
    """A maker of a non-contiguous tensor (stored transposed) with make's values."""
    return lambda L: L.T(np.swapaxes(make(dtype), -1, -2).copy(), dtype).mT


def G(make):
    """A maker of a float64 leaf (its gradient is compared)."""
    return lambda L: L.G(make("float64"))


def Gc(make):
    """A maker of a complex128 tensor built from two float64 leaves (their gradients are
    compared)."""
    def run(L):
        a = make("complex128")
        return L.G(a.real) + 1j * L.G(a.imag)
    return run


FLOATS = ("float32", "float64", "complex64", "complex128")
REAL = ("float32", "float64")


def sq(shape, seed=0):
    return lambda dt: _square(shape, seed, dt)


def spd(shape, seed=0):
    return lambda dt: _spd(shape, seed, dt)


def rnd(shape, seed=0):
    return lambda dt: _rand(shape, seed, dt)


def tri(shape, upper, seed=0):
    return lambda dt: _tri(shape, seed, upper, dt)


def const(a):
    return lambda dt: np.asarray(a, dtype=dt if not dt.startswith("complex") else dt)


SINGULAR = const([[1.0, 2.0], [2.0, 4.0]])
NOT_SPD = const([[1.0, 2.0], [2.0, 1.0]])

# the inputs every square-matrix function runs on: (label, maker of the operand)
LAYOUTS = (("3x3", sq((3, 3))), ("batched", sq((2, 3, 3), 1)), ("0x0", sq((0, 0))),
           ("zero batch", sq((0, 3, 3))), ("1x1", sq((1, 1), 2)), ("4-d batch", sq((2, 1, 2, 2),
                                                                                  3)))


def over_layouts(case, group, call, dtypes=FLOATS, make=None, nc=True):
    """case(...) for call(L, A) on every layout and dtype, on a non-contiguous operand, and on
    float64 (and complex) leaves."""
    for label, maker in (LAYOUTS if make is None else make):
        for dtype in dtypes:
            case(group, f"{label} / {dtype}", (lambda mk, dt: lambda L: call(L, T(mk, dt)(L)))(
                maker, dtype))
    first = (LAYOUTS if make is None else make)[1][1]
    if nc:
        case(group, "non-contiguous", lambda L: call(L, NC(first)(L)))
    case(group, "grad", lambda L: call(L, G(first)(L)))
    if "complex128" in dtypes:
        case(group, "complex grad", lambda L: call(L, Gc(first)(L)))


def backward(L, out):
    """The gradients of out's sum, inside the case (so an error of backward is compared)."""
    outs = out if isinstance(out, (tuple, list)) else [out]
    total = sum(o.sum() for o in outs if o.requires_grad)
    return L.mod.autograd.grad(total, L.leaves)


def _raised(mod, fn):
    try:
        with np.errstate(all="ignore"):
            fn(Lib(mod))
    except Exception as exc:
        return str(exc)
    return None


def named_divergence(group, torch):
    """divergence(fn), and when both raise, ember's message must name the function (the
    group's first word: 'solve_triangular' in 'solve_triangular upper=True') or the one that
    torch's message names (matrix_power's singular error is inv's)."""
    op = group.split(" ")[0]

    def check(fn):
        found = divergence(fn)
        if found is not None:
            return found
        message = _raised(ember, fn)
        if message is not None and op not in message:
            theirs = _raised(torch, fn).split(":")[0].replace("torch.", "")
            if not theirs or theirs not in message:
                return f"ember's error does not name {op}: {message[:100]}"
        return None
    return check
