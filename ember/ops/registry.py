"""The op registry: one place turns an op into ``ember.<name>``, ``Tensor.<name>``,
``Tensor.<name>_`` and the ``out=`` form, and records it in the op database the generic tests
walk (reference, samples, dtypes).
"""
from __future__ import annotations

import inspect
import keyword
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make
from ..autograd.function import Op, _batch_hook, _edge, _fw_active, _run_hooked
from ..autograd.grad_mode import _state
from ..profiler.profiler import _active as _prof

# NOTE [Unwatched no-grad views]
# A view op (view, reshape, permute, transpose, unbind) or a cat whose call records nothing (no
# input needs a gradient, or grad mode is off) makes through Op._run only its NumPy view and the
# Tensor around it, plus a ctx nobody keeps: ~1.5 us of Python a call, 2-4x the work itself. A
# GPT decode step makes ~10 such calls a block. Those ops take the array and wrap it themselves
# (`_make_view`: the view shares the input's version counter and base, as from _run) when nothing
# watches op calls either: vmap and meta tensors (_batch_hook), forward AD (_fw_active), the
# profiler, and compile's capture (which replaces Op._run) and replay (_run_hooked). `unwatched`
# is that test; NOTE [Unrecorded 2-D matmul] in products.py is the same idea for matmul. F.linear's
# small products, F.layer_norm, F.scaled_dot_product_attention's fused case and same-shape
# add/mul (NOTE [Unrecorded same-shape ops] in elementwise.py) take it too; they are what
# benchmarks/generate_ab.py switches off and on.
_PLAIN_RUN = Op.__dict__["_run"]


def unwatched():
    """True when no hook sees op calls (see NOTE [Unwatched no-grad views])."""
    return (_prof.prof is None and _batch_hook[0] is None and not _fw_active[0]
            and not _run_hooked[0] and Op.__dict__["_run"] is _PLAIN_RUN)


def backward_on_arrays(grad):
    """Whether a backward formula may take its products on the arrays (NOTE [Unrecorded matrix
    backward] in products.py): nothing records it (grad mode off: no create_graph), nothing
    watches op calls, and the gradient is a plain tensor."""
    return not _state.enabled and type(grad) is Tensor and unwatched()


def records(tensors):
    """Whether an op call on ``tensors`` would record a node (grad mode on and one needs it)."""
    if _state.enabled:
        for t in tensors:
            if t._requires_grad:
                return True
    return False


@dataclass
class OpInfo:
    """How a public op is exposed. What the generic tests know about it (samples, reference,
    dtypes, tolerances) is its line in ember/testing/_op_table.py."""

    name: str
    fn: Callable
    method: bool = True
    inplace: bool = False


OPS: dict[str, OpInfo] = {}
IMPLS: dict[str, Callable] = {}  # qualified name -> the op's implementation (no out= layer)
FUNCTIONS: dict[str, Callable] = {}  # every public function, for ember/__init__
NAMESPACES: dict[str, dict[str, Callable]] = {}  # "linalg" -> ember.linalg's functions


