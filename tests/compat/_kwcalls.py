"""Call every public function and Tensor method that ember shares with torch with its arguments
by keyword, on inputs torch accepts, and compare ember's result with torch's (used by
test_keyword_calls.py; `python tests/compat/_kwcalls.py` prints what fails).

Binding a signature is not enough: a wrapper made with functools.wraps shows the wrapped
function's signature while its own ``(*args, **kwargs)`` may still take the first argument
positionally only (``torch.normal(mean=0.0, std=0.01, size=...)`` raised TypeError that way).
So the forms are called. The parameter names come from torch: its type stubs for the C builtins
(one overload each, see _stubs.py), ``inspect.signature`` or the docstring for the rest
(_signatures.py). Inputs are found by trial: for each overload, candidate values for its required
parameters (by name and annotation, below) are tried positionally on torch until one call
succeeds; that call is then made by keyword - the required parameters only, then every parameter
whose default is a literal - first on torch (a form torch rejects is not checked) and then on
ember. A finding is a form ember rejects, or a result that differs from torch's, while the same
call made positionally works in ember (what ember lacks altogether is other tests' business).
"""
from __future__ import annotations

import functools
import inspect
import itertools
import math
import warnings

import numpy as np
from _signatures import members, signature_of
from _stubs import _NO_DEFAULT, read_overloads

_P = inspect.Parameter
_MAX_TRIES = 40          # positional attempts per overload and input shape

# Global state, files, callables and processes: not called.
_SKIP = {
    "compile", "load", "save", "from_file", "manual_seed", "seed", "initial_seed", "vmap",
    "cond", "while_loop", "use_deterministic_algorithms", "get_default_dtype", "typename",
    "autocast", "chunk_backward", "export", "sym_not", "sym_int", "sym_float", "sym_max",
    "sym_min", "sym_ite", "sym_sum", "sym_sqrt", "sym_fresh_size", "is_storage",
    "register_hook", "register_post_accumulate_grad_hook", "backward", "apply_", "map_",
    "map2_", "share_memory_", "storage", "untyped_storage", "data_ptr", "set_", "tolist",
    "numpy", "pin_memory", "cuda", "record_stream", "to_mkldnn", "resize_", "resize_as_",
    "is_shared", "get_device", "element_size", "dim_order", "module_load", "type", "item",
    "const_data_ptr", "mutable_data_ptr",
}
_SKIP_PREFIXES = ("set_", "is_", "get_", "_", "to_sparse", "sparse_", "quantize", "q_", "fbgemm",
                  "mkldnn", "cudnn", "miopen", "native_", "empty_quantized", "fake_quantize",
                  "int_repr", "dequantize", "segment_reduce", "nested_", "sym_", "cuda")
# results that are not determined by the inputs: compared by shape and dtype only
_UNDETERMINED = ("empty", "new_empty", "rand", "normal", "bernoulli", "multinomial", "dropout",
                 "poisson", "random_", "uniform_", "exponential_", "geometric_", "cauchy_",
                 "log_normal_", "rrelu", "feature_alpha_dropout", "alpha_dropout", "randperm",
                 "gumbel_softmax", "fractional_max_pool",
                 "lobpcg", "max_unpool", "normal_", "orthogonal_", "sparse_")
# (lobpcg: an eigenvector's sign is not determined; max_unpool: which of two equal indices
# lands is not, and the index tensors tried repeat indices)


def _undetermined(name):
    return any(name.startswith(p) or name.endswith(p) for p in _UNDETERMINED) or (
        "dropout" in name or name.startswith("rand"))


