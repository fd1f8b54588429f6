"""Sample generators for the op database: small tensors (at most 6 elements, so gradcheck
stays cheap) covering 2-D, 0-d, empty, broadcast and non-contiguous inputs per op family.

A generator is ``samples(rng, dtype) -> list[SampleInput]``; the table mapping op names to
generators and references is ``OP_TABLE`` in ember/testing/_op_table.py.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _dtype as D
from .._tensor import _make

# input domains: (low, high), or (low, high, "signed") for magnitudes in [low, high] with a
# random sign (keeps divisors away from zero)
REAL = (-2.0, 2.0)
POSITIVE = (0.5, 2.0)
UNIT = (-0.9, 0.9)
OPEN_UNIT = (0.1, 0.9)
GE1 = (1.2, 3.0)
NONZERO = (0.5, 2.0, "signed")
SHIFT = (0.0, 3.0)


@dataclass
class SampleInput:
    """One call ``op(input, *args, **kwargs)``; ``input`` may be a list of tensors (cat)."""

    input: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    name: str = ""

    def __repr__(self):
        return f"SampleInput({self.name!r})"


@dataclass
class ErrorInput:
    """A call that must raise ``error_type`` with a message matching ``match``."""

    sample: SampleInput
    error_type: type
    match: str


# ---------------------------------------------------------------------------------------------
# tensors


def _array(rng, shape, dtype, domain=REAL):
    if dtype is D.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    signed = len(domain) > 2
    if dtype.is_floating_point:
        v = np.asarray(rng.uniform(domain[0], domain[1], shape))
        if signed:
            v = v * rng.choice([-1.0, 1.0], shape)
        return v.astype(dtype.np)
    lo = 1 if domain[0] >= 0 or signed else -5
    if domain == SHIFT:
        lo = 0
    hi = 3 if domain == SHIFT else 5
    v = np.asarray(rng.integers(lo, hi + 1, shape))
    if signed and dtype.is_signed:
        v = v * rng.choice([-1, 1], shape)
    if not dtype.is_signed:
        v = np.abs(v)
    return v.astype(dtype.np)


def _t(rng, shape, dtype, domain=REAL):
    """A contiguous tensor."""
    return _make(np.array(_array(rng, shape, dtype, domain), order="C"))


def _tt(rng, shape, dtype, domain=REAL):
    """A non-contiguous tensor of ``shape``: the transpose of a contiguous one."""
    return _make(_array(rng, tuple(reversed(shape)), dtype, domain).T)


def _stepped(rng, n, dtype, domain=REAL):
    """A non-contiguous 1-D tensor: every other element of a buffer."""
    return _make(_array(rng, (2 * n,), dtype, domain)[::2])


def _scalar(rng, dtype, domain=REAL):
    """A Python number of the dtype's kind."""
    v = _array(rng, (), dtype, domain).item()
    return round(float(v), 3) if dtype.is_floating_point else v


def _index(values):
    return _make(np.asarray(values, np.int64))


def _mask(values):
    return _make(np.asarray(values, np.bool_))


S = SampleInput


# ---------------------------------------------------------------------------------------------
# generators by family


def unary_samples(rng, dtype, domain=REAL, **kwargs):
    """2-D, 0-d, empty, transposed and stepped-slice inputs."""
    x = functools.partial(_t, rng, dtype=dtype, domain=domain)
    return [S(x((2, 3)), (), dict(kwargs), "2-d"),
            S(x(()), (), dict(kwargs), "0-d"),
            S(x((0,)), (), dict(kwargs), "empty"),
            S(_tt(rng, (2, 3), dtype, domain), (), dict(kwargs), "transposed"),
            S(_stepped(rng, 3, dtype, domain), (), dict(kwargs), "stepped slice")]