def register(name, method=True, inplace=False, aliases=(), namespace=None, wrap_out=True,
             params=None, deprecated=None, out_dtype=False, out_exact=False):
    """Decorator for an Op class or a plain function implementing ``ember.<name>``.

    With ``namespace="linalg"`` the function is ``ember.linalg.<name>`` instead (op database
    key ``"linalg.<name>"``). ``wrap_out=False`` is for functions that take ``out=`` themselves:
    they are registered as they are. ``params``: a callable whose parameters are the op's
    public ones, for an Op whose forward takes ``*params`` (see NOTE [Registered signatures]).
    ``deprecated="alpha"``: the op also takes torch's deprecated overload that gives that
    keyword-only scalar positionally after the input (NOTE [Deprecated scalar-first overloads]).
    ``out_dtype=True``: with ``out=`` and no ``dtype=``, the op computes in out's dtype, as
    torch's sum/prod/nansum/cumsum/cumprod do (``sum(float_x, out=long_t)`` sums the truncated
    values; a cast of the float sum would round differently).
    ``out_exact=True``: ``out=`` must have the result's dtype (NOTE [out= of another dtype]).
    """

    def deco(obj):
        impl = obj.apply if isinstance(obj, type) else obj
        qualified = name if namespace is None else f"{namespace}.{name}"
        sig = _public_params(obj, impl, params) if wrap_out else None
        if wrap_out and sig is not None:
            fn = _bound_wrapper(impl, sig, name, qualified, "function", deprecated, out_dtype)
            fn.__doc__ = obj.__doc__
        elif wrap_out:
            fn = _with_out(impl, qualified)
            fn.__name__ = name
            fn.__doc__ = obj.__doc__
            fn.__qualname__ = name
        else:
            fn = impl
        IMPLS[qualified] = impl
        table = FUNCTIONS if namespace is None else NAMESPACES.setdefault(namespace, {})
        table[name] = fn
        for a in aliases:
            table[a] = fn
        if method:
            for n in (name, *aliases):
                if sig is not None:
                    m = _bound_wrapper(impl, sig, n, n, "method", deprecated)
                    m.__doc__ = obj.__doc__
                else:
                    m = _method(fn)
                    m.__name__ = n
                setattr(Tensor, n, m)
        if inplace:
            for n in (name, *aliases):
                if sig is not None:
                    m = _bound_wrapper(impl, sig, n + "_", n + "_", "inplace", deprecated)
                else:
                    m = _inplace_method(impl, n + "_")
                setattr(Tensor, n + "_", m)
        OPS[qualified] = OpInfo(qualified, fn, method, inplace)
        if out_exact:
            EXACT_OUT.add(qualified)
        return obj

    return deco


def export(fn=None, *, name=None, method=False, out=False):
    """Make a plain function public as ``ember.<name>`` (and optionally a Tensor method).

    ``out=True`` adds torch's keyword ``out=`` (see `with_out`) to the public function.
    """

    def deco(f):
        n = name or f.__name__
        if out:
            f = with_out(f, n)
        FUNCTIONS[n] = f
        if method:
            m = _method(f)
            try:  # the method's signature: the function's with self for input, without out=
                params = list(inspect.signature(f).parameters.values())
                params[0] = params[0].replace(name="self")
                m.__signature__ = inspect.Signature([p for p in params if p.name != "out"])
            except (TypeError, ValueError, IndexError):
                pass
            setattr(Tensor, n, m)
        return f

    return deco(fn) if fn is not None else deco