# ------------------------------------------------------------------ candidate inputs
_SHAPES = [(3, 3), (3,), (2, 3, 3), (2, 2, 3, 3), (2, 2, 3, 3, 3), (), (2, 4)]
_BY_NAME = {
    "dim": [-1, 0, 1, [0, 1]], "dims": [[0, 1], [-1], [1, 0]], "dim0": [0], "dim1": [1],
    "dim2": [1], "axis": [-1], "axis0": [0], "axis1": [1], "source": [0, [0]],
    "destination": [1, [1]], "k": [1, 2], "n": [2, 3], "diagonal": [0], "offset": [0],
    "size": [[3, 3], [-1], [3], 3], "shape": [[-1], [3, 3], [9]], "repeats": [2, [2, 1]],
    "chunks": [2], "sections": [2], "split_size": [1], "split_size_or_sections": [1, [1, 2]],
    "indices_or_sections": [2, [1]], "indices": [[1], [0, 1]], "start": [0, 1], "end": [3, 5],
    "step": [1], "length": [1], "p": [2.0, 0.5, 1], "exponent": [2.0], "alpha": [1.0, 0.5],
    "value": [0.5, 1], "min": [-0.5], "max": [0.5], "eps": [1e-5], "lambd": [0.5],
    "decimals": [1], "bins": [4], "steps": [4], "fill_value": [1.5], "low": [0], "high": [5],
    "equation": ["ij->ji", "i->i", "...->..."], "reduce": ["sum", "mean"],
    "rounding_mode": ["floor"], "side": ["left"], "interpolation": ["linear"],
    "approximate": ["none"], "UPLO": ["L"], "indexing": ["ij"], "norm": ["ortho", None],
    "ord": [2, "fro", None], "correction": [1], "unbiased": [True], "q": [0.5, 2, None],
    "pad": [[1, 1]], "mode": ["constant", "reflect"], "kernel_size": [1, 2, [1]],
    "output_size": [1, [1]], "scale_factor": [2.0], "num_classes": [5],
    "num_groups": [1], "normalized_shape": [[3], [3, 3]], "upscale_factor": [1],
    "downscale_factor": [1], "groups": [1], "padding": [0], "stride": [1], "dilation": [1],
    "tensors": None, "other": None, "window_length": [4], "n_fft": [4], "hop_length": [1],
    "beta": [1.0], "tol": [1e-4], "driver": [None], "threshold": [0.5], "lower": [0.1],
    "upper": [0.3], "num_samples": [2], "replacement": [True], "m": [2], "row": [3],
    "col": [3], "from_": ["float32"], "to": ["int32"], "type1": ["float32"],
    "type2": ["int64"], "dtype": ["float32"], "device": ["cpu"], "correction_": [1],
    "unitriangular": [False], "upper_": [False], "largest": [True], "sorted": [True],
    "outdim": [1], "sizes": [[3, 1]], "reps": [[2]], "shifts": [1, [1]], "tau": [1.0],
    "margin": [1.0], "reduction": ["mean"], "weight": None, "nan": [0.0], "posinf": [1.0],
    "neginf": [-1.0], "generator": [None], "window": None, "return_complex": [True],
    "compute_uv": [True], "full_matrices": [True], "some": [True], "hermitian": [False],
    "atol": [1e-5], "rtol": [1e-5], "check_errors": [False], "pivot": [True], "left": [True],
    "dimension": [0], "fft_length": [4], "s": [[3], None], "bins_": [4], "range": [(0.0, 1.0)],
    "density": [False], "weights": None, "minlength": [0], "return_inverse": [False],
    "return_counts": [False], "out_int32": [False], "right": [False], "stable": [True],
    "descending": [False], "keepdim": [False], "fill": [0.5], "half_to_float": [False],
    "training": [False], "train": [False], "momentum": [0.1], "cudnn_enabled": [False],
    "cudnn_enable": [False], "inplace": [False], "negative_slope": [0.1], "min_val": [-1.0],
    "max_val": [1.0], "beta_": [1.0], "scale": [1.0], "divisor_override": [None],
    "ceil_mode": [False], "count_include_pad": [True], "return_indices": [False],
    "align_corners": [False], "antialias": [False], "padding_mode": ["zeros"],
    "dropout_p": [0.0], "is_causal": [False], "enable_gqa": [False], "mean": None, "std": None,
}
_BY_ANNOTATION = [
    ("Callable", None), ("Generator", [None]), ("_dtype", ["float32"]), ("_device", ["cpu"]),
    ("_layout", None), ("memory_format", None), ("Storage", None),
    ("Sequence[Tensor]", ["[T, T]"]), ("tuple[Tensor", ["[T, T]"]), ("list[Tensor]", ["[T, T]"]),
    ("Tensor", ["T", "TI", "TB"]), ("_size", [[3, 3], [-1], [1]]), ("_bool", [False, True]),
    ("_int", [-1, 1, 0, 2]), ("_float", [0.5, 2.0]), ("Number", [0.5, 2]),
    ("_complex", [0.5]), ("str", None),
]