def binary_samples(rng, dtype, domain=REAL, other_domain=NONZERO, scalar=True, **kwargs):
    """Same shape, broadcasting (either side, both), 0-d, empty, transposed, Python scalar."""
    a = functools.partial(_t, rng, dtype=dtype, domain=domain)
    b = functools.partial(_t, rng, dtype=dtype, domain=other_domain)
    out = [S(a((2, 3)), (b((2, 3)),), dict(kwargs), "same shape"),
           S(a((2, 3)), (b((3,)),), dict(kwargs), "broadcast other"),
           S(a((2, 1)), (b((1, 3)),), dict(kwargs), "broadcast both"),
           S(a((3,)), (b((2, 3)),), dict(kwargs), "broadcast input"),
           S(a(()), (b((2, 3)),), dict(kwargs), "0-d input"),
           S(a((2, 3)), (b(()),), dict(kwargs), "0-d other"),
           S(a(()), (b(()),), dict(kwargs), "both 0-d"),
           S(a((0, 3)), (b((3,)),), dict(kwargs), "empty"),
           S(_tt(rng, (2, 3), dtype, domain), (b((2, 3)),), dict(kwargs), "transposed input")]
    if scalar:
        out.append(S(a((2, 3)), (_scalar(rng, dtype, other_domain),), dict(kwargs),
                     "python scalar other"))
    return out


def binary_errors(name):
    """Shapes that do not broadcast: RuntimeError naming the op and both shapes."""
    def errors(rng, dtype):
        s = S(_t(rng, (2, 3), dtype), (_t(rng, (4,), dtype, NONZERO),), {}, "no broadcast")
        return [ErrorInput(s, RuntimeError, rf"{name}.*\[2, 3\].*\[4\]")]
    return errors


def reduction_samples(rng, dtype, domain=REAL, full=True, empty_full=True, multi_dim=True,
                      dim_arg=True, **kwargs):
    """Full reductions and reductions over dim 0 / -1 (keepdim) / several dims."""
    x = functools.partial(_t, rng, dtype=dtype, domain=domain)
    out = []
    if full:
        out += [S(x((2, 3)), (), dict(kwargs), "all"), S(x(()), (), dict(kwargs), "0-d all")]
        if empty_full:
            out.append(S(x((0, 3)), (), dict(kwargs), "empty all"))
    if dim_arg:
        out += [S(x((2, 3)), (0,), dict(kwargs), "dim 0"),
                S(x((2, 3)), (-1,), dict(kwargs, keepdim=True), "dim -1 keepdim"),
                S(x(()), (0,), dict(kwargs), "0-d dim 0"),
                S(x((0, 3)), (1,), dict(kwargs), "empty dim 1"),
                S(_tt(rng, (2, 3), dtype, domain), (1,), dict(kwargs), "transposed dim 1")]
        if multi_dim:
            out.append(S(x((1, 2, 3)), ((0, 2),), dict(kwargs), "dims (0, 2)"))
    return out


def cumulative_samples(rng, dtype, domain=REAL):
    x = functools.partial(_t, rng, dtype=dtype, domain=domain)
    return [S(x((2, 3)), (0,), {}, "dim 0"), S(x((2, 3)), (-1,), {}, "dim -1"),
            S(x(()), (0,), {}, "0-d"), S(x((0, 3)), (1,), {}, "empty"),
            S(_tt(rng, (2, 3), dtype, domain), (1,), {}, "transposed")]


def max_min_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (), {}, "all"), S(x(()), (), {}, "0-d all"),
            S(x((2, 3)), (1,), {}, "dim 1"), S(x((2, 3)), (0,), {"keepdim": True}, "keepdim"),
            S(x(()), (0,), {}, "0-d dim 0"), S(x((0, 3)), (1,), {}, "empty dim 1"),
            S(_tt(rng, (2, 3), dtype), (-1,), {}, "transposed"),
            S(x((2, 3)), (x((3,)),), {}, "elementwise other")]


def var_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (), {}, "all"), S(x((2, 3)), (1,), {}, "dim 1"),
            S(x((2, 3)), (0,), {"correction": 0, "keepdim": True}, "correction 0"),
            S(x((1, 2, 3)), ((0, 2),), {"unbiased": False}, "dims unbiased=False"),
            S(x(()), (), {"correction": 0}, "0-d"), S(x((0, 3)), (1,), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (-1,), {}, "transposed")]


def matmul_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (x((3, 2)),), {}, "2-d @ 2-d"),
            S(x((3,)), (x((3, 2)),), {}, "1-d @ 2-d"),
            S(x((2, 3)), (x((3,)),), {}, "2-d @ 1-d"),
            S(x((3,)), (x((3,)),), {}, "1-d @ 1-d"),
            S(x((2, 1, 3)), (x((3, 2)),), {}, "batched @ 2-d"),
            S(x((2, 1, 3)), (x((1, 3, 1)),), {}, "broadcast batches"),
            S(x((0, 3)), (x((3, 2)),), {}, "empty rows"),
            S(x((2, 0)), (x((0, 2)),), {}, "empty inner"),
            S(_tt(rng, (2, 3), dtype), (_tt(rng, (3, 2), dtype),), {}, "transposed")]


