"""Random numbers: Generator, the default generator and manual_seed, sampling functions.

Streams come from NumPy's PCG64, so values differ from torch's for the same seed (documented
in docs/DEVIATIONS.md); the same seed gives bitwise-identical results run to run.
"""
from __future__ import annotations

import json

import numpy as np

from .. import _dtype as D
from .. import _meta
from .._backend import device as _device
from .._meta import marks_meta
from .._tensor import Tensor, _make
from .creation import _finish, _size, preserve_layout
from .registry import check_inplace, export, write_into, write_out

DEFAULT_SEED = 67280421310721  # torch's default, so that unseeded runs are reproducible too


class Generator:
    """A random-number stream; pass as ``generator=`` to sampling functions."""

    def __init__(self, device="cpu"):
        self.device = _device(device)  # a device, as torch's (diffusers reads .device.type)
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed)
        self._seed = seed
        self._np = np.random.Generator(np.random.PCG64(seed & ((1 << 64) - 1)))
        return self

    def seed(self):
        s = int(np.random.SeedSequence().entropy) & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The stream state as a uint8 tensor (JSON bytes), for set_state."""
        blob = json.dumps({"seed": self._seed, "state": self._np.bit_generator.state})
        return _make(np.frombuffer(blob.encode(), np.uint8).copy())

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor) or new_state._data.dtype != np.uint8:
            raise TypeError("set_state: expected a uint8 tensor produced by get_state()")
        try:
            d = json.loads(bytes(new_state._data.tobytes()).decode())
            bg = np.random.PCG64()
            bg.state = d["state"]
        except (ValueError, KeyError, TypeError) as e:
            raise RuntimeError(f"set_state: invalid generator state ({e})") from None
        self._seed = d["seed"]
        self._np = np.random.Generator(bg)
        return self

    def __getstate__(self):
        return {"seed": self._seed, "state": self._np.bit_generator.state}

    def __setstate__(self, d):
        self.device = _device("cpu")
        self._seed = d["seed"]
        bg = np.random.PCG64()
        bg.state = d["state"]
        self._np = np.random.Generator(bg)


default_generator = Generator()


def _gen(generator):
    return (generator or default_generator)._np


@export
def manual_seed(seed):
    """Seed the default generator; returns it."""
    return default_generator.manual_seed(seed)


@export
def seed():
    return default_generator.seed()


@export
def initial_seed():
    return default_generator.initial_seed()


@export
def get_rng_state():
    return default_generator.get_state()


@export
def set_rng_state(new_state):
    default_generator.set_state(new_state)


def _out(res, out, name):
    """Honour ``out=``: copy the sample into the given tensor (resizing an empty one)."""
    if out is None:
        return res
    return write_out(out, res, name)


def _float_dt(dtype, complex_ok=False):
    dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
    if not (dt.is_floating_point or (complex_ok and dt.is_complex)):
        # NotImplementedError as torch's kernels (a RuntimeError subclass)
        raise NotImplementedError(f"expected a floating-point dtype for sampling, got {dt}")
    return dt


def _uniform(g, shape, dt):
    if dt.is_complex:  # real and imaginary parts each uniform on [0, 1), as torch
        part = dt.to_real()
        return (_uniform(g, shape, part) + 1j * _uniform(g, shape, part)).astype(dt.np)
    if dt.np in (np.float32, np.float64):
        return g.random(shape, dtype=dt.np)
    return g.random(shape).astype(dt.np)


def _normal(g, shape, dt):
    if dt.is_complex:
        # torch's complex normal has E|z|^2 = 1: each part has variance 1/2
        part = dt.to_real()
        z = _normal(g, shape, part) + 1j * _normal(g, shape, part)
        return (z * np.sqrt(0.5)).astype(dt.np)
    if dt.np in (np.float32, np.float64):
        return g.standard_normal(shape, dtype=dt.np)
    return g.standard_normal(shape).astype(dt.np)


@export
def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False, **size_kw):
    """Uniform samples on [0, 1) (each part, for complex dtypes). `size` is `*size`, one
    sequence/Size, or `size=`."""
    dt = _float_dt(dtype, complex_ok=True)
    shape = _size(size, size_kw, "rand")
    return _out(_finish(_uniform(_gen(generator), shape, dt), requires_grad, device), out,
                "rand")


@export
def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False, **size_kw):
    """Standard normal samples (complex: E|z|^2 = 1). `size` is `*size`, one sequence/Size,
    or `size=`."""
    dt = _float_dt(dtype, complex_ok=True)
    shape = _size(size, size_kw, "randn")
    return _out(_finish(_normal(_gen(generator), shape, dt), requires_grad, device), out,
                "randn")


@export
def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None, pin_memory=False):
    return preserve_layout(input, rand(
        *input.shape, generator=generator, dtype=dtype or input.dtype,
        requires_grad=requires_grad, device=input.device if device is None else device),
        memory_format)


@export
def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None, pin_memory=False):
    return preserve_layout(input, randn(
        *input.shape, generator=generator, dtype=dtype or input.dtype,
        requires_grad=requires_grad, device=input.device if device is None else device),
        memory_format)


@export
def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None,
            layout=None, device=None, requires_grad=False, pin_memory=False):
    """Integers uniform in [low, high); int64 by default."""
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    dt = D.int64 if dtype is None else D.to_dtype(dtype)
    arr = _gen(generator).integers(low, high, size=tuple(size), dtype=np.int64).astype(dt.np)
    return _out(_finish(arr, requires_grad, device), out, "randint")


@export
def randint_like(input, low=0, high=None, *, dtype=None, **kw):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype)


@export
def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of 0..n-1."""
    if n < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n}")
    dt = D.int64 if dtype is None else D.to_dtype(dtype)
    return _out(_finish(_gen(generator).permutation(n).astype(dt.np), requires_grad, device), out,
                "randperm")


