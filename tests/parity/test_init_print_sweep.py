"""A differential sweep against torch 2.13 of torch.nn.init and of the text programs print.

nn.init: calculate_gain for every nonlinearity and param, the fans of 1-D..5-D tensors,
mode='fan_in'/'fan_out', every initialiser's law checked by its statistics on large tensors
(each statistic as a ratio to the law's own value, rounded, so a wrong fan or gain shows as a
different ratio while sampling noise does not), the exact structure of orthogonal_, sparse_,
eye_ and dirac_ (groups), generator= determinism, and the errors on too few dims.

Printing: repr/str of tensors with grad_fn=<...> of the common ops, nan/inf, the switch to
scientific notation, set_printoptions (precision, sci_mode, threshold, edgeitems, linewidth,
profile) and its reset, and the repr of nn.Module trees, Parameters, optimizers, dtypes,
devices and Size. (Plain tensor reprs over dtypes, shapes and summarising are in
test_tensor_basics_sweep.py.)

A case is a function of a Lib (``_sweep_results``): both libraries must raise the same exception
type or return the same results; strings compare with "ember." read as "torch.". Divergences
kept on purpose are in KNOWN with a reason (and in docs/DEVIATIONS.md).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from _sweep import assert_verdict, raised, warned
from _sweep_results import divergence

torch = pytest.importorskip("torch")
pytest.importorskip("torch.nn.utils.prune")  # (torch imports it only on request)

pytestmark = [pytest.mark.parity, pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning")]

CASES: list = []


def case(group, what, fn):
    CASES.append((group, what, fn))


def I(L):  # noqa: E743 (nn.init, as programs alias it)
    return L.mod.nn.init


# --------------------------------------------------------------------------- calculate_gain
for _nl in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
            "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"):
    case("calculate_gain", _nl, lambda L, nl=_nl: I(L).calculate_gain(nl))
for _p in (0.2, 0, 1, 3, None):
    case("calculate_gain", f"leaky_relu param {_p!r}", lambda L, p=_p: I(L).calculate_gain(
        "leaky_relu", p))
case("calculate_gain", "leaky_relu bool param", lambda L: raised(
    lambda: I(L).calculate_gain("leaky_relu", True), "negative_slope"))
case("calculate_gain", "leaky_relu str param", lambda L: raised(
    lambda: I(L).calculate_gain("leaky_relu", "0.1"), "negative_slope"))
case("calculate_gain", "relu ignores param", lambda L: I(L).calculate_gain("relu", 5.0))
case("calculate_gain", "unknown", lambda L: raised(
    lambda: I(L).calculate_gain("gelu"), "Unsupported nonlinearity", "gelu"))
case("calculate_gain", "capitalised", lambda L: raised(lambda: I(L).calculate_gain("ReLU")))

# --------------------------------------------------------------------------- fans
for _shape in ((3,), (4, 5), (4, 5, 3), (6, 2, 3, 3), (2, 3, 2, 3, 4), (0, 3), (3, 0, 2), ()):
    case("_calculate_fan_in_and_fan_out", f"{_shape}", lambda L, s=_shape: raised(
        lambda: I(L)._calculate_fan_in_and_fan_out(L.mod.empty(s)), "fewer than 2")
        if len(s) < 2 else I(L)._calculate_fan_in_and_fan_out(L.mod.empty(s)))
    for _mode in ("fan_in", "fan_out"):
        if len(_shape) >= 2:
            case("_calculate_correct_fan", f"{_shape} {_mode}", lambda L, s=_shape, m=_mode: I(
                L)._calculate_correct_fan(L.mod.empty(s), m))
case("_calculate_correct_fan", "bad mode", lambda L: raised(
    lambda: I(L)._calculate_correct_fan(L.mod.empty(3, 4), "fan_avg"), "fan_avg"))

# --------------------------------------------------------------------------- laws
BIG = (512, 256)          # fan_in 256, fan_out 512: 131072 draws
CONV = (64, 32, 3, 3)     # fan_in 288, fan_out 576


def _fans(shape):
    rf = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * rf, shape[0] * rf


def _stats(t, std, lo=None, hi=None):
    """(mean / std, sample std / std) rounded to 0.1: the law's own std gives (0.0, 1.0) for
    any draw of this size; and whether the draws stay inside [lo, hi] (the law's bounds)."""
    a = t.detach().double().numpy()
    slack = 1e-6 * (hi - lo) if lo is not None else 0   # a bound rounded to the draws' dtype
    inside = None if lo is None else bool(a.min() >= lo - slack and a.max() <= hi + slack and
                                          a.max() > hi - 0.01 * (hi - lo))
    return round(a.mean() / std, 1) + 0.0, round(a.std() / std, 1), inside, t.dtype


def _law(fn, shape, std, bounds=None, dtype="float32"):
    def run(L):
        t = L.mod.empty(shape, dtype=getattr(L.mod, dtype))
        out = fn(L, t)
        lo, hi = bounds if bounds else (None, None)
        return out is t, _stats(t, std, lo, hi)
    return run


for _dt in ("float32", "float64", "float16", "bfloat16"):
    case("uniform_", f"a b / {_dt}", _law(lambda L, t: I(L).uniform_(t, -3.0, 1.0), BIG,
                                          4 / math.sqrt(12), (-3.0, 1.0), _dt))
    case("normal_", f"mean std / {_dt}", _law(lambda L, t: I(L).normal_(t, 0.0, 2.5), BIG, 2.5,
                                              dtype=_dt))
case("uniform_", "default", _law(lambda L, t: I(L).uniform_(t), BIG, 1 / math.sqrt(12),
                                 (0.0, 1.0)))
case("normal_", "mean shifts", _law(lambda L, t: (I(L).normal_(t, 5.0, 0.5), t.sub_(5.0))[0],
                                    BIG, 0.5))
_TN = 0.8796      # the std of a standard normal truncated to [-2, 2]
case("trunc_normal_", "default", _law(lambda L, t: I(L).trunc_normal_(t), BIG, _TN, (-2, 2)))
case("trunc_normal_", "std 0.02 a b", _law(lambda L, t: I(L).trunc_normal_(
    t, std=0.02, a=-0.04, b=0.04), BIG, 0.02 * _TN, (-0.04, 0.04)))
case("trunc_normal_", "float64", _law(lambda L, t: I(L).trunc_normal_(t), BIG, _TN, (-2, 2),
                                      "float64"))
case("trunc_normal_", "mean outside bounds", lambda L: (lambda t: (
    float(t.min()) >= 2.0, float(t.max()) <= 3.0))(I(L).trunc_normal_(
        L.mod.empty(1000), mean=-5.0, a=2.0, b=3.0)))
for _shape in (BIG, CONV):
    _fi, _fo = _fans(_shape)
    for _gain in (1.0, 2.0):
        _b = _gain * math.sqrt(6 / (_fi + _fo))
        case("xavier_uniform_", f"{_shape} gain {_gain}", _law(
            lambda L, t, g=_gain: I(L).xavier_uniform_(t, gain=g), _shape, _b / math.sqrt(3),
            (-_b, _b)))
        case("xavier_normal_", f"{_shape} gain {_gain}", _law(
            lambda L, t, g=_gain: I(L).xavier_normal_(t, gain=g), _shape,
            _gain * math.sqrt(2 / (_fi + _fo))))
    for _mode, _fan in (("fan_in", _fi), ("fan_out", _fo)):
        for _nl, _a, _g in (("leaky_relu", 0, math.sqrt(2)), ("leaky_relu", 0.1,
                                                                 math.sqrt(2 / 1.01)),
                            ("relu", 0, math.sqrt(2)), ("linear", 0, 1.0),
                            ("tanh", 0, 5 / 3), ("selu", 0, 0.75), ("sigmoid", 0, 1.0)):
            _std = _g / math.sqrt(_fan)
            _w = f"{_shape} {_mode} {_nl} a={_a}"
            case("kaiming_uniform_", _w, _law(lambda L, t, m=_mode, n=_nl, a=_a: I(
                L).kaiming_uniform_(t, a=a, mode=m, nonlinearity=n), _shape, _std,
                (-_std * math.sqrt(3), _std * math.sqrt(3))))
            case("kaiming_normal_", _w, _law(lambda L, t, m=_mode, n=_nl, a=_a: I(
                L).kaiming_normal_(t, a=a, mode=m, nonlinearity=n), _shape, _std))
case("kaiming_uniform_", "bad mode", lambda L: raised(
    lambda: I(L).kaiming_uniform_(L.mod.empty(3, 4), mode="fan_avg"), "fan_avg"))
case("kaiming_normal_", "bad nonlinearity", lambda L: raised(
    lambda: I(L).kaiming_normal_(L.mod.empty(3, 4), nonlinearity="gelu"), "gelu"))
for _fn in ("xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"):
    case(_fn, "1-d", lambda L, f=_fn: raised(lambda: getattr(I(L), f)(L.mod.empty(5)),
                                             "fewer than 2 dimensions"))
    case(_fn, "zero-element", lambda L, f=_fn: warned(lambda: tuple(getattr(I(L), f)(
        L.mod.empty(0, 3)).shape), "zero-element"))
for _fn, _args in (("constant_", (0.25,)), ("zeros_", ()), ("ones_", ())):
    for _dt in ("float32", "int64", "bool", "float16"):
        case(_fn, f"values / {_dt}", lambda L, f=_fn, a=_args, d=_dt: (lambda t: (
            getattr(I(L), f)(t, *a) is t, t))(L.mod.empty(2, 3, dtype=getattr(L.mod, d))))
case("constant_", "leaf requiring grad", lambda L: (lambda p: (
    I(L).constant_(p, 0.5), p.requires_grad, p.grad_fn is None, p._version > 0))(
        L.mod.nn.Parameter(L.mod.empty(3)))[1:])
case("uniform_", "int tensor", lambda L: raised(lambda: I(L).uniform_(L.mod.empty(
    3, dtype=L.mod.int64))))
case("normal_", "int tensor", lambda L: raised(lambda: I(L).normal_(L.mod.empty(
    3, dtype=L.mod.int64))))
case("init", "records no graph", lambda L: (lambda p: [
    getattr(I(L), f)(p).grad_fn is None for f in ("uniform_", "normal_", "xavier_uniform_",
                                                  "kaiming_normal_", "orthogonal_",
                                                  "trunc_normal_", "zeros_", "eye_")])(
    L.mod.nn.Parameter(L.mod.empty(4, 4))))
for _old in ("uniform", "normal", "constant", "xavier_uniform", "kaiming_normal"):
    case("deprecated", _old, lambda L, o=_old: (lambda t: warned(
        lambda: tuple(getattr(I(L), o)(t, *((0.5,) if o == "constant" else ())).shape),
        "deprecated")[1:])(L.mod.empty(4, 3)))


def _through_view(L, name, *args):
    """An initialiser applied to a view (a transposed weight, one row) writes its base."""
    base = L.mod.zeros(6, 4)
    view = base.t() if name != "zeros_" else base[1]
    if name == "zeros_":
        base.fill_(2.0)
    getattr(I(L), name)(view, *args)
    return bool((base != 0).any()) if name != "zeros_" else base


for _fn, _args in (("xavier_uniform_", ()), ("kaiming_normal_", ()), ("orthogonal_", ()),
                   ("eye_", ()), ("zeros_", ()), ("uniform_", ()), ("normal_", ()),
                   ("trunc_normal_", ()), ("constant_", (0.5,)), ("sparse_", (0.5,))):
    case(_fn, "writes through a view", lambda L, f=_fn, a=_args: _through_view(L, f, *a))
case("eye_", "of a transposed view", lambda L: (lambda b: (I(L).eye_(b.t()), b)[1])(
    L.mod.full((4, 2), 5.0)))
case("dirac_", "of a view", lambda L: (lambda b: (I(L).dirac_(b[:, :2]), b)[1])(
    L.mod.full((2, 4, 3), 5.0)))

for _fn, _args in (("xavier_uniform_", ()), ("xavier_normal_", ()), ("kaiming_uniform_", ()),
                   ("kaiming_normal_", ()), ("orthogonal_", ()), ("eye_", ()), ("zeros_", ()),
                   ("ones_", ()), ("uniform_", ()), ("normal_", ()), ("trunc_normal_", ()),
                   ("constant_", (0.5,)), ("sparse_", (0.5,)), ("dirac_", ())):
    case(_fn, "on the meta device", lambda L, f=_fn, a=_args: (lambda t: (lambda out: (
        out is t, str(out.device), tuple(out.shape)))(getattr(I(L), f)(t, *a)))(
            L.mod.empty((4, 3, 2) if f == "dirac_" else (4, 3), device="meta")))
for _fn, _args in (("xavier_uniform_", ()), ("xavier_normal_", ()), ("kaiming_uniform_", ()),
                   ("kaiming_normal_", ()), ("orthogonal_", ()), ("trunc_normal_", ()),
                   ("sparse_", (0.5,)), ("eye_", ()), ("dirac_", ())):
    for _dt in ("int64", "complex64", "float16"):
        case(_fn, f"dtype / {_dt}", lambda L, f=_fn, a=_args, d=_dt: (lambda t: (lambda r: (
            r if isinstance(r, (str, tuple)) and not hasattr(r, "dtype") else (
                r.dtype, tuple(r.shape), bool((r != 0).any()))))(_try(
                    lambda: getattr(I(L), f)(t, *a))))(
            L.mod.zeros((4, 3, 2) if f == "dirac_" else (4, 3), dtype=getattr(L.mod, d))))


def _try(fn):
    try:
        return fn()
    except Exception as exc:
        return type(exc).__name__


case("skip_init", "meta device", lambda L: (lambda m: (str(m.weight.device), repr(m)))(
    L.mod.nn.utils.skip_init(L.mod.nn.Linear, 3, 2, device="meta")))

# --------------------------------------------------------------------------- generator=
def _gen_pair(fn, shape=(50, 40)):
    def run(L):
        def draw(seed):
            g = L.mod.Generator().manual_seed(seed)
            return fn(L, L.mod.empty(shape), g).clone()
        a, b, c = draw(7), draw(7), draw(8)
        return bool(L.mod.equal(a, b)), bool(L.mod.equal(a, c))
    return run


for _fn, _call in (
        ("uniform_", lambda L, t, g: I(L).uniform_(t, generator=g)),
        ("normal_", lambda L, t, g: I(L).normal_(t, generator=g)),
        ("trunc_normal_", lambda L, t, g: I(L).trunc_normal_(t, generator=g)),
        ("xavier_uniform_", lambda L, t, g: I(L).xavier_uniform_(t, generator=g)),
        ("xavier_normal_", lambda L, t, g: I(L).xavier_normal_(t, generator=g)),
        ("kaiming_uniform_", lambda L, t, g: I(L).kaiming_uniform_(t, generator=g)),
        ("kaiming_normal_", lambda L, t, g: I(L).kaiming_normal_(t, generator=g)),
        ("orthogonal_", lambda L, t, g: I(L).orthogonal_(t, generator=g)),
        ("sparse_", lambda L, t, g: I(L).sparse_(t, 0.5, generator=g))):
    case(_fn, "generator determinism", _gen_pair(_call))
case("uniform_", "generator leaves the global stream", lambda L: (lambda: (
    L.mod.manual_seed(3), I(L).uniform_(L.mod.empty(5), generator=L.mod.Generator()),
    L.mod.rand(2).tolist() == (L.mod.manual_seed(3), L.mod.rand(2).tolist())[1])[2])())


# --------------------------------------------------------------------------- structure
def _ortho(shape, gain=1.0, dtype="float32"):
    def run(L):
        t = I(L).orthogonal_(L.mod.empty(shape, dtype=getattr(L.mod, dtype)), gain=gain)
        m = t.detach().double().reshape(shape[0], -1).numpy()
        small = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
        return tuple(t.shape), t.dtype, bool(np.allclose(small, gain ** 2 * np.eye(len(small)),
                                                         atol=1e-5 * gain ** 2))
    return run


for _shape in ((4, 4), (3, 7), (7, 3), (4, 2, 3), (6, 2, 2, 2), (1, 5), (5, 1)):
    case("orthogonal_", f"{_shape}", _ortho(_shape))
case("orthogonal_", "gain 2", _ortho((5, 5), 2.0))
case("orthogonal_", "float64", _ortho((6, 4), dtype="float64"))
case("orthogonal_", "1-d", lambda L: raised(lambda: I(L).orthogonal_(L.mod.empty(4)),
                                            "at least 2 dimensions"))
case("orthogonal_", "zero-element", lambda L: tuple(I(L).orthogonal_(L.mod.empty(0, 3)).shape))
case("orthogonal_", "uniform over signs", lambda L: (lambda t: (
    round(float(t.mean()) * 5, 0) + 0.0))(L.mod.stack([
        I(L).orthogonal_(L.mod.empty(3, 3)) for _ in range(200)])))


def _sparse(shape, sparsity, std=0.01):
    def run(L):
        t = I(L).sparse_(L.mod.empty(shape), sparsity, std=std)
        a = t.numpy()
        zeros_per_col = sorted(set((a == 0).sum(0).tolist()))
        nz = a[a != 0]
        # (the std's ratio only where enough draws keep it 5+ standard errors off a rounding
        # boundary)
        return zeros_per_col, round(float(nz.std()) / std, 1) if nz.size > 10000 else None
    return run


for _shape, _sp in (((100, 200), 0.1), ((100, 200), 0.5), ((7, 300), 0.33), ((10, 40), 0.0),
                    ((10, 40), 1.0), ((50, 3000), 0.9)):
    case("sparse_", f"{_shape} sparsity {_sp}", _sparse(_shape, _sp))
case("sparse_", "std 1", _sparse((100, 200), 0.5, 1.0))
case("sparse_", "3-d", lambda L: raised(lambda: I(L).sparse_(L.mod.empty(2, 3, 4), 0.5),
                                        "2 dimensions"))
case("sparse_", "1-d", lambda L: raised(lambda: I(L).sparse_(L.mod.empty(4), 0.5)))
for _shape in ((3, 3), (2, 5), (5, 2), (0, 3)):
    case("eye_", f"{_shape}", lambda L, s=_shape: (lambda t: (I(L).eye_(t) is t, t))(
        L.mod.full(s, 7.0)))
case("eye_", "3-d", lambda L: raised(lambda: I(L).eye_(L.mod.empty(2, 2, 2)), "2 dimensions"))
case("eye_", "int", lambda L: I(L).eye_(L.mod.empty(2, 3, dtype=L.mod.int64)))
case("eye_", "requires grad leaf", lambda L: (lambda p: (I(L).eye_(p), p.requires_grad))(
    L.mod.nn.Parameter(L.mod.empty(2, 2))))
for _shape, _groups in (((4, 4, 3), 1), ((6, 4, 3, 3), 1), ((4, 6, 3, 3), 1), ((6, 2, 3, 3), 3),
                        ((8, 4, 3, 3, 3), 2), ((2, 5, 4), 1), ((4, 2, 2, 2), 2),
                        ((6, 3, 5), 2)):
    case("dirac_", f"{_shape} groups {_groups}", lambda L, s=_shape, g=_groups: (lambda t: (
        I(L).dirac_(t, groups=g) is t, t))(L.mod.full(s, 3.0)))
case("dirac_", "2-d", lambda L: raised(lambda: I(L).dirac_(L.mod.empty(3, 3)),
                                       "Only tensors with 3, 4, or 5 dimensions"))
case("dirac_", "6-d", lambda L: raised(lambda: I(L).dirac_(L.mod.empty(2, 2, 2, 2, 2, 2))))
case("dirac_", "groups not dividing", lambda L: raised(
    lambda: I(L).dirac_(L.mod.empty(5, 3, 3), groups=2), "divisible by groups"))

# --------------------------------------------------------------------------- grad_fn in reprs
A = np.array([[0.5, -1.25, 2.0], [3.0, 0.0, -0.75]])


def _g(L):
    return L.mod.tensor(A, requires_grad=True)


_OPS = {
    "add": lambda x: x + 1, "sub": lambda x: x - x, "mul": lambda x: x * 2,
    "div": lambda x: x / 3, "neg": lambda x: -x, "pow": lambda x: x ** 2,
    "matmul": lambda x: x @ x.T, "mm": lambda x: x.mm(x.T), "sum": lambda x: x.sum(),
    "sum dim": lambda x: x.sum(0), "mean": lambda x: x.mean(), "exp": lambda x: x.exp(),
    "log": lambda x: x.abs().add(1).log(), "relu": lambda x: x.relu(),
    "sigmoid": lambda x: x.sigmoid(), "tanh": lambda x: x.tanh(), "view": lambda x: x.view(6),
    "reshape": lambda x: x.reshape(3, 2), "transpose": lambda x: x.transpose(0, 1),
    "t": lambda x: x.t(), "permute": lambda x: x.permute(1, 0), "index": lambda x: x[0],
    "slice": lambda x: x[:, 1:], "unsqueeze": lambda x: x.unsqueeze(0),
    "squeeze": lambda x: x[None].squeeze(0), "clone": lambda x: x.clone(),
    "expand": lambda x: x[:1].expand(3, 3), "max": lambda x: x.max(),
    "softmax": lambda x: x.softmax(-1), "log_softmax": lambda x: x.log_softmax(-1),
    "abs": lambda x: x.abs(), "sqrt": lambda x: x.abs().sqrt(), "clamp": lambda x: x.clamp(0, 1),
    "float": lambda x: x.float(), "double of float": lambda x: x.float().double(),
    "mean dim": lambda x: x.mean(1), "norm": lambda x: x.norm(), "where": lambda x: x.where(
        x > 0, x.new_zeros(())), "contiguous transposed": lambda x: x.t().contiguous(),
    "flatten": lambda x: x.flatten(), "sum keepdim": lambda x: x.sum(1, keepdim=True),
}
for _name, _op in _OPS.items():
    case("grad_fn repr", _name, lambda L, op=_op: repr(op(_g(L))))
case("grad_fn repr", "stack", lambda L: repr(L.mod.stack([_g(L), _g(L)])))
case("grad_fn repr", "cat", lambda L: repr(L.mod.cat([_g(L), _g(L)])))
case("grad_fn repr", "linear", lambda L: repr(L.mod.nn.functional.linear(_g(L), _g(L))))
case("grad_fn repr", "mse_loss", lambda L: repr(L.mod.nn.functional.mse_loss(_g(L), L.mod.zeros(
    2, 3, dtype=L.mod.float64))))
case("grad_fn repr", "cross_entropy", lambda L: repr(L.mod.nn.functional.cross_entropy(
    _g(L), L.mod.tensor([0, 2]))))
case("grad_fn repr", "in-place", lambda L: repr(_g(L).clone().mul_(2)))
case("grad_fn repr", "str equals repr", lambda L: str(_g(L) * 2) == repr(_g(L) * 2))
case("grad_fn repr", "leaf", lambda L: repr(_g(L)))
case("grad_fn repr", "detached", lambda L: repr((_g(L) * 2).detach()))
case("grad_fn repr", "float32 leaf", lambda L: repr(_g(L).float().detach().requires_grad_()))
case("grad_fn repr", "int result of a graph", lambda L: repr(_g(L).argmax()))
def _nograd_repr(L):
    x = _g(L)
    with L.mod.no_grad():
        return repr(x * 2)


case("grad_fn repr", "no_grad", _nograd_repr)


# --------------------------------------------------------------------------- values in reprs
_VALUES = {
    "nan inf": [float("nan"), float("inf"), -float("inf"), 1.5],
    "all nan": [float("nan"), float("nan")], "only inf": [float("inf"), -float("inf")],
    "inf and ints": [float("inf"), 1.0, 2.0], "nan and big": [float("nan"), 1e9],
    "sci switch 1e8 ratio": [1.0, 1e8 + 1], "below switch": [1.0, 9.9e7],
    "tiny 1e-4": [1e-4, 1.0], "tiny 1e-5": [1e-5, 1.0], "all tiny": [1e-5, 2e-5],
    "max 1e8": [1e8], "max 1e9": [1e9, 1.0], "mixed signs sci": [-1e-6, 3e10],
    "zeros": [0.0, 0.0], "negative zero": [-0.0, 1.0], "integral big": [1e15, 2.0],
    "integral 1e16": [1e16, 2.0], "one decimal": [0.1, 0.2], "precision edge": [1.00005, 1.0],
    "large and nan": [float("nan"), 1e-10, 1e10],
}
for _what, _vals in _VALUES.items():
    for _dt in ("float32", "float64", "float16", "bfloat16"):
        case("value repr", f"{_what} / {_dt}", lambda L, v=_vals, d=_dt: repr(L.T(v, d)))
    case("value repr", f"{_what} / complex64", lambda L, v=_vals: repr(L.T(
        np.array(v) + 0.5j, "complex64")))
case("value repr", "0-d nan", lambda L: repr(L.T(float("nan"))))
case("value repr", "0-d inf float16", lambda L: repr(L.T(float("inf"), "float16")))
case("value repr", "0-d sci", lambda L: repr(L.T(1.5e-12)))
case("value repr", "0-d big int", lambda L: repr(L.T(2 ** 62)))
case("value repr", "0-d complex", lambda L: repr(L.T(1 - 2.5j)))
case("value repr", "0-d bool", lambda L: repr(L.T(True)))
case("value repr", "0-d uint8", lambda L: repr(L.T(200, "uint8")))
case("value repr", "0-d bfloat16", lambda L: repr(L.T(3.14159, "bfloat16")))
case("value repr", "int16", lambda L: repr(L.T([-3, 40000 % 32768], "int16")))
case("value repr", "empty int", lambda L: repr(L.T(np.zeros((0,), dtype=np.int64))))
case("value repr", "empty 2-d float64", lambda L: repr(L.T(np.zeros((3, 0)))))
case("value repr", "empty complex", lambda L: repr(L.T(np.zeros(0, dtype=np.complex128))))
case("value repr", "summarised int", lambda L: repr(L.T(np.arange(1500) * 3)))
case("value repr", "summarised bool", lambda L: repr(L.T(np.arange(1200) % 3 == 0)))
case("value repr", "summarised complex", lambda L: repr(L.T(np.arange(1100) * (1 + 1j))))
case("value repr", "summarised with nan", lambda L: repr(L.T(np.where(
    np.arange(1500) % 7 == 0, np.nan, np.arange(1500) / 7))))
case("value repr", "summarised 4-d", lambda L: repr(L.T(np.arange(2 * 3 * 20 * 20.0).reshape(
    2, 3, 20, 20))))
case("value repr", "names of dtypes", lambda L: [repr(L.mod.tensor([1, 2], dtype=getattr(
    L.mod, d))) for d in ("int8", "int16", "int32", "uint8", "float16", "bfloat16", "float64",
                          "complex128", "bool")])


SP = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -3.25]])
case("value repr", "sparse coo", lambda L: repr(L.T(SP).to_sparse()))
case("value repr", "sparse coo int", lambda L: repr(L.T(SP.astype(np.int64)).to_sparse()))
case("value repr", "sparse coo requires_grad", lambda L: repr(
    L.T(SP).to_sparse().requires_grad_()))