def matmul_errors(name):
    def errors(rng, dtype):
        f32, f64 = D.float32, D.float64
        out = [ErrorInput(S(_t(rng, (2, 3), dtype), (_t(rng, (4, 2), dtype),)), RuntimeError,
                          rf"{name}.*2x3.*4x2|{name}.*\(2, 3\).*\(4, 2\)")]
        if name == "matmul":
            out.append(ErrorInput(S(_t(rng, (2, 3), f32), (_t(rng, (3, 2), f64),)),
                                  RuntimeError, "matmul.*float32.*float64"))
            out.append(ErrorInput(S(_t(rng, (), dtype), (_t(rng, (3,), dtype),)),
                                  RuntimeError, "matmul.*0D"))
        return out
    return errors


def mm_errors(rng, dtype):
    return [ErrorInput(S(_t(rng, (2, 3), dtype), (_t(rng, (4, 2), dtype),)), RuntimeError,
                       r"mm.*2x3.*4x2"),
            ErrorInput(S(_t(rng, (3,), dtype), (_t(rng, (3, 2), dtype),)), RuntimeError,
                       r"mm.*2-D.*\[3\]")]


def bmm_errors(rng, dtype):
    return [ErrorInput(S(_t(rng, (2, 1, 3), dtype), (_t(rng, (3, 3, 1), dtype),)),
                       RuntimeError, r"bmm.*batches.*2.*3"),
            ErrorInput(S(_t(rng, (2, 3), dtype), (_t(rng, (3, 2), dtype),)), RuntimeError,
                       r"bmm.*3D.*\[2, 3\]")]


def cat_errors(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [ErrorInput(S([x((2, 3)), x((2, 2))], (0,)), RuntimeError,
                       r"cat.*Sizes of tensors must match.*\[2, 3\].*\[2, 2\]"),
            ErrorInput(S([x((2, 3)), x((3,))], ()), RuntimeError,
                       r"cat.*same number of dimensions.*\[2, 3\].*\[3\]"),
            ErrorInput(S([x((2, 3))], (2,)), IndexError, r"cat.*Dimension out of range")]


# ---------------------------------------------------------------------------------------------
# op-specific samples


def nan_inf_samples(rng, dtype):
    """Inputs holding NaN, +-inf, zeros and ordinary values."""
    if not dtype.is_floating_point:
        special = np.array([[0, 1, 0], [1, 1, 0]]).astype(dtype.np)
    else:
        special = np.array([[np.nan, np.inf, -np.inf], [0.0, -1.5, 2.0]]).astype(dtype.np)
    return [S(_make(special), (), {}, "nan and inf"), S(_t(rng, (), dtype), (), {}, "0-d"),
            S(_t(rng, (0,), dtype), (), {}, "empty"),
            S(_make(special.T.copy().T), (), {}, "transposed")]


def signbit_samples(rng, dtype):
    signed = np.array([[-0.0, np.inf, -np.inf], [0.0, -1.5, 2.0]]).astype(dtype.np)
    return [S(_make(signed), (), {}, "signed zeros and inf"),
            S(_t(rng, (), dtype), (), {}, "0-d"), S(_t(rng, (0,), dtype), (), {}, "empty"),
            S(_make(signed.T.copy().T), (), {}, "transposed")]


def nan_to_num_samples(rng, dtype):
    out = nan_inf_samples(rng, dtype)
    out.append(S(out[0].input, (), {"nan": 1.0, "posinf": 3.0, "neginf": -3.0}, "replacements"))
    return out


def nan_samples(fn):
    """Reduction samples with one NaN planted (nansum, nanmean)."""
    def samples(rng, dtype):
        out = reduction_samples(rng, dtype)
        for s in out:
            if s.input.numel() > 1:
                s.input._data.reshape(-1)[1] = np.nan
        return out
    return samples


def clamp_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    lo, hi = (-0.5, 0.5) if dtype.is_floating_point else (1, 3) if dtype is D.uint8 else (-1, 2)
    out = unary_samples(rng, dtype, min=lo, max=hi)
    out += [S(x((2, 3)), (), {"min": lo}, "min only"), S(x((2, 3)), (), {"max": hi}, "max only")]
    if dtype.is_floating_point:
        out.append(S(x((2, 3)), (), {"min": x((3,)) - 1, "max": x((2, 1)) + 1},
                     "tensor bounds"))
        lo_t = _make(np.array([0.5, -1.0, 1.5]).astype(dtype.np))
        out.append(S(x((2, 3)), (), {"min": lo_t, "max": _make(np.array([[1.0], [0.0]]).astype(
            dtype.np))}, "tensor bounds, min > max somewhere"))
    return out


def clamp_errors(rng, dtype):
    return [ErrorInput(S(_t(rng, (2,), dtype)), RuntimeError, "clamp.*min.*max")]


def lerp_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (x((2, 3)), 0.3), {}, "scalar weight"),
            S(x((2, 3)), (x((3,)), x((2, 1))), {}, "tensor weight"),
            S(x(()), (x(()), 0.7), {}, "0-d"), S(x((0, 3)), (x((3,)), 0.5), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (x((2, 3)), 0.5), {}, "transposed")]