def _candidates(pname, annotation):
    """Values to try for a required parameter; 'T' stands for a float tensor of the shape being
    tried, 'TI' an integer one, 'TB' a boolean one, 'T1'/'TI1' float/integer vectors of the
    last dimension's length (mv's vector, nll_loss's targets)."""
    by_name = _BY_NAME.get(pname, _NO_DEFAULT)
    only_tensor = "Tensor" in annotation and not any(
        k in annotation for k in ("_int", "_float", "Number", "_size", "_bool"))
    if by_name is None or (only_tensor or by_name is _NO_DEFAULT) and "Tensor" in annotation:
        if pname in ("index", "indices", "target") or "index" in pname:
            return ["TI", "T", "TI1"]
        if "mask" in pname:
            return ["TB", "T"]
        if "tensors" in pname or "Sequence[Tensor]" in annotation:
            return ["[T, T]"]
        return ["T", "TI", "TB", 0.5, "T1"]
    if by_name is not _NO_DEFAULT:
        return by_name
    for key, values in _BY_ANNOTATION:
        if key in annotation:
            return values
    return [-1, 0.5, "T", "TI"] if not annotation else None


@functools.cache
def _spd(shape):
    """Positive, symmetric positive-definite in the last two dims when square, no ties (cached:
    every call site copies it into a tensor)."""
    n = int(np.prod(shape)) if shape else 1
    base = (np.arange(n, dtype=np.float64) * 0.37) % 1.0 * 0.5 + 0.1
    a = base.reshape(shape)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        a = (a + np.swapaxes(a, -1, -2)) / 2 + np.eye(shape[-1]) * shape[-1]
    a.setflags(write=False)
    return a


def _make(lib, spec, shape):
    """The input `spec` as `lib` objects (a fresh tensor per call: in-place forms mutate)."""
    if spec == "T":
        return lib.tensor(_spd(shape))
    if spec == "TI":
        return lib.tensor((np.arange(int(np.prod(shape)) if shape else 1) % 2)
                          .reshape(shape).astype(np.int64))
    if spec == "TB":
        return lib.tensor((np.arange(int(np.prod(shape)) if shape else 1) % 2 == 0)
                          .reshape(shape))
    if spec in ("T1", "TI1"):
        n = shape[-1] if shape else 1
        return lib.tensor(_spd((n,)) if spec == "T1" else np.arange(n) % 2)
    if spec == "[T, T]":
        return [lib.tensor(_spd(shape)), lib.tensor(_spd(shape) + 1)]
    if isinstance(spec, str) and spec in ("float32", "int32", "int64"):
        return getattr(lib, spec)
    if isinstance(spec, list):
        return list(spec)
    return spec


# ------------------------------------------------------------------ comparing
def _plain(x):
    """A library-neutral view of a result, for comparing torch's with ember's."""
    if hasattr(x, "detach") and hasattr(x, "shape") and hasattr(x, "dtype"):
        x = x.detach()
        if getattr(x, "is_sparse", False) or str(getattr(x, "layout", "")).endswith("_coo"):
            x = x.to_dense()
        return ("tensor", tuple(x.shape), str(x.dtype).split(".")[-1],
                np.asarray(x.resolve_conj().numpy() if hasattr(x, "resolve_conj") else x.numpy()))
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    if isinstance(x, (bool, int, float, complex, str, type(None))):
        return x
    return str(x).split(".")[-1]