def _method(fn):
    def m(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    m.__name__ = fn.__name__
    m.__doc__ = fn.__doc__
    return m


# NumPy spellings torch's argument parser accepts for every op with dim/keepdim
_NUMPY_KWARGS = {"axis": "dim", "keepdims": "keepdim"}


def numpy_kwargs(kwargs):
    """kwargs with NumPy's `axis`/`keepdims` renamed to torch's `dim`/`keepdim`, as torch does:
    `x.sum(axis=1, keepdims=True)` is `x.sum(dim=1, keepdim=True)`."""
    for alias, canonical in _NUMPY_KWARGS.items():
        if alias in kwargs:
            if canonical in kwargs:
                raise TypeError(f"got both '{canonical}' and its alias '{alias}'; pass one.")
            kwargs[canonical] = kwargs.pop(alias)
    return kwargs


# NOTE [Registered signatures]
# A registered op's public function, Tensor method and in-place method are generated once, at
# registration, as real Python functions with the op's own parameters (an Op class's forward
# without ctx, or the function's) plus torch's keyword-only ``out=``: Python's call machinery then
# binds positional and keyword forms (``ember.abs(input=t)``), reports a missing or unexpected
# argument in its usual TypeError naming the op, and inspect.signature shows the parameters. No
# per-call binding work is added: the generated body is one call of the implementation (with a
# shorter call when every defaulted parameter has its default). Parameters are passed on as the
# implementation declares them (positionally, or by keyword for keyword-only ones), so an Op
# receives tensors positionally as before. An op whose implementation takes *args/**kwargs keeps
# the generic (*args, out=None, **kwargs) wrapper.
_ARRAY_NAMES = {"x", "a", "t", "self", "inp", "arr", "data"}
_P = inspect.Parameter


def _public_params(obj, impl, src=None):
    """The op's parameters as its public function shows them, or None when they cannot be
    given (var-args, an ``out`` of its own, names the generated code reserves)."""
    try:
        if src is not None:
            params = list(inspect.signature(src).parameters.values())
        elif isinstance(obj, type):
            params = list(inspect.signature(obj.forward).parameters.values())[1:]
        else:
            params = list(inspect.signature(impl).parameters.values())
    except (TypeError, ValueError):
        return None
    if not params or params[0].kind not in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD):
        return None
    for p in params:
        if (p.kind in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD) or p.name in ("out", "self")
                and p is not params[0] or p.name.startswith("_")):
            return None
    if (isinstance(obj, type) or src is not None) and params[0].name in _ARRAY_NAMES:
        params[0] = params[0].replace(name="input")  # passed on positionally: only the name
    return params