def addc_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    nz = functools.partial(_t, rng, dtype=dtype, domain=NONZERO)
    return [S(x((2, 3)), (x((2, 3)), nz((2, 3))), {}, "same shape"),
            S(x((2, 3)), (x((3,)), nz((2, 1))), {"value": 0.5}, "broadcast value"),
            S(x(()), (x(()), nz(())), {}, "0-d"), S(x((0, 3)), (x((3,)), nz((3,))), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (x((2, 3)), nz((2, 3))), {}, "transposed")]


def round_samples(rng, dtype):
    return unary_samples(rng, dtype) + [S(_t(rng, (2, 3), dtype), (), {"decimals": 1},
                                          "decimals")]


def pow_samples(rng, dtype):
    out = binary_samples(rng, dtype, POSITIVE, REAL)
    out.append(S(_t(rng, (2, 3), dtype, REAL), (2,), {}, "integer exponent"))
    return out


def div_samples(rng, dtype):
    out = binary_samples(rng, dtype)
    a, b = _t(rng, (2, 3), dtype), _t(rng, (2, 3), dtype, NONZERO)
    out += [S(a, (b,), {"rounding_mode": "floor"}, "floor"),
            S(a, (b,), {"rounding_mode": "trunc"}, "trunc")]
    return out


def gelu_samples(rng, dtype):
    return unary_samples(rng, dtype) + [S(_t(rng, (2, 3), dtype), (), {"approximate": "tanh"},
                                          "tanh")]


def logit_samples(rng, dtype):
    return unary_samples(rng, dtype, OPEN_UNIT) + [
        S(_t(rng, (2, 3), dtype, OPEN_UNIT), (0.2,), {}, "eps")]


def prod_samples(rng, dtype):
    out = reduction_samples(rng, dtype, multi_dim=False)
    if dtype is not D.bool_:
        z = _t(rng, (2, 3), dtype)
        z._data[0, 1] = 0
        out += [S(z, (), {}, "with zero"), S(z, (1,), {}, "with zero dim 1")]
    return out


def logsumexp_samples(rng, dtype):
    return [s for s in reduction_samples(rng, dtype, full=False)]


def amax_samples(rng, dtype):
    return [s for s in reduction_samples(rng, dtype, empty_full=False)]


def arg_samples(rng, dtype):
    return [s for s in reduction_samples(rng, dtype, empty_full=False, multi_dim=False)
            if s.name != "empty dim 1"] + [S(_t(rng, (2, 3), dtype), (), {"keepdim": True},
                                             "all keepdim")]


def count_nonzero_samples(rng, dtype):
    z = _t(rng, (2, 3), dtype)
    z._data[1, 1] = 0
    return [S(z, (), {}, "all"), S(z, (1,), {}, "dim 1"), S(z, ((0, 1),), {}, "dims"),
            S(_t(rng, (), dtype), (), {}, "0-d"), S(_t(rng, (0, 3), dtype), (), {}, "empty"),
            S(_make(z._data.T.copy().T), (1,), {}, "transposed")]


def all_any_samples(rng, dtype):
    return [s for s in reduction_samples(rng, dtype) if s.name != "dims (0, 2)"]


def float_power_samples(rng, dtype):
    return binary_samples(rng, dtype, POSITIVE, REAL)