case("value repr", "sparse coo uncoalesced", lambda L: repr(L.mod.sparse_coo_tensor(
    L.T([[0, 0], [1, 1]]), L.T([1.0, 2.0]), (2, 2))))
case("value repr", "sparse coo empty", lambda L: repr(L.mod.sparse_coo_tensor(
    L.T(np.zeros((2, 0), np.int64)), L.T(np.zeros(0)), (2, 3))))

# --------------------------------------------------------------------------- set_printoptions
def _opts(fn, **kw):
    def run(L):
        L.mod.set_printoptions(**kw)
        try:
            return fn(L)
        finally:
            L.mod.set_printoptions(profile="default")
            L.mod.set_printoptions(sci_mode=None)
    return run


F7 = [1.23456789, -20.5, 3e-3, 4.0, 5.5, 6.0, 7.0]
M = np.linspace(-3, 3, 60).reshape(6, 10)
for _what, _kw in (("precision 3", {"precision": 3}), ("precision 10", {"precision": 10}),
                   ("sci_mode True", {"sci_mode": True}),
                   ("sci_mode False big", {"sci_mode": False}),
                   ("threshold 10 edgeitems 2", {"threshold": 10, "edgeitems": 2}),
                   ("edgeitems 0", {"threshold": 10, "edgeitems": 0}),
                   ("linewidth 40", {"linewidth": 40}), ("linewidth 200", {"linewidth": 200}),
                   ("profile short", {"profile": "short"}), ("profile full", {"profile": "full"}),
                   ("profile full then precision", {"profile": "full", "precision": 2}),
                   ("threshold inf", {"threshold": math.inf}),
                   ("precision 2 sci", {"precision": 2, "sci_mode": True})):
    case("set_printoptions", f"{_what} floats", _opts(lambda L: repr(L.T(F7)), **_kw))
    case("set_printoptions", f"{_what} matrix", _opts(lambda L: repr(L.T(M)), **_kw))
    case("set_printoptions", f"{_what} big", _opts(lambda L: repr(L.T(np.logspace(
        0, 9, 1500))), **_kw))
    case("set_printoptions", f"{_what} complex", _opts(lambda L: repr(L.T(
        np.array(F7) * (1 - 0.5j))), **_kw))
    case("set_printoptions", f"{_what} grad", _opts(lambda L: repr(L.G(M[:2]) * 2), **_kw))