def _bound_wrapper(impl, params, name, qualified, kind, deprecated=None, out_dtype=False):
    """Generate the public function (kind "function": with out=), the Tensor method ("method":
    first parameter self) or the in-place method ("inplace") of a registered op; see NOTE
    [Registered signatures]."""
    params = list(params)
    if kind != "function":
        params[0] = params[0].replace(name="self")
    # module functions are looked up at call time (_reg.write_out): graph capture patches them
    env = {"_impl": impl, "_reg": sys.modules[__name__], "_qual": qualified,
           "_np_alias": _np_alias, "_iname": name, "_prof": _prof, "_Tensor": Tensor}
    # an Op's apply only checks for the profiler and calls _run: done here, a call less
    # (_cls._run looked up per call, as apply does: graph capture patches Op._run)
    run = getattr(impl, "__self__", None)
    if run is not None and getattr(impl, "__func__", None) is Op.apply.__func__:
        env["_cls"] = run
    else:
        run = None
    head, call, short, defaulted = [], [], [], []
    seen_kwonly = False
    # a required dim/keepdim may come as NumPy's axis=/keepdims=: it gets a sentinel default in
    # the generated def (the shown signature keeps it required) when no required one follows
    names = [p.name for p in params]
    aliased = [n for n in ("dim", "keepdim") if n in names]
    required = {}
    for n in aliased:
        i = names.index(n)
        if params[i].default is _P.empty:
            if any(q.default is _P.empty and q.kind is not _P.KEYWORD_ONLY
                   for q in params[i + 1:]):
                aliased = []
                break
            required[n] = i
    env["_REQ"] = _REQUIRED
    for i, p in enumerate(params):
        text = p.name
        if p.name in required and aliased:
            text += "=_REQ"
        if p.default is not _P.empty:
            env[f"_d{i}"] = p.default
            text += f"=_d{i}"
            defaulted.append(f"{p.name} is _d{i}")
        if p.kind is _P.KEYWORD_ONLY:
            if not seen_kwonly:
                head.append("*_dep" if deprecated else "*")
                seen_kwonly = True
            call.append(f"{p.name}={p.name}")
        else:
            call.append(p.name)
            if p.default is _P.empty:
                short.append(p.name)
        head.append(text)
        if p.kind is _P.POSITIONAL_ONLY and (i + 1 == len(params)
                                             or params[i + 1].kind is not _P.POSITIONAL_ONLY):
            head.append("/")
    shown = list(params)
    if kind == "function":
        if not seen_kwonly:
            head.append("*")
        head.append("out=None")
        shown.append(_P("out", _P.KEYWORD_ONLY, default=None))
    if aliased:
        head.append("**_np")
    fname = name if name.isidentifier() and not keyword.iskeyword(name) else "_op"
    body = []
    if aliased:
        targets = ", ".join(aliased)
        defaults = ", ".join("_REQ" if n in required else f"_d{names.index(n)}"
                             for n in aliased)
        body.append(f"    if _np:\n        {targets}, = _np_alias(_qual, _np, "
                    f"{tuple(aliased)!r}, ({defaults},), {targets})")
        for n in required:
            body.append(f"    if {n} is _REQ:\n        raise TypeError(\"{name}() missing "
                        f"required argument '{n}'\")")
    first = "self" if kind != "function" else params[0].name
    if deprecated:
        positional = [first] + [p.name for p in params[1:] if p.kind is not _P.KEYWORD_ONLY]
        d = f"_d{names.index(deprecated)}"
        body.append(f"    if _dep:\n        ({', '.join(positional)},), {deprecated} = "
                    f"_reg.scalar_first(_iname, {deprecated!r}, ({', '.join(positional)},), "
                    f"_dep, {deprecated} is not {d})")
    if kind == "inplace":
        rest = ", ".join(["_impl", "_iname"] + call[1:])
        body.append(f"    return _reg.apply_inplace({first}, {rest})")
    else:
        full = ", ".join(call)
        if kind == "function":
            res = f"_impl({full})"
            if defaulted and len(defaulted) == len(params) - len(short):
                cond = " and ".join(defaulted)
                if run is not None:
                    body.append(f"    if out is None and _prof.prof is None and {cond}:\n"
                                f"        return _cls._run({', '.join(short)})")
                body.append(f"    if out is None and {cond}:\n"
                            f"        return _impl({', '.join(short)})")
            body.append(f"    if out is None:\n        return {res}")
            if out_dtype:  # see register()
                body.append("    if dtype is None and isinstance(out, _Tensor):\n"
                            "        dtype = out.dtype")
            body.append(f"    return _reg.write_out(out, {res}, _qual)")
        else:
            if defaulted and len(defaulted) == len(params) - len(short):
                cond = " and ".join(defaulted)
                if run is not None:
                    body.append(f"    if _prof.prof is None and {cond}:\n"
                                f"        return _cls._run({', '.join(short)})")
                body.append(f"    if {cond}:\n        return _impl({', '.join(short)})")
            elif run is not None:
                body.append(f"    if _prof.prof is None:\n        return _cls._run({full})")
            body.append(f"    return _impl({full})")
    if kind == "function" and params[0].name == "input":
        # NOTE [A non-tensor input]: a number or list where the op wants a tensor fails inside
        # as an AttributeError ('float' object has no attribute 'dtype'); torch's argument
        # parser raises TypeError. The check runs only on that error (a try costs nothing).
        body = (["    try:"] + ["    " + line.replace("\n", "\n    ") for line in body]
                + ['    except AttributeError:\n'
                   '        _reg.ensure_tensor(input, _iname, "input", 1)\n'
                   '        raise'])
    src = f"def {fname}({', '.join(head)}):\n" + "\n".join(body) + "\n"
    exec(compile(src, f"<ember op {qualified}>", "exec"), env)  # source generated once per op
    fn = env[fname]
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    fn._ember_impl = impl  # for tools/tensor_methods.py (not __wrapped__: that is a signature)
    if aliased or deprecated or kind == "function":
        fn.__signature__ = inspect.Signature(shown)
    return fn