def _same(a, b, undetermined):
    if isinstance(a, tuple) and a and a[0] == "tensor":
        if not (isinstance(b, tuple) and b and b[0] == "tensor"):
            return False
        if a[1] != b[1] or a[2] != b[2]:
            return False
        if undetermined:
            return True
        return bool(np.allclose(a[3], b[3], rtol=1e-5, atol=1e-6, equal_nan=True))
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            _same(x, y, undetermined) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, (int, float)):
        return undetermined or math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6)
    return a == b


# ------------------------------------------------------------------ one callable
class _Call:
    """An overload's parameters [(name, kind, has_default, annotation, default)] and the values
    found for the ones given (the required ones, and maybe some optional ones after them)."""

    def __init__(self, params, given, shape, specs):
        self.params, self.given, self.shape, self.specs = params, given, shape, specs

    def args(self, lib, keywords: str):
        """(positional, keyword) arguments: keywords 'none' (the given parameters positionally),
        'required' (by keyword) or 'all' (and every other one with a literal default)."""
        pos, kw = [], {}
        values = dict(zip(self.given, self.specs))
        for name, kind, has_default, _ann, default in self.params:
            if name in values:
                v = _make(lib, values[name], self.shape)
                if kind is _P.POSITIONAL_ONLY or (keywords == "none" and
                                                  kind is not _P.KEYWORD_ONLY):
                    pos.append(v)
                else:
                    kw[name] = v
            elif keywords == "all" and has_default and default is not _NO_DEFAULT:
                if kind is _P.POSITIONAL_ONLY:
                    break
                kw[name] = _make(lib, default, self.shape)
        return pos, kw


def _run(fn, self_spec, shape, lib, call, keywords):
    pos, kw = call.args(lib, keywords)
    if self_spec is not None:
        return getattr(_make(lib, self_spec, shape), fn)(*pos, **kw)
    return fn(*pos, **kw)


def _find(tfn, params, method):
    """A positional call torch accepts: (_Call, self spec), or None. The required parameters
    are given first; when no call of those alone works (``clamp`` wants min or max), the
    optional positional ones after them are given too, one more at a time."""
    if any(p[1] is _P.VAR_POSITIONAL for p in params):
        return None
    required = [p for p in params if not p[2]]
    optional = [p for p in params if p[2] and p[1] is not _P.KEYWORD_ONLY]
    for extra in range(min(len(optional), 3) + 1):
        given = required + optional[:extra]
        pools = [_candidates(p[0], p[3]) for p in given]
        if any(not pool for pool in pools):
            return None
        found = _try(tfn, params, [p[0] for p in given], pools, method)
        if found is not None:
            return found
    return None


def _try(tfn, params, given, pools, method):
    selves = ["T", "TI", "TB"] if method else [None]
    for shape in _SHAPES:
        for self_spec in selves:
            for specs in itertools.islice(itertools.product(*pools), _MAX_TRIES):
                call = _Call(params, given, shape, specs)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        _run(tfn, self_spec, shape, _TorchLib, call, "none")
                except Exception:
                    continue
                return call, self_spec
    return None


class _TorchLib:
    """Set by check(): the torch module (a stand-in so _make can be handed either library)."""


def _overloads(ns, name, theirs, stubs):
    if name in stubs.get(ns, {}):
        return stubs[ns][name]
    got = signature_of(theirs, name, ns == "Tensor")
    if got is None or got[0] is None:
        return []
    out = []
    for p in got[0]:
        if p.kind is _P.VAR_KEYWORD:
            continue
        has_default = p.default is not _P.empty
        default = p.default if has_default and isinstance(
            p.default, (bool, int, float, str, tuple, type(None))) and not type(
            p.default).__name__.startswith("_") else _NO_DEFAULT
        ann = p.annotation
        if not isinstance(ann, str):
            ann = "" if ann is _P.empty else getattr(ann, "__name__", str(ann))
        if p.name in ("input", "self") or "tensor" in ann.lower():
            ann = ann or "Tensor"
        out.append((p.name, p.kind, has_default, ann, default))
    return [out]


def _skipped(name):
    return name in _SKIP or name.startswith(_SKIP_PREFIXES)