for _what, _kw in (("precision 2", {"precision": 2}), ("sci_mode True", {"sci_mode": True}),
                   ("sci_mode False", {"sci_mode": False}),
                   ("threshold 5 edgeitems 1", {"threshold": 5, "edgeitems": 1}),
                   ("linewidth 30", {"linewidth": 30})):
    for _dt in ("float16", "bfloat16", "int64", "bool", "int8", "complex128"):
        case("set_printoptions", f"{_what} / {_dt}", _opts(lambda L, d=_dt: repr(L.T(
            np.array([0.001, -3.5, 250.0, 1.0, 7.25, 0.0, 12.0, 9.5]) if d != "bool" else
            np.arange(8) % 3 == 0, d)), **_kw))
        case("set_printoptions", f"{_what} 2-d / {_dt}", _opts(lambda L, d=_dt: repr(L.T(
            np.linspace(-40, 40, 24).reshape(4, 6), d)), **_kw))
case("set_printoptions", "reset by profile default", lambda L: (
    L.mod.set_printoptions(precision=2, threshold=5, edgeitems=1, linewidth=30),
    L.mod.set_printoptions(profile="default"), repr(L.T(np.linspace(0, 1, 1200))))[2])
case("set_printoptions", "sci_mode stays after profile", _opts(lambda L: (
    L.mod.set_printoptions(profile="default"), repr(L.T(F7)))[1], sci_mode=True))
