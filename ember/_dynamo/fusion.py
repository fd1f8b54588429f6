"""Fusion: runs of elementwise ops become one generated numba kernel.

A group is a run of consecutive recorded elementwise instructions over one floating dtype whose
outputs all have the group's shape (operands broadcast to it). The kernel reads each operand
once, keeps intermediates in registers and writes only the values used outside the group (by a
later op, the backward, or the caller). Matmul, convolution and everything else keep their own
kernels. Transcendental ops (exp, tanh, log, sigmoid) stay on NumPy: numba has no vectorised
math library here, so fusing them is slower than NumPy's SIMD loops (see NOTE [What fuses]).
"""
from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys

import numba
import numpy as np

from .. import _onepool
from .capture import Instr

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# NOTE [What fuses]
# Measured on this machine (benchmarks/compile.py, "fusion" rows): a chain of cheap ops
# (add, mul, relu, clamp) fused into one numba loop beats one NumPy call per op by ~3x, because
# each NumPy call streams its operands through memory again. numba compiles exp/tanh/log to
# scalar libm calls (no SVML), which lose to NumPy's vectorised loops, so those ops end a group.
# Only float32/float64 groups fuse, with every member of one dtype: NumPy's promotion of mixed
# operands then needs no reproducing, and each step rounds exactly as the eager op does.


def _binary(sym):
    def expr(a, p):
        alpha = p.get("alpha", 1)
        if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
            return None
        if alpha == 1:
            return f"({a[0]} {sym} {a[1]})"
        return f"({a[0]} {sym} _T({float(alpha)!r}) * {a[1]})"
    return expr


def _div(a, p):
    return None if p.get("rounding_mode") is not None else f"({a[0]} / {a[1]})"


def _clamp(a, p):
    x, lo, hi = a[0], a[1] if len(a) > 1 else "None", a[2] if len(a) > 2 else "None"
    out = x
    if lo != "None":
        out = f"_fmax({out}, {lo})"
    if hi != "None":
        out = f"_fmin({out}, {hi})"
    return out


def _scale(a, p):
    if len(a) > 2 and a[2] != "None":
        return f"({a[0]} * {a[1]} + {a[2]})"
    return f"({a[0]} * {a[1]})"


_ELEMENTWISE = {
    "Add": _binary("+"),
    "Sub": _binary("-"),
    "Mul": lambda a, p: f"({a[0]} * {a[1]})",
    "Div": _div,
    "Neg": lambda a, p: f"(-{a[0]})",
    "Relu": lambda a, p: f"_relu({a[0]})",
    "Square": lambda a, p: f"({a[0]} * {a[0]})",
    "Sqrt": lambda a, p: f"_sqrt({a[0]})",
    "Rsqrt": lambda a, p: f"(_T(1.0) / _sqrt({a[0]}))",
    "Reciprocal": lambda a, p: f"(_T(1.0) / {a[0]})",
    "Abs": lambda a, p: f"abs({a[0]})",
    "Clamp": _clamp,
    "Maximum": lambda a, p: f"_fmax({a[0]}, {a[1]})",
    "Minimum": lambda a, p: f"_fmin({a[0]}, {a[1]})",
    "NativeDropout": _scale,
    "Erf": lambda a, p: f"_erf({a[0]})",
    # 0.5 * x * (1 + erf(x / sqrt(2))), each step rounded to float32: equal to eager's
    # one-pass kernel (ops/_kernels/gelu.py) to float32 rounding. Only a GELU whose backward the
    # graph does not need is fused: one whose backward it needs keeps eager's kernels, forward
    # and backward (raw_backward._gelu), which are faster than these ops fused
    "Gelu": lambda a, p: None if p.get("approximate", "none") != "none" or len(a) != 1 else
    f"(_T(0.5) * {a[0]} * (_T(1.0) + _erf({a[0]} / _T(1.4142135623730951))))",
}

# ops whose kernel uses _erf, exact to float32 rounding only (see NOTE [Vectorisable erf])
_FLOAT32_ONLY = {"Erf", "Gelu"}


def _key(cls):
    # ember's own op classes, by name (they move between ember.ops modules)
    return cls.__name__ if cls.__module__.startswith("ember.ops") else None


def fusible_classes():
    """The Op classes fusion handles (the op-database test compiles each of them)."""
    return set(_ELEMENTWISE)