@export
@marks_meta
def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           layout=None, device=None, requires_grad=False, pin_memory=False):
    """Normal samples; mean and std may be tensors (broadcast) or floats with ``size``."""
    g = _gen(generator)
    if size is not None:   # the (float, float, size) form: torch reads 0-d tensors as numbers
        mean = mean.item() if isinstance(mean, Tensor) and mean.dim() == 0 else mean
        std = std.item() if isinstance(std, Tensor) and std.dim() == 0 else std
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        if np.any(np.asarray(s) < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        ref = mean if isinstance(mean, Tensor) else std
        z = _normal(g, shape, ref.dtype)
        return _out(_make((m + s * z).astype(ref._data.dtype)), out, "normal")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    dt = _float_dt(dtype)
    return _out(_finish((mean + std * _normal(g, _size((size,) if isinstance(size, int) else
                                                        tuple(size or ())), dt)).astype(dt.np),
                        requires_grad, device), out, "normal")


@export
@marks_meta
def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples with probabilities ``input`` (or the scalar p)."""
    probs = input._data if p is None else np.full(input.shape, p)
    if np.any((probs < 0) | (probs > 1)):
        raise RuntimeError("bernoulli: Expected p_in >= 0 && p_in <= 1 for every probability")
    u = _gen(generator).random(np.shape(probs))
    return _out(_make((u < probs).astype(input._data.dtype)), out, "bernoulli")


@export
@marks_meta
def poisson(input, generator=None):
    return _make(_gen(generator).poisson(input._data).astype(input._data.dtype))


@export
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices sampled from the rows of ``input`` (non-negative weights)."""
    if input._data.dtype.kind not in "fV":  # V: bfloat16's storage
        raise RuntimeError("multinomial only supports floating-point dtypes for input; got "
                           f"{input.dtype}, expected a floating dtype such as torch.float32")
    w = np.asarray(input._data, np.float64)
    if w.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim; got {w.ndim}")
    if input._meta:   # no probabilities to check or draw from: the result's shape, as torch
        return _out(_meta.new(w.shape[:-1] + (num_samples,), np.int64), out, "multinomial")
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise RuntimeError("multinomial: probability tensor contains either `inf`, `nan` or "
                           "element < 0")
    rows = w.reshape(-1, w.shape[-1])
    if not replacement and num_samples > rows.shape[1]:
        raise RuntimeError("multinomial: cannot sample n_sample > prob_dist.size(-1) samples "
                           "without replacement")
    g = _gen(generator)
    out_rows = []
    for r in rows:
        s = r.sum()
        if s <= 0:
            raise RuntimeError("multinomial: invalid multinomial distribution (sum of "
                               "probabilities <= 0)")
        if replacement:
            out_rows.append(g.choice(r.size, num_samples, replace=True, p=r / s))
        else:  # Gumbel top-k: samples without replacement in proportion to weights
            keys = np.where(r > 0, np.log(np.where(r > 0, r, 1)) - np.log(-np.log(
                g.random(r.size))), -np.inf)
            if num_samples > (r > 0).sum():
                raise RuntimeError("multinomial: invalid multinomial distribution (with "
                                   "replacement=False, not enough non-negative category to "
                                   "sample)")
            out_rows.append(np.argsort(-keys, kind="stable")[:num_samples])
    arr = np.array(out_rows, np.int64).reshape(w.shape[:-1] + (num_samples,))
    return _out(_make(arr), out, "multinomial")


# The dtypes each in-place sampler fills, as torch's CPU kernels ("f" floating, "c" complex,
# "i" integer, "b" bool); another dtype raises torch's error: RuntimeError for the two laws
# whose check names the dtype as a user error, NotImplementedError (no kernel) for the rest.
_SAMPLER_KINDS = {"uniform_": ("fc", "floating or complex"),
                  "normal_": ("fc", "floating or complex"), "log_normal_": ("f", "floating"),
                  "exponential_": ("f", "floating"), "cauchy_": ("f", "floating"),
                  "geometric_": ("fi", "floating or integer"),
                  "random_": ("fib", "floating, integer or bool"),
                  "bernoulli_": ("fib", "floating, integer or bool")}


def _check_sampler_dtype(t, name):
    kind = ("b" if t.dtype is D.bool_ else "c" if t.is_complex() else
            "f" if t.is_floating_point() else "i")
    kinds, expected = _SAMPLER_KINDS[name]
    if kind in kinds:
        return
    if name in ("exponential_", "cauchy_"):
        raise RuntimeError(f"{name}: {name[:-1].capitalize()} distribution is a continuous "
                           f"probability distribution. dtype must be a floating point but you "
                           f"specified {t.dtype}")
    raise NotImplementedError(f"{name}: not implemented for {t.dtype}; expected a {expected} "
                              "tensor")


def _sampler_(fn):
    def m(self, *args, generator=None, **kw):
        check_inplace(self, fn.__name__)
        _check_sampler_dtype(self, fn.__name__)
        write_into(self, fn(_gen(generator), self._data.shape, self._data.dtype, *args, **kw)
                   .astype(self._data.dtype), fn.__name__)
        return self

    m.__name__ = fn.__name__
    return m


def uniform_(g, shape, dt, a=0.0, b=1.0):
    return a + (b - a) * g.random(shape)


def normal_(g, shape, dt, mean=0.0, std=1.0):
    return mean + std * g.standard_normal(shape)


def bernoulli_(g, shape, dt, p=0.5):
    pr = p._data if isinstance(p, Tensor) else p
    return g.random(shape) < pr


# without bounds, random_ draws [0, 2**digits] for a floating dtype (every integer there is
# exact), [0, 1] for bool and [0, max] for an integer dtype
_RANDOM_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def random_(g, shape, dt, from_=0, to=None):
    if to is None:
        name = D.from_numpy_dtype(dt).name
        if name in _RANDOM_DIGITS:
            from_, to = 0, 2 ** _RANDOM_DIGITS[name] + 1
        elif name == "bool":
            from_, to = 0, 2
        else:
            from_, to = 0, np.iinfo(dt).max
    return g.integers(from_, to, size=shape)


def exponential_(g, shape, dt, lambd=1.0):
    return g.exponential(1.0 / lambd, shape)


def geometric_(g, shape, dt, p):
    return g.geometric(p, shape)


def log_normal_(g, shape, dt, mean=1.0, std=2.0):
    return g.lognormal(mean, std, shape)


def cauchy_(g, shape, dt, median=0.0, sigma=1.0):
    return median + sigma * g.standard_cauchy(shape)


for _f in (uniform_, normal_, bernoulli_, random_, exponential_, geometric_, log_normal_,
           cauchy_):
    setattr(Tensor, _f.__name__, _sampler_(_f))