case("set_printoptions", "options persist", _opts(lambda L: (repr(L.T(F7)), repr(
    L.T(F7[:2])), str(L.T(1.0 / 3))), precision=2))
case("set_printoptions", "get_printoptions", _opts(lambda L: L.mod._tensor_str.get_printoptions(),
                                                   precision=3, sci_mode=True))
case("set_printoptions", "PRINT_OPTS read", _opts(lambda L: [getattr(
    L.mod._tensor_str.PRINT_OPTS, k) for k in ("precision", "threshold", "edgeitems",
                                               "linewidth", "sci_mode")], profile="short"))
case("set_printoptions", "PRINT_OPTS write", _opts(lambda L: (
    setattr(L.mod._tensor_str.PRINT_OPTS, "threshold", 4), repr(L.T(F7)))[1]))
case("set_printoptions", "printoptions context", lambda L: (lambda ctx: (
    ctx.__enter__(), repr(L.T(F7)), ctx.__exit__(None, None, None), repr(L.T(F7)))[1::2])(
        L.mod._tensor_str.printoptions(precision=1)))

# --------------------------------------------------------------------------- object reprs


def _tree(nn):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(8)
            self.act = nn.ReLU(inplace=True)
            self.skip = nn.Identity()

        def forward(self, x):
            return self.act(self.bn(self.conv(x))) + self.skip(x)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(*[Block() for _ in range(3)])
            self.heads = nn.ModuleDict({"cls": nn.Linear(8, 10), "box": nn.Linear(8, 4)})
            self.extra = nn.ModuleList([nn.Dropout(0.1), nn.GELU(approximate="tanh")])
            self.scale = nn.Parameter(nn.init.ones_(nn.Linear(1, 1).weight.data))
            self.register_buffer("steps", nn.init.zeros_(nn.Linear(1, 1).bias.data))

    return Net()


