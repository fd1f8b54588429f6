"""Samples and references for the special functions of ember/ops/special.py that take more
than one tensor: polygamma (an integer order first), mvlgamma (a dimension p), igamma/igammac
(differentiable in x only)."""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sp

from ._generators import POSITIVE, S, _scalar, _stepped, _t, _tt, binary_samples


def polygamma_samples(rng, dtype):
    x = [_t(rng, (2, 3), dtype, POSITIVE), _t(rng, (), dtype, POSITIVE),
         _t(rng, (0,), dtype, POSITIVE), _tt(rng, (2, 3), dtype, POSITIVE),
         _stepped(rng, 3, dtype, POSITIVE)]
    names = ["2-d", "0-d", "empty", "transposed", "stepped slice"]
    return [S(n, (t,), {}, f"n={n} {name}") for n in (0, 1, 2) for t, name in zip(x, names)]


def polygamma_ref(n, x):
    return sp.polygamma(n, x)


# mvlgamma needs every element > (p - 1) / 2
_ABOVE_HALF = (1.2, 3.0)


def mvlgamma_samples(rng, dtype):
    x = [_t(rng, (2, 3), dtype, _ABOVE_HALF), _t(rng, (), dtype, _ABOVE_HALF),
         _t(rng, (0,), dtype, _ABOVE_HALF), _tt(rng, (2, 3), dtype, _ABOVE_HALF)]
    return [S(t, (), {"p": p}, f"p={p} {name}") for p in (1, 3)
            for t, name in zip(x, ["2-d", "0-d", "empty", "transposed"])]


def mvlgamma_ref(x, p):
    return sum(sp.gammaln(x - i / 2) for i in range(p)) + p * (p - 1) / 4 * math.log(math.pi)


def igamma_samples(rng, dtype):
    return binary_samples(rng, dtype, POSITIVE, POSITIVE)


def igamma_grad_samples(rng, dtype):
    """a as a Python number: the derivative in a is not implemented (as in torch), so only x
    is differentiated."""
    a = _scalar(rng, dtype, POSITIVE)
    return [S(a, (_t(rng, (2, 3), dtype, POSITIVE),), {}, "2-d x"),
            S(a, (_t(rng, (), dtype, POSITIVE),), {}, "0-d x"),
            S(a, (_tt(rng, (2, 3), dtype, POSITIVE),), {}, "transposed x")]


def igamma_ref(upper):
    f = sp.gammaincc if upper else sp.gammainc

    def ref(a, x):
        return f(np.asarray(a, np.float64), x)
    return ref