class FusedGroup:
    """A generated kernel call standing for several instructions."""

    def __init__(self, members, inputs, outputs, shape, dtype, exprs, nscalar):
        self.members = members
        self.inputs = inputs      # slots or ("c", value)
        self.outputs = outputs    # slots written by the kernel
        self.shape = shape
        self.dtype = dtype
        self.body = exprs         # lines of the kernel body
        self.nscalar = nscalar

    def emit(self, e):
        fn = e.const(_launcher(self), "G")
        args = ", ".join(e.ref(r) for r in self.inputs)
        outs = ", ".join(f"v{s}" for s in self.outputs)
        e.lines.append(f"{outs}{',' if len(self.outputs) == 1 else ''} = {fn}({args})")
        e.defined.update(self.outputs)


def fuse(cap):
    """Fused instruction lists for the forward and the backward (None: nothing fused)."""
    uses = _external_uses(cap)
    blocked = set()
    for _s, kind in enumerate(cap.kinds):
        if kind[0] in ("saved", "attr"):
            blocked.add(kind[1])
    from .train_step import InlineBackward
    inline = [x for x in cap.fwd if isinstance(x, InlineBackward)]
    for item in list(cap.bwd or ()) + [y for x in inline for y in x.items]:
        if hasattr(item, "fwd_index"):
            blocked.add(item.fwd_index)
    fwd = _fuse_list(cap, cap.fwd, uses, blocked)
    for k, item in enumerate(fwd):
        if isinstance(item, InlineBackward):  # its own run of backward instructions
            fwd[k] = InlineBackward(_fuse_list(cap, item.items, uses, set(), backward=True),
                                    item.accs)
    bwd = _fuse_list(cap, cap.bwd, uses, set(), backward=True) if cap.bwd else cap.bwd
    return fwd, bwd


# NOTE [Gathers into a cat]
# NCF's MLP branch looks two embeddings up and concatenates them: eager writes each (B, 32)
# lookup, then reads both again to write the (B, 64) cat. When every tensor a cat joins along its
# last dim is an Embedding lookup used nowhere else (same index shape, one float dtype, no
# side effect in between), the replay writes the lookups straight into the cat's columns
# (ops/nn/embedding.py gather_cat) and sets each Embedding's ctx as its forward does, so the
# backward replays unchanged. Smoke figures, one thread, busy machine: 2 lookups + cat
# ~210 us -> ~70 us per step. The values are copies either way: bit for bit eager's.
class GatherCat:
    """Embedding lookups written into the columns of the cat that joins them."""

    def __init__(self, embs, cat, fwd_index):
        self.embs, self.cat, self.fwd_index = embs, cat, fwd_index
        self.inputs = [r for e in embs for r in e.args[:2]]
        self.outputs = list(cat.outs)

    def emit(self, e):
        from ..ops.nn.embedding import gather_cat
        ctxs = []
        for inst in self.embs:
            ctx = f"c{self.fwd_index[id(inst)]}"
            e.lines.append(f"{ctx} = _Ctx({inst.nig!r})")
            ctxs.append(ctx)
        fn = e.const(gather_cat, "GC")
        ws = ", ".join(e.ref(x.args[0]) for x in self.embs)
        idx = ", ".join(e.ref(x.args[1]) for x in self.embs)
        pads = tuple(x.args[2][1] for x in self.embs)
        scales = tuple(x.args[3][1] for x in self.embs)
        e.lines.append(f"v{self.outputs[0]} = {fn}(({', '.join(ctxs)},), ({ws},), ({idx},), "
                       f"{pads!r}, {scales!r})  # Embedding x{len(self.embs)} + Cat")
        e.defined.update(self.outputs)

    @property
    def ctx_indices(self):
        return [self.fwd_index[id(x)] for x in self.embs]