case("module repr", "tree", lambda L: repr(_tree(L.mod.nn)))
case("module repr", "str equals repr", lambda L: str(_tree(L.mod.nn)) == repr(_tree(L.mod.nn)))
case("module repr", "empty module", lambda L: repr(L.mod.nn.Module()))
case("module repr", "empty Sequential", lambda L: repr(L.mod.nn.Sequential()))
case("module repr", "Sequential OrderedDict", lambda L: repr(L.mod.nn.Sequential(__import__(
    "collections").OrderedDict([("fc", L.mod.nn.Linear(2, 3)), ("act", L.mod.nn.Tanh())]))))
case("module repr", "repeated layers folded", lambda L: repr(L.mod.nn.Sequential(
    *[L.mod.nn.Linear(4, 4) for _ in range(5)], L.mod.nn.ReLU(), L.mod.nn.ReLU())))
case("module repr", "nested ModuleList folded", lambda L: repr(L.mod.nn.ModuleList(
    [L.mod.nn.Sequential(L.mod.nn.Linear(2, 2), L.mod.nn.ReLU()) for _ in range(3)])))
case("module repr", "ParameterList", lambda L: repr(L.mod.nn.ParameterList([
    L.mod.nn.Parameter(L.mod.zeros(2, 3)), L.mod.nn.Parameter(L.mod.zeros(4, dtype=L.mod.float64),
                                                              requires_grad=False)])))