def check(ember, torch):
    """(findings {qualified name: problem}, number of (callable, overload) forms checked,
    every shared callable's qualified name -> whether a form of it was checked)."""
    import torch.fft
    import torch.linalg
    import torch.nn.functional
    import torch.nn.init
    import torch.special

    import ember.fft
    import ember.linalg
    import ember.nn.functional
    import ember.nn.init
    import ember.special

    global _TorchLib
    _TorchLib = torch
    stubs = read_overloads(torch, defaults=True)
    spaces = [("torch", ember, torch, "function"), ("Tensor", ember.Tensor, torch.Tensor, "method"),
              ("nn.functional", ember.nn.functional, torch.nn.functional, "function"),
              ("linalg", ember.linalg, torch.linalg, "function"),
              ("special", ember.special, torch.special, "function"),
              ("fft", ember.fft, torch.fft, "function"),
              ("nn.init", ember.nn.init, torch.nn.init, "function")]
    findings, checked, covered = {}, 0, {}
    for ns, e_ns, t_ns, kind in spaces:
        for name, (ours, theirs, _drop) in members(e_ns, t_ns, kind).items():
            if _skipped(name) or isinstance(theirs, type):
                continue
            method = ns == "Tensor"
            covered.setdefault(f"{ns}.{name}", False)
            t_fn = name if method else theirs
            e_fn = name if method else ours
            for params in _overloads(ns, name, theirs, stubs):
                if len(params) and len(params[0]) == 4:
                    params = [p + (_NO_DEFAULT,) for p in params]
                problem = _check_one(ember, torch, name, t_fn, e_fn, params, method)
                checked += problem is not None
                covered[f"{ns}.{name}"] |= problem is not None
                if problem:
                    findings.setdefault(f"{ns}.{name}", problem)
    return findings, checked, covered


def _check_one(ember, torch, name, t_fn, e_fn, params, method):
    """'' when ember matches torch in every keyword form, a description when not, None when no
    input was found or ember rejects the call even positionally."""
    found = _find(t_fn, params, method)
    if found is None:
        return None
    call, self_spec = found
    undetermined = _undetermined(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            _run(e_fn, self_spec, call.shape, ember, call, "none")
        except Exception:
            return None
        for keywords in ("required", "all"):
            try:
                expected = _plain(_run(t_fn, self_spec, call.shape, torch, call, keywords))
            except Exception:
                continue
            shown = _describe(call, self_spec, keywords)
            try:
                got = _plain(_run(e_fn, self_spec, call.shape, ember, call, keywords))
            except Exception as e:
                return f"{shown}: {type(e).__name__}: {str(e)[:200]}"
            if not _same(expected, got, undetermined):
                return (f"{shown}: result differs from torch's: {_brief(got)} vs torch's "
                        f"{_brief(expected)}")
    return ""


def _brief(plain):
    if isinstance(plain, tuple) and plain and plain[0] == "tensor":
        return f"{plain[2]}{list(plain[1])} {np.array2string(plain[3].ravel()[:4], precision=3)}"
    if isinstance(plain, list):
        return "[" + ", ".join(_brief(v) for v in plain) + "]"
    return repr(plain)


def _describe(call, self_spec, keywords):
    pos, kw = call.args(_TorchLib, keywords)
    parts = [_short(v) for v in pos] + [f"{k}={_short(v)}" for k, v in kw.items()]
    head = f"<{self_spec} {call.shape}>." if self_spec else ""
    return f"{head}({', '.join(parts)})"


def _short(v):
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return f"tensor{tuple(v.shape)}:{str(v.dtype).split('.')[-1]}"
    if isinstance(v, list):
        return "[" + ", ".join(_short(x) for x in v) + "]"
    return repr(v) if not hasattr(v, "is_floating_point") else str(v)


if __name__ == "__main__":
    import time

    import torch as _torch

    import ember as _ember

    t0 = time.perf_counter()
    found, n, _covered = check(_ember, _torch)
    bad = {k: v for k, v in found.items() if v}
    for k, v in sorted(bad.items()):
        print(f"{k}: {v}")
    print(f"# {n} forms checked, {len(bad)} failing, {time.perf_counter() - t0:.1f} s")