def gather_cats(cap, items):
    """``items`` (a fused forward list) with each cat of single-use Embedding lookups along its
    last dim replaced by a GatherCat (NOTE [Gathers into a cat])."""
    from ..ops.join import Cat
    from ..ops.nn.embedding import Embedding
    from .capture import SideEffect
    uses = _external_uses(cap)
    fwd_index = {id(x): i for i, x in enumerate(cap.fwd)}
    ctx_read = set()  # forward instructions whose ctx the backward reads
    for kind in cap.kinds:
        if kind[0] in ("saved", "attr"):
            ctx_read.add(kind[1])
    from .train_step import InlineBackward
    inline = [y for x in cap.fwd if isinstance(x, InlineBackward) for y in x.items]
    for b in list(cap.bwd or ()) + inline:
        if hasattr(b, "fwd_index"):
            ctx_read.add(b.fwd_index)
    made_by = {}
    for k, item in enumerate(items):
        if isinstance(item, Instr) and item.cls is Embedding:
            made_by[item.outs[0]] = k
    out, drop = list(items), set()
    for k, item in enumerate(items):
        if not (isinstance(item, Instr) and item.cls is Cat and len(item.args) > 2
                and fwd_index.get(id(item)) not in ctx_read):
            continue
        dim, parts = item.args[0], item.args[1:]
        shape, dt = item.meta[0]
        if dim[0] != "c" or dim[1] != len(shape) - 1 or dt not in (np.float32, np.float64) or \
                item.params or any(r[0] != "s" or r[1] not in made_by for r in parts):
            continue
        embs = [items[made_by[r[1]]] for r in parts]
        first = min(made_by[r[1]] for r in parts)
        ok = len({r[1] for r in parts}) == len(parts) and all(
            uses.get(r[1], 0) == 1 and not e.params and len(e.args) == 4 and
            all(a[0] == "c" for a in e.args[2:]) and e.args[0][0] == "s" and
            e.args[1][0] == "s" and fwd_index.get(id(e)) is not None and
            cap.arrays[e.args[0][1]].ndim == 2 and cap.arrays[e.args[0][1]].dtype == dt and
            cap.arrays[e.args[1][1]].shape == cap.arrays[embs[0].args[1][1]].shape and
            not any(kind[0] in ("saved", "attr") and kind[1] == fwd_index[id(e)]
                    for kind in cap.kinds)
            for r, e in zip(parts, embs, strict=True))
        ok = ok and not any(isinstance(x, (SideEffect, InlineBackward))
                            for x in items[first:k])
        if not ok:
            continue
        out[k] = GatherCat(embs, item, fwd_index)
        drop.update(made_by[r[1]] for r in parts)
    return [x for j, x in enumerate(out) if j not in drop]


def _external_uses(cap):
    """How many times each slot is read (by any instruction, the outputs or the exports)."""
    from .codegen import _ins
    uses = {}
    from .train_step import InlineBackward
    items = list(cap.fwd) + list(cap.bwd or ())
    items += [y for x in cap.fwd if isinstance(x, InlineBackward) for y in x.items]
    for item in items:
        for s in _ins(item):
            uses[s] = uses.get(s, 0) + 1
    for x in cap.fwd:
        if isinstance(x, InlineBackward):
            for _, s, _ in x.accs:
                uses[s] = uses.get(s, 0) + 1000
    for o in list(cap.outputs) + list(cap.target_grads):
        if isinstance(o, tuple) and o[0] == "item":
            o = o[1]
        if isinstance(o, int):
            uses[o] = uses.get(o, 0) + 1000
    return uses


def _fuse_list(cap, items, uses, blocked, backward=False):
    out, run = [], []
    index = {id(x): i for i, x in enumerate(cap.fwd)}
    for item in items:
        ok = isinstance(item, Instr) and (backward or index.get(id(item)) not in blocked)
        if ok and _fusible(cap, item, run):
            run.append(item)
            continue
        out.extend(_close(cap, run, uses, backward))
        run = []
        if ok and _fusible(cap, item, run):
            run.append(item)
        else:
            out.append(item)
    out.extend(_close(cap, run, uses, backward))
    return out


def _fusible(cap, inst, run):
    key = _key(inst.cls)
    if key not in _ELEMENTWISE or len(inst.outs) != 1:
        return False
    shape, dt = inst.meta[0]
    if dt not in (np.float32, np.float64) or 0 in shape:
        return False
    if key in _FLOAT32_ONLY and dt != np.float32:
        return False
    if run and (run[0].meta[0] != (shape, dt)):
        return False
    for r in list(inst.args) + list(inst.params.values()):
        a = cap.arrays[r[1]] if r[0] == "s" else r[1]
        if isinstance(a, np.ndarray):
            if a.dtype != dt or len(a.shape) > len(shape) or any(
                    d != 1 and d != s for d, s in zip(a.shape[::-1], shape[::-1], strict=False)):
                return False
        elif a is not None and not isinstance(a, (int, float, str)) or isinstance(a, bool):
            return False
    return _ELEMENTWISE[key]([f"a{i}" for i in range(len(inst.args))],
                             {k: (v[1] if v[0] == "c" else None)
                              for k, v in inst.params.items()}) is not None