case("module repr", "ParameterDict", lambda L: repr(L.mod.nn.ParameterDict({
    "a": L.mod.nn.Parameter(L.mod.zeros(2)), "b": L.mod.nn.Parameter(L.mod.ones(1, 1))})))
case("module repr", "extra_repr", lambda L: repr(type("Scaled", (L.mod.nn.Module,), {
    "extra_repr": lambda self: "factor=2,\nbias=True"})()))
case("module repr", "common layers", lambda L: [repr(m) for m in (
    L.mod.nn.Embedding(10, 3, padding_idx=0), L.mod.nn.LayerNorm(4, eps=1e-6),
    L.mod.nn.MultiheadAttention(8, 2, batch_first=True), L.mod.nn.LSTM(3, 4, 2, dropout=0.1),
    L.mod.nn.MaxPool2d(2, 2), L.mod.nn.AdaptiveAvgPool2d((1, 1)), L.mod.nn.Flatten(),
    L.mod.nn.Dropout2d(0.3), L.mod.nn.Softmax(dim=-1), L.mod.nn.LeakyReLU(0.2),
    L.mod.nn.CrossEntropyLoss(label_smoothing=0.1), L.mod.nn.Upsample(scale_factor=2),
    L.mod.nn.TransformerEncoderLayer(8, 2, 16))])