# NOTE [Deprecated scalar-first overloads]
# torch still accepts, with a deprecation warning, the torch 0.x forms that give an op's scalar
# before its tensors: ``p.data.add_(-lr, grad)`` (add/sub: alpha), ``addcmul_(1 - beta2, g, g)``
# and ``addcdiv_(-step, m, denom)`` (value). Old tutorials and hand-written optimizers use them.
# The generated wrapper of such an op collects one extra positional argument in ``*_dep`` (an
# empty tuple on every other call: one truth test) and then shifts the arguments back into place.
def scalar_first(name, scalar_name, positional, extra, scalar_given):
    """(positional arguments, scalar) of a call in the deprecated scalar-first form."""
    if len(extra) != 1 or scalar_given:
        raise TypeError(f"{name}() takes {len(positional)} positional arguments but "
                        f"{len(positional) + len(extra)} were given"
                        + (f" (and {scalar_name}= as a keyword)" if scalar_given else ""))
    scalar = positional[1]
    if isinstance(scalar, Tensor) and scalar.dim() == 0:
        scalar = scalar.item()
    if not isinstance(scalar, (int, float, complex, np.number)):
        raise TypeError(f"{name}(): with {len(positional) + 1} positional arguments the second "
                        f"is the deprecated positional {scalar_name}, a number; got "
                        f"{type(scalar).__name__}")
    warnings.warn(f"{name}() with {scalar_name} given positionally before the tensors is a "
                  f"deprecated overload; pass it as the keyword {scalar_name}= instead.",
                  UserWarning, stacklevel=3)
    return (positional[0], *positional[2:], extra[0]), scalar


_REQUIRED = object()  # the generated default of a required dim reachable through axis=


def _np_alias(name, extra, keys, defaults, *values):
    """NumPy's axis=/keepdims= spellings (see numpy_kwargs) reaching a generated wrapper: the
    values of the op's ``keys`` (dim and/or keepdim) with the aliases applied."""
    op = name.rsplit(".", 1)[-1]
    given = {k: v for k, v, d in zip(keys, values, defaults, strict=True) if v is not d}
    kw = numpy_kwargs({**extra, **given})
    for k in kw:
        if k not in keys:
            raise TypeError(f"{op}() got an unexpected keyword argument '{k}'")
    return tuple(kw.get(k, v) for k, v in zip(keys, values, strict=True))


def _with_out(impl, name):
    def fn(*args, out=None, **kwargs):
        if kwargs and ("axis" in kwargs or "keepdims" in kwargs):
            kwargs = numpy_kwargs(kwargs)
        if out is None:
            return impl(*args, **kwargs)
        return write_out(out, impl(*args, **kwargs), name)

    return fn


def with_out(impl, name):
    """``impl`` with torch's keyword-only ``out=`` added: the result is copied into ``out``
    (see `write_out`). The wrapper's signature is impl's plus ``out``."""
    fn = _with_out(impl, name)
    fn.__name__ = fn.__qualname__ = name.rsplit(".", 1)[-1]
    fn.__doc__ = impl.__doc__
    sig = inspect.signature(impl)
    params = list(sig.parameters.values())
    at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    params.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    fn.__signature__ = sig.replace(parameters=params)
    return fn


# NOTE [Resizing out=]
# torch resizes an out= tensor whose shape is not the result's. An empty one is resized
# silently (the documented way to let the op pick the shape); one with elements is resized too,
# with a UserWarning saying that this is deprecated. ember does both. The resized tensor gets new
# memory of the result's shape: if it was a view, its base no longer sees it (torch grows the
# shared storage instead; a program that relies on that reads memory torch leaves unset).
def _resize_out(out, shape, name):
    if out._data.size != 0:
        warnings.warn(f"{name}(): the out= tensor of shape {list(out.shape)} has elements and was "
                      f"resized to the result's shape {list(shape)}; resizing a non-empty out= "
                      "is deprecated (torch too). Pass an empty tensor (t.resize_(0)) or one of "
                      "the result's shape.", UserWarning, stacklevel=4)
    out._data = np.empty(shape, out._data.dtype)