def _close(cap, run, uses, backward):
    """A FusedGroup for a run of two or more instructions; a single one stays as it is,
    unless the one pool is on and it is big (NOTE [Fused kernels on the one pool])."""
    if len(run) < 2 and not (run and (_key(run[0].cls) in _FLOAT32_ONLY or _pool_sized(run[0]))):
        return list(run)  # one cheap op: NumPy's loop is as good
    shape, dt = run[0].meta[0]
    inputs, names, lines = [], {}, []
    made = {}
    internal = {}
    for inst in run:
        for r in list(inst.args) + list(inst.params.values()):
            if r[0] == "s":
                internal[r[1]] = internal.get(r[1], 0) + 1
    for k, inst in enumerate(run):
        argn = []
        for r in inst.args:
            argn.append(_operand(cap, r, inputs, names, made, lines, dt))
        params = {}
        for key, r in inst.params.items():
            params[key] = r[1] if r[0] == "c" else None
        expr = _ELEMENTWISE[_key(inst.cls)](argn, params)
        lines.append(f"t{k} = {expr}")
        made[inst.outs[0]] = f"t{k}"
    outputs = [inst.outs[0] for inst in run
               if uses.get(inst.outs[0], 0) > internal.get(inst.outs[0], 0)]
    if not outputs:
        outputs = [run[-1].outs[0]]
    nscalar = [cap.arrays[r[1]].ndim == 0 if r[0] == "s" else True for r in inputs]
    group = FusedGroup(run, inputs, outputs, shape, dt, lines + [
        f"o{j}[IDX] = {made[s]}" for j, s in enumerate(outputs)], nscalar)
    # the outputs keep the memory layout eager produced (NumPy follows its operands' layout),
    # so later views and reshapes recorded against it stay valid
    group.perms = [_layout(cap.arrays[s]) for s in outputs]
    return [group]


def _layout(a):
    """The axis order of a in memory (outermost first); None when C-contiguous."""
    if a.flags.c_contiguous:
        return None
    perm = tuple(sorted(range(a.ndim), key=lambda d: (-abs(a.strides[d]), d)))
    return None if perm == tuple(range(a.ndim)) else perm


def _operand(cap, r, inputs, names, made, lines, dt):
    if r[0] == "s" and r[1] in made:
        return made[r[1]]
    if r[0] == "c":
        v = r[1]
        if v is None:
            return "None"
        if isinstance(v, (int, float)):
            return f"_T({float(v)!r})"
        if isinstance(v, np.ndarray) and v.ndim == 0:
            return f"_T({float(v)!r})" if np.isfinite(v) else f"_T({_inf(v)})"
    key = (r[0], r[1] if r[0] == "s" else id(r[1]))
    if key not in names:
        names[key] = f"x{len(inputs)}"
        inputs.append(r)
    return f"{names[key]}[IDX]"


def _inf(v):
    return "math.inf" if v > 0 else "-math.inf" if v < 0 else "math.nan"


# ---------------------------------------------------------------------------------------------
# kernels: generated source in a cache directory, compiled by numba with cache=True

_HEADER = '''"""Generated by ember.compile (ember/_dynamo/fusion.py); safe to delete."""
import math
import numpy as np
from numba import njit

_T = np.{dtype}


@njit(inline="always")
def _fmax(a, b):
    return a if a >= b or a != a else b


@njit(inline="always")
def _fmin(a, b):
    return a if a <= b or a != a else b


@njit(inline="always")
def _relu(a):
    return a if not a < 0 else _T(0.0)


@njit(inline="always")
def _sqrt(a):
    return np.sqrt(a)


@njit(inline="always", error_model="numpy")
def _erf(a):
    # see NOTE [Vectorisable erf] in ember/_dynamo/fusion.py; NaN passes through the clamp
    v = np.float64(a)
    x = abs(v)
    x = 4.0 if x > 4.0 else x
    t = x * x * 0.0625
    p = {erf_p}
    q = {erf_q}
    return _T(math.copysign(x * p / q, v))
'''


def _horner(coefs):
    """Source of sum(c_k t^k) in Horner form."""
    src = repr(coefs[-1])
    for c in reversed(coefs[:-1]):
        src = f"({src} * t + {c!r})"
    return src