case("module repr", "None child", lambda L: (lambda m: (m.register_module("gone", None),
                                                      repr(m))[1])(L.mod.nn.Sequential(
    L.mod.nn.ReLU())))
case("module repr", "Sequential slice", lambda L: repr(L.mod.nn.Sequential(
    L.mod.nn.Linear(2, 2), L.mod.nn.ReLU(), L.mod.nn.Tanh())[1:]))
case("module repr", "custom child repr", lambda L: repr(L.mod.nn.Sequential(type(
    "Odd", (L.mod.nn.Module,), {"__repr__": lambda self: "Odd<\n  x>"})())))
case("module repr", "ModuleDict numeric keys", lambda L: repr(L.mod.nn.ModuleDict(
    {"1": L.mod.nn.ReLU(), "0": L.mod.nn.Tanh()})))
case("module repr", "parametrized and pruned", lambda L: (lambda m: (
    L.mod.nn.utils.prune.l1_unstructured(m[0], "weight", amount=1),
    L.mod.nn.utils.parametrizations.weight_norm(m[1]), repr(m))[2])(L.mod.nn.Sequential(
        L.mod.nn.Linear(2, 2), L.mod.nn.Linear(2, 2))))
case("module repr", "after double and eval", lambda L: repr(L.mod.nn.Sequential(
    L.mod.nn.BatchNorm1d(3), L.mod.nn.Dropout()).double().eval()))
case("parameter repr", "float", lambda L: repr(L.mod.nn.Parameter(L.T([1.0, 2.5], "float32"))))
case("parameter repr", "no grad", lambda L: repr(L.mod.nn.Parameter(L.T([1.0]),
                                                                     requires_grad=False)))
case("parameter repr", "int refused", lambda L: raised(lambda: L.mod.nn.Parameter(L.T([1]))))
case("parameter repr", "int no grad", lambda L: repr(L.mod.nn.Parameter(L.T([1]),
                                                                         requires_grad=False)))
case("parameter repr", "empty", lambda L: repr(L.mod.nn.Parameter()))
case("parameter repr", "0-d", lambda L: repr(L.mod.nn.Parameter(L.T(2.0))))
case("parameter repr", "UninitializedParameter", lambda L: repr(
    L.mod.nn.parameter.UninitializedParameter()))
for _dt in ("float16", "bfloat16", "float64", "complex64"):
    case("parameter repr", f"dtype / {_dt}", lambda L, d=_dt: repr(L.mod.nn.Parameter(L.T(
        [1.5, -2.25, 1e-3], d))))
case("parameter repr", "summarised", lambda L: repr(L.mod.nn.Parameter(L.T(np.linspace(
    -1, 1, 3000).reshape(30, 100)))))
case("parameter repr", "str", lambda L: str(L.mod.nn.Parameter(L.T([1.0, 2.0]))))
case("parameter repr", "view of a parameter", lambda L: repr(L.mod.nn.Parameter(L.T(
    [[1.0, 2.0]]))[0]))
case("parameter repr", "Buffer", lambda L: repr(L.mod.nn.Buffer(L.T([1.0]))))