# NOTE [out= of another dtype]
# Most ops compute in their result dtype and cast into out= when the cast keeps the category
# (`torch.exp(float32_x, out=float64_t)`). torch's dtype-preserving unary ops (abs, neg, sign,
# sgn, floor, ceil, round, trunc, frac, clamp, bitwise_not, nan_to_num) and the predicates that
# return bool (isposinf, isneginf, signbit) instead demand out='s dtype be the result's, and raise
# RuntimeError otherwise; those ops are registered with out_exact=True and listed here.
EXACT_OUT: set[str] = set()


def write_out(out, result, name):
    """Copy an op's result into ``out=`` tensors (resized to the result's shape as torch does,
    see NOTE [Resizing out=])."""
    if isinstance(out, (tuple, list)):
        for o, r in zip(out, result):
            write_out(o, r, name)
        if isinstance(result, tuple):  # namedtuples take their fields positionally
            return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
        return out
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if _state.enabled and (out._requires_grad or result._requires_grad) and not (
            name in _UNDIFFERENTIATED_IN_TORCH and not out._requires_grad):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if name in EXACT_OUT and out.dtype != result.dtype and not (
            name == "abs" and out.dtype.to_real() == result.dtype):
        # (abs: a complex input's real result may go into an out= of the input's dtype)
        raise RuntimeError(f"{name}(): out= has dtype {out.dtype}, expected the result's dtype "
                           f"{result.dtype} (this op does not cast into out=; see NOTE [out= of "
                           "another dtype])")
    if not _can_store(result.dtype, out.dtype):
        raise RuntimeError(f"{name}(): result type {result.dtype} can't be cast to the desired "
                           f"output type {out.dtype}")
    if out._data.shape != result._data.shape:
        _resize_out(out, result._data.shape, name)
    np.copyto(out._data, result._data, casting="unsafe")
    out._bump_version()  # (through the method: a compile capture sees the write)
    if result._requires_grad and _state.enabled:  # (only the ops of _UNDIFFERENTIATED_IN_TORCH)
        from .inplace import rebase_history
        rebase_history(out, result)
    return out


# torch refuses out= when an input requires grad only for ops it can differentiate: an op
# without a derivative there (floor_divide) writes out= and marks it as requiring grad. ember
# differentiates these ops (docs/DEVIATIONS.md, Gradient availability), so out= takes the
# result's history, as an in-place op would.
_UNDIFFERENTIATED_IN_TORCH = frozenset({"floor_divide"})


# ---------------------------------------------------------------------------------------------
# in-place


def _inplace_method(impl, name):
    def m(self, *args, **kwargs):
        return apply_inplace(self, impl, name, *args, **kwargs)

    m.__name__ = name
    return m