# NOTE [Vectorisable erf]
# GELU's erf (forward, and again in its backward) is the costliest elementwise op of a
# transformer block: scipy's erf runs ~35x slower than NumPy's exp here, and numba's math.erf
# is a scalar libm call. erf(x) = x * P(t) / Q(t), t = x^2 / 16, |x| clamped to 4 (where erf
# is 1 in float32), is a rational function of degree 8/8 fitted to erf on [0, 4] (relative error
# 4.3e-10 in float64): branch-free arithmetic that LLVM vectorises. Rounded to float32 it equals
# scipy's float32 erf on ~99.9% of inputs and is one ulp off on the rest, so it is used in
# float32 kernels only (float64 keeps NumPy/scipy). Measured with benchmarks/compile.py (block).
# Since then eager's GELU got its own one-pass kernels, and a training graph's GELU runs those
# (see "Gelu" above): the transformer block's GELU forward + backward, (8, 64, 1024) float32,
# 2.2 -> 1.3 ms of one thread's CPU a step (compile.py --profile block, busy machine).
_ERF_P = [1.1283791672027739, 1.0128525660326886, 10.237546348919699, -4.284251319371802,
          14.64105967924633, -17.633226406793035, 11.942409285301142, -8.480273799076867,
          -1.332792115690927]
_ERF_Q = [1.0, 6.230950621716331, 16.704516630106365, 23.305875753864484, 13.883843352126993,
          -5.056653432097199, -12.244904007964283, 10.048373439279963, -24.945188275404426]