def _lr_tensor(optim):
    """A tensor learning rate (as a program passes one) of the library optim belongs to."""
    mod = torch if optim.__name__.startswith("torch") else __import__("ember")
    return mod.tensor(0.01)


def _opt_repr(make):
    def run(L):
        m = L.mod.nn.Linear(2, 2)
        return repr(make(L.mod.optim, [m.weight], m))
    return run


for _what, _make in (
        ("SGD", lambda o, p, m: o.SGD(p, lr=0.1)),
        ("SGD momentum nesterov", lambda o, p, m: o.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                                        weight_decay=1e-4)),
        ("Adam", lambda o, p, m: o.Adam(p)), ("AdamW", lambda o, p, m: o.AdamW(p, lr=3e-4,
                                                                            betas=(0.9, 0.95))),
        ("Adam amsgrad", lambda o, p, m: o.Adam(p, amsgrad=True, foreach=False)),
        ("RMSprop", lambda o, p, m: o.RMSprop(p, lr=0.01)),
        ("Adagrad", lambda o, p, m: o.Adagrad(p)), ("Adadelta", lambda o, p, m: o.Adadelta(p)),
        ("two groups", lambda o, p, m: o.SGD([{"params": [m.weight]},
                                             {"params": [m.bias], "lr": 0.5}], lr=0.1)),
        ("LBFGS", lambda o, p, m: o.LBFGS(p)), ("NAdam", lambda o, p, m: o.NAdam(p)),
        ("Adamax", lambda o, p, m: o.Adamax(p)), ("RAdam", lambda o, p, m: o.RAdam(p)),
        ("ASGD", lambda o, p, m: o.ASGD(p)), ("Rprop", lambda o, p, m: o.Rprop(p)),
        ("SparseAdam", lambda o, p, m: o.SparseAdam(p)),
        ("lr tensor", lambda o, p, m: o.Adam(p, lr=_lr_tensor(o))),
        ("group with a user key", lambda o, p, m: o.SGD([{"params": [m.weight], "name": "w"},
                                                         {"params": [m.bias]}], lr=0.1)),
        ("after add_param_group", lambda o, p, m: (lambda opt: (opt.add_param_group(
            {"params": [m.bias], "lr": 0.01}), opt)[1])(o.AdamW(p))),
        ("empty group list", lambda o, p, m: o.SGD([], lr=0.1))):
    case("optimizer repr", _what, _opt_repr(_make))


case("object repr", "dtypes", lambda L: [repr(getattr(L.mod, d)) for d in (
    "float32", "float", "double", "half", "bfloat16", "int64", "long", "int", "bool", "uint8",
    "complex64", "cfloat", "complex128")])
case("object repr", "dtype str", lambda L: [str(L.mod.float16), str(L.mod.int32)])
case("object repr", "devices", lambda L: [repr(L.mod.device("cpu")), str(L.mod.device("cpu")),
                                          repr(L.mod.device("cpu", 0)),
                                          repr(L.mod.device("cuda:1")), str(L.mod.device("meta"))])
case("object repr", "Size", lambda L: [repr(L.mod.Size([2, 3])), str(L.mod.Size([])),
                                       repr(L.mod.zeros(1, 0, 2).shape), repr(L.mod.Size((5,)))])
case("object repr", "Size ops", lambda L: [repr(L.mod.Size([2, 3]) + (4,)),
                                           repr(L.mod.Size([2, 3])[1:]),
                                           L.mod.Size([2, 3]).numel()])
case("object repr", "finfo iinfo", lambda L: [repr(L.mod.finfo(L.mod.float32)),
                                              repr(L.mod.iinfo(L.mod.int8))])
case("object repr", "generator", lambda L: type(L.mod.Generator()).__name__)
case("object repr", "memory_format", lambda L: [repr(L.mod.channels_last),
                                                repr(L.mod.contiguous_format)])
case("object repr", "layout", lambda L: [repr(L.mod.strided), repr(L.mod.sparse_coo)])

# ============================================================================ the harness
# (group, case) -> why the difference is deliberate (docs/DEVIATIONS.md)
_NODE = ("the grad_fn name is ember's node's, which differs from torch's where ember computes "
         "in one op what torch does in another or torch numbers an overload (docs/"
         "DEVIATIONS.md, tensor core: Backward node names)")
KNOWN: dict = {
    ("orthogonal_", "dtype / float16"):
        "ember's orthogonal_ computes the QR in float64 and rounds it into a float16/bfloat16 "
        "tensor; torch's CPU QR has no half kernels (NotImplementedError), a superset kept",
    **{("grad_fn repr", w): _NODE for w in ("sum dim", "sum keepdim", "mean dim", "index",
                                             "slice", "clamp", "norm", "linear", "mse_loss",
                                             "cross_entropy")},
    ("parameter repr", "view of a parameter"): _NODE,
    ("sparse_", "generator determinism"):
        "ember's sparse_ draws the zeroed rows from the generator given too, so a seeded "
        "generator repeats the whole tensor; torch's draws them from the global stream "
        "(its randperm gets no generator), so only the values repeat",
}

# (group, case) -> found by this sweep and not yet decided: fix ember and drop the entry, or
# move it to KNOWN with a reason. Each still diverges (checked like KNOWN).
PENDING: set = set()

IDS = [f"{group}-{what}" for group, what, _ in CASES]


@pytest.mark.parametrize("group,what,fn", CASES, ids=IDS)
def test_init_print_against_torch(group, what, fn):
    assert_verdict(divergence(fn), (group, what), f"{group} ({what})", KNOWN, PENDING)