def check_inplace(self, name):
    """Raise for in-place writes autograd cannot support (leaf that requires grad)."""
    if _state.enabled:
        if self._requires_grad and self._grad_fn is None and self._base is None:
            raise RuntimeError(f"{name}: a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        base = self._base
        if base is not None and base._requires_grad and base._grad_fn is None:
            raise RuntimeError(f"{name}: a view of a leaf Variable that requires grad is being "
                               "used in an in-place operation.")


def _can_store(frm, to):
    """An op result may go into a tensor of dtype ``to`` (out=, in place) when casting keeps its
    category; torch lets a complex result into a float tensor nowhere."""
    return D.can_cast(frm, to)


def write_into(self, arr, name):
    """Store an op result into self's memory (dtype and shape checked), bump the version."""
    dst = self._data
    if arr.shape != dst.shape:
        try:
            target = np.broadcast_shapes(arr.shape, dst.shape)
        except ValueError:
            target = None
        if target != dst.shape:
            got = list(target) if target is not None else list(arr.shape)
            raise RuntimeError(f"{name}: output with shape {list(dst.shape)} doesn't match the "
                               f"broadcast shape {got}")
    if arr.dtype != dst.dtype and not _can_store(D.from_numpy_dtype(arr.dtype),
                                                  D.from_numpy_dtype(dst.dtype)):
        raise RuntimeError(f"{name}: result type {D.from_numpy_dtype(arr.dtype)} can't be cast "
                           f"to the desired output type {D.from_numpy_dtype(dst.dtype)}")
    if self._meta:  # nothing to write: NOTE [Meta tensors]
        self._bump_version()
        return
    if not dst.flags.writeable:
        raise RuntimeError(
            f"{name}: cannot write in place into this tensor of shape {list(dst.shape)}: its "
            "memory is read-only (it wraps a read-only NumPy array, or it is an expanded/"
            "broadcast view where several elements share one memory location). Clone it first.")
    np.copyto(dst, arr, casting="unsafe")
    self._bump_version()  # (through the method: a compile capture sees the write)


def apply_inplace(self, impl, name, *args, **kwargs):
    """Run ``impl(self, ...)`` and store the result into self (see NOTE [In-place autograd])."""
    # NOTE [In-place autograd]: the op runs out of place on a snapshot that carries self's
    # history (a copy, since the op may save its input for backward), the result is copied
    # into self's memory, and self's history is rebased onto the result's node. For a view,
    # the base's history is rebased (ops/inplace.py) and views refresh their grad_fn lazily.
    check_inplace(self, name)
    record = _state.enabled and (self._requires_grad or any(
        isinstance(a, Tensor) and a._requires_grad for a in args))
    if not record:
        prev = _state.enabled
        _state.enabled = False
        try:
            res = impl(self, *args, **kwargs)
        finally:
            _state.enabled = prev
        _store_result(self, res, name)
        if _fw_active[0]:
            from .inplace import carry_tangent
            carry_tangent(self, res)
        return self
    snap = _snapshot(self)
    snap._fw = self._fw  # (forward AD: the op's tangent starts from self's)
    if self._requires_grad:
        node, nr = _edge(self)
        snap._grad_fn, snap._output_nr, snap._requires_grad = node, nr, True
        if type(node).__name__ == "AccumulateGrad":  # pragma: no cover - prevented above
            snap._grad_fn = None
    res = impl(snap, *args, **kwargs)
    _store_result(self, res, name)
    from .inplace import rebase_history
    rebase_history(self, res)
    if _fw_active[0]:
        from .inplace import carry_tangent
        carry_tangent(self, res)
    return self


# (module-level, looked up at each call: a compile capture replaces both, NOTE [In-place writes
# in a compiled call] in ember/_dynamo/writes.py)
def _snapshot(self):
    """A copy of self's values for an in-place op that records autograd (the op may save it)."""
    return _make(np.array(self._data, copy=True))


def _store_result(self, res, name):
    """Store apply_inplace's result tensor ``res`` (a fresh value no one else holds) into self."""
    if _batch_hook[0] is not None:  # inside vmap
        from ..func._batched import is_batched
        if is_batched(res) and not is_batched(self):
            # (each sample would write its own value into the one shared tensor)
            raise RuntimeError(
                f"vmap: {name}(self, *extra_args) is not possible because self is not batched "
                f"but the result is (shape {list(self.shape)} per sample); write into a "
                "batched tensor, or use the out-of-place op.")
    write_into(self, res._data, name)


# ---------------------------------------------------------------------------------------------
# helpers shared by op families


def to_array(x, dt):
    """A Python scalar or array-like as an ndarray of numpy dtype dt."""
    return np.asarray(x).astype(dt, copy=False)


def result_dtype(*args):
    """torch.result_type over tensors and Python scalars (None entries ignored)."""
    dim = zero = sc = None
    for a in args:
        if isinstance(a, Tensor):
            d = D._FROM_NP[a._data.dtype]
            if a._data.ndim:
                dim = d if dim is None else D.promote_types(dim, d)
            else:
                zero = d if zero is None else D.promote_types(zero, d)
        elif a is not None:
            if isinstance(a, np.ndarray):
                d = D.from_numpy_dtype(a.dtype)
                dim = d if dim is None else D.promote_types(dim, d)
                continue
            d = D.scalar_dtype(a)
            sc = d if sc is None else D.promote_types(sc, d)
    return D.result_type_from(dim, zero, sc)


def promote_args(name, *args, floating=False):
    """Bring tensor / scalar operands to their common dtype (casts are differentiable);
    ``floating``: an integer or bool common dtype becomes the default float dtype (true
    division, atan2: the numbers are converted once, to the float dtype, so -3 beside a uint8
    tensor stays -3.0)."""
    dt = result_dtype(*args)
    if floating and not (dt.is_floating_point or dt.is_complex):
        dt = D.get_default_dtype()
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(a if a._data.dtype == dt.np else a.to(dt))
        elif isinstance(a, (int, float, complex, bool, np.number, np.bool_)):
            out.append(np.asarray(a).astype(dt.np))
        elif a is None:
            out.append(None)
        else:
            raise TypeError(f"{name}(): expected Tensor or Number operands, got "
                            f"{type(a).__name__}")
    return out


def sum_to(grad, shape):
    """Reduce a broadcast gradient back to ``shape`` (undoes broadcasting); differentiable."""
    gshape = grad._data.shape
    if gshape == shape:
        return grad
    shape = tuple(shape)
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and gshape[lead + i] != 1:
            dims.append(lead + i)
    if dims:
        grad = grad.sum(dim=tuple(dims), keepdim=True)
    if lead:
        grad = grad.reshape(shape)
    elif tuple(grad._data.shape) != shape:
        grad = grad.reshape(shape)
    return grad


def keepdim_needs_dim(name, dim, keepdim):
    """Raise torch's TypeError for `keepdim=True` without a `dim` (max, median, prod...)."""
    if dim is None and keepdim:
        raise TypeError(f"{name}(): keepdim=True needs a dim to reduce; got dim=None. Pass "
                        f"dim=, or drop keepdim to reduce over all elements.")


def norm_dims(dim, ndim, name):
    """dim argument (None, int, or sequence) as a sorted tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    n = max(ndim, 1)
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(f"{name}: Dimension out of range (expected to be in range of "
                             f"[{-n}, {n - 1}], but got {d})")
        out.append(d % n if ndim else 0)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{name}: dim {d} appears multiple times in the list of dims")
    return tuple(sorted(out)) if ndim else ()


# NOTE [Number operands]
# torch's signatures decide where a binary op takes a Python number instead of a tensor: add,
# mul, div, pow, remainder, xlogy and the bitwise ops on either side (`torch.pow(2, t)`), fmod,
# copysign and the comparisons only as `other` (`torch.lt(2, t)` is a TypeError; the operator
# `2 < t` is `t > 2`), maximum/minimum/fmax/fmin, atan2, hypot and the logical, logaddexp, ldexp,
# nextafter and isclose ops nowhere. A number where the op takes none is torch's TypeError
# (checked on the slow path only: two tensors of one dtype never see it).
def tensor_operands(name, input, other, numbers):
    """Raise torch's TypeError for a number operand ``numbers`` ("both", "other" or "none")
    does not allow (see NOTE [Number operands])."""
    if numbers != "both":
        ensure_tensor(input, name, "input", 1)
    if numbers == "none":
        ensure_tensor(other, name, "other", 2)


def ensure_tensor(x, name, arg="input", position=None):
    """x, or torch's TypeError naming the op and the argument (and its position, as torch's
    argument parser does for a positional one) when x is not a tensor."""
    if not isinstance(x, Tensor):
        at = f" (position {position})" if position else ""
        raise TypeError(f"{name}(): argument '{arg}'{at} must be Tensor, not {type(x).__name__}")
    return x


def scalar_type(x):
    return isinstance(x, (int, float, complex, bool, np.number, np.bool_))


def any_requires_grad(*args):
    return any(isinstance(a, Tensor) and a._requires_grad for a in args)