def cache_dir():
    base = os.environ.get("EMBER_COMPILE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "ember", "compile")
    os.makedirs(base, exist_ok=True)
    return base


_loaded: dict = {}


def _kernel_source(group, flat, parallel=False):
    n_in = len(group.inputs)
    nd = len(group.shape)
    scal = group.nscalar
    ins = ", ".join(f"x{i}" for i in range(n_in))
    outs = ", ".join(f"o{j}" for j in range(len(group.outputs)))
    body = []
    for line in group.body:
        for i in range(n_in):
            line = line.replace(f"x{i}[IDX]", f"x{i}" if scal[i] else f"x{i}[IDX]")
        body.append(line)
    if flat or nd == 0:
        idx, loops = "i", ["for i in range(o0.size):"]
        if nd == 0:
            idx = "0"
            loops = ["for i in range(1):"]
    else:
        idx = ", ".join(f"i{d}" for d in range(nd))
        loops = [f"for i{d} in range(o0.shape[{d}]):" for d in range(nd)]
    if parallel:  # the outermost loop over the pool (NOTE [Fused kernels on the one pool])
        loops[0] = loops[0].replace(" in range(", " in prange(", 1)
    src = [f"def kernel({outs}, {ins}):"]
    for d, loop in enumerate(loops):
        src.append("    " * (d + 1) + loop)
    pad = "    " * (len(loops) + 1)
    src += [pad + line.replace("IDX", idx) for line in body]
    return "\n".join(src) + "\n"


def _load(group, flat, parallel=False):
    src = _kernel_source(group, flat, parallel)
    dtype = np.dtype(group.dtype).name
    # error_model="numpy": x / 0 gives inf/nan as NumPy does (numba's default raises
    # ZeroDivisionError), and without that check loops with a division vectorise
    full = _HEADER.format(dtype=dtype, erf_p=_horner(_ERF_P), erf_q=_horner(_ERF_Q))
    if parallel:
        full = full.replace("from numba import njit\n", "from numba import njit, prange\n") + \
            "\n\n@njit(cache=True, nogil=True, parallel=True, error_model=\"numpy\")\n" + src
    else:
        full += "\n\n@njit(cache=True, nogil=True, error_model=\"numpy\")\n" + src
    h = hashlib.sha1(full.encode()).hexdigest()[:16]
    if h in _loaded:
        return _loaded[h]
    path = os.path.join(cache_dir(), f"k_{h}.py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(full)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(f"ember_compile_k_{h}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    _loaded[h] = mod.kernel
    return mod.kernel


# NOTE [Fused kernels on the one pool]
# With ember's one pool on (NOTE [One pool] in ember/_onepool.py) a fused group of at least
# MIN_POOL_WORK elements runs a second version of its kernel: the same source with its outermost
# loop a prange and parallel=True, so numba's threading layer - the pool the GEMMs run on -
# splits it into contiguous blocks of the flat index (or of the first dim of a strided kernel,
# which must then be 2 or more). Each element is computed by the same expression either way, so
# the values are the serial kernel's bit for bit. The parallel version is its own generated file
# (another hash), written and compiled only when first used with the pool on: with the pool off
# no kernel compiles twice. Smaller groups stay serial: a launch of the pool costs a few us.
# numba compiles a parallel loop several times slower than a serial one: the transformer block
# of benchmarks/compile.py took 7.3 s to its first replay with an empty kernel cache and the pool
# on, 2.1 s with it off; 0.2-0.6 s with the cache warm (smoke, busy machine).
MIN_POOL_WORK = 1 << 15
# A single elementwise op stays a NumPy call (its loop is as fast as numba's on one core) unless
# the pool is on when the call is captured and it has MIN_POOL_WORK elements: then it becomes a
# group of one, whose parallel kernel runs on both cores (a transformer block's residual adds
# and attention scale, 2^17 elements each).


def _pool_sized(inst):
    return math.prod(inst.meta[0][0]) >= MIN_POOL_WORK and _onepool.enabled()


@_onepool.twin(min_work=MIN_POOL_WORK)
def _k_add(a, b, out):
    for i in numba.prange(out.size):
        out[i] = a[i] + b[i]


def add(a, b):
    """np.add(a, b) (a backward's sum of two gradients of one value), on the one pool for two
    C-contiguous float arrays of one shape and dtype with MIN_POOL_WORK elements or more."""
    if (a.size >= MIN_POOL_WORK and a.shape == b.shape and a.dtype == b.dtype
            and a.dtype in _FLOATS and a.flags.c_contiguous and b.flags.c_contiguous
            and _onepool.enabled()):
        out = np.empty(a.shape, a.dtype)
        _k_add.parallel(a.reshape(-1), b.reshape(-1), out.reshape(-1))
        return out
    return np.add(a, b)


def _row_ordered(x):
    """Rows laid out in C order, possibly with gaps between them (a slice of wider rows)."""
    st = x.strides
    return x.ndim > 0 and st[-1] == x.itemsize and all(
        st[d] >= st[d + 1] * x.shape[d + 1] for d in range(x.ndim - 1))


def _launcher(group):
    """A Python function allocating the outputs and calling the flat or the strided kernel."""
    shape, dt = group.shape, group.dtype
    scal = group.nscalar
    kflat, knd = _load(group, True), _load(group, False)
    size = math.prod(shape)
    # the parallel twins, compiled at their first use (NOTE [Fused kernels on the one pool])
    twins = {}
    big = size >= MIN_POOL_WORK
    nd_splits = len(shape) > 0 and shape[0] >= 2

    def pick(flat):
        if not (big and _onepool.enabled() and (flat or nd_splits)):
            return kflat if flat else knd
        k = twins.get(flat)
        if k is None:
            k = twins[flat] = _load(group, flat, parallel=True)
        return k

    perms = group.perms
    allc = all(p is None for p in perms)

    def alloc(p):
        if p is None:
            return np.empty(shape, dt)
        return np.empty(tuple(shape[d] for d in p), dt).transpose(np.argsort(p))

    def launch(*xs):
        outs = [alloc(p) for p in perms]
        # every operand full-size and in row order: one with gaps between rows (a column slice
        # left by cat's backward) is copied once so that the flat loop runs (NCF's mul
        # backward: 63 us against 94 us for the strided loop; a transposed operand is not: its
        # copy costs more than the strided loop, 13 against 8 ms at 1024x1024; smoke, 1 thread)
        full = allc and all(s or (x.shape == shape and _row_ordered(x))
                            for x, s in zip(xs, scal, strict=False))
        flat = allc
        args = []
        for x, s in zip(xs, scal, strict=False):
            if s:
                args.append(x[()] if isinstance(x, np.ndarray) else x)
            elif x.shape == shape and x.flags.c_contiguous:
                args.append(x)
            elif full:
                args.append(np.ascontiguousarray(x))
            else:
                flat = False
                args.append(x)
        if flat:
            pick(True)(*[o.reshape(size) for o in outs],
                       *[a if s else a.reshape(size) for a, s in zip(args, scal, strict=False)])
        else:
            pick(False)(*outs, *[a if s else np.broadcast_to(a, shape)
                                 for a, s in zip(args, scal, strict=False)])
        return tuple(outs)

    return launch
