"""``ember._foreach_*``: an op applied to every tensor of a list (torch's multi-tensor API, which
optimizers and EMA helpers call, e.g. timm's ``ModelEmaV3``: ``_foreach_lerp_(ema, params,
weight=1 - decay)``).

NOTE [Foreach ops]
torch fuses each list into a few kernels; here each is a loop over the Tensor method of the same
name, so values, dtype rules, broadcasting and autograd are exactly the method's. The forms are
torch's: the second operand may be one scalar (``scalar=``), one scalar per tensor
(``scalars=``), one tensor for all (``other=``) or a tensor per tensor (``other=`` a list);
in-place forms (``_foreach_add_``) return the list they were given, the others a tuple.

Example:
    >>> import ember
    >>> xs = [ember.ones(2), ember.ones(3)]
    >>> ember._foreach_mul(xs, [2.0, 3.0])
    (tensor([2., 2.]), tensor([3., 3., 3.]))
"""
from __future__ import annotations

from ._tensor import Tensor

__all__: list = []   # the functions are installed on ember by install()

_UNARY = ("abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 "
          "log1p log2 neg reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc").split()
# binary ops and the keyword names their second operand may take
_BINARY = {"add": ("other", "scalar", "scalars"), "sub": ("other", "scalar", "scalars"),
           "mul": ("other", "scalar", "scalars"), "div": ("other", "scalar", "scalars"),
           "maximum": ("other", "scalar", "scalars"), "minimum": ("other", "scalar", "scalars"),
           "clamp_min": ("other", "scalar", "scalars"),
           "clamp_max": ("other", "scalar", "scalars"), "pow": ("exponent",)}
_WITH_ALPHA = ("add", "sub")


def _tensors(name, self):
    if isinstance(self, Tensor) or not isinstance(self, (list, tuple)):
        raise TypeError(f"{name}(): argument 'self' must be a list or tuple of Tensors, not "
                        f"{type(self).__name__}")
    if not self:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return self


def _per_tensor(name, self, value):
    """``value`` split over the tensors: a list gives one item per tensor, else all share it."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(self):
            if value and all(isinstance(v, Tensor) for v in value):
                raise RuntimeError("Tensor lists must have the same number of tensors, got "
                                   f"{len(self)} and {len(value)}")
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return list(value)
    return [value] * len(self)


def _operand(name, args, kwargs, names):
    """The second operand, given positionally or by one of its keyword names."""
    given = [k for k in names if k in kwargs]
    if len(args) + len(given) != 1 or set(kwargs) - set(names) - {"alpha"}:
        raise TypeError(f"{name}() takes a list of tensors and one operand (positional or one of "
                        f"{', '.join(n + '=' for n in names)}), got {len(args)} positional and "
                        f"keywords {sorted(kwargs)}")
    return args[0] if args else kwargs[given[0]]


def _unary(op):
    def out_of_place(self):
        return tuple(getattr(t, op)() for t in _tensors(f"_foreach_{op}", self))

    def in_place(self):
        for t in _tensors(f"_foreach_{op}_", self):
            getattr(t, op + "_")()
        return self
    return out_of_place, in_place


def _apply(t, op, value, alpha, inplace):
    if op in ("maximum", "minimum") and not isinstance(value, Tensor):
        op = "clamp_min" if op == "maximum" else "clamp_max"   # a scalar bound
    if op in ("maximum", "minimum"):   # no in-place Tensor method: write the result back
        result = getattr(t, op)(value)
        return t.copy_(result) if inplace else result
    method = getattr(t, op + "_" if inplace else op)
    return method(value) if alpha is None else method(value, alpha=alpha)


def _binary(op, names):
    def call(inplace, self, args, kwargs):
        name = f"_foreach_{op}{'_' if inplace else ''}"
        self = _tensors(name, self)
        value = _operand(name, args, kwargs, names)
        alpha = kwargs.get("alpha")
        tensor_operand = isinstance(value, Tensor) or (
            isinstance(value, (list, tuple)) and all(isinstance(v, Tensor) for v in value))
        if alpha is not None and not (op in _WITH_ALPHA and tensor_operand):
            raise TypeError(f"{name}(): alpha= is only taken with a tensor or a list of "
                            "tensors as the operand")
        if isinstance(value, Tensor) and value.dim() != 0:   # torch's `.Tensor` form
            raise RuntimeError(f"{name}: scalar tensor expected to be 0 dim but it has "
                               f"{value.dim()} dimensions and {value.numel()} elements.")
        values = _per_tensor(name, self, value)
        out = [_apply(t, op, v, alpha, inplace) for t, v in zip(self, values)]
        return self if inplace else tuple(out)

    def out_of_place(self, *args, **kwargs):
        return call(False, self, args, kwargs)

    def in_place(self, *args, **kwargs):
        return call(True, self, args, kwargs)
    return out_of_place, in_place


def _addc(op):
    def call(inplace, self, tensor1, tensor2, value=1, scalars=None):
        name = f"_foreach_{op}{'_' if inplace else ''}"
        self = _tensors(name, self)
        t1, t2 = _per_tensor(name, self, tensor1), _per_tensor(name, self, tensor2)
        values = _per_tensor(name, self, value if scalars is None else scalars)
        if isinstance(scalars, Tensor):   # one scalar per tensor, held in a 1-d tensor
            values = scalars.tolist()
        out = [getattr(t, op + "_" if inplace else op)(a, b, value=v)
               for t, a, b, v in zip(self, t1, t2, values)]
        return self if inplace else tuple(out)

    def out_of_place(self, tensor1, tensor2, value=1, scalars=None):
        return call(False, self, tensor1, tensor2, value, scalars)

    def in_place(self, tensor1, tensor2, value=1, scalars=None):
        return call(True, self, tensor1, tensor2, value, scalars)
    return out_of_place, in_place


def _lerp():
    def call(inplace, self, tensors1, weight):
        name = f"_foreach_lerp{'_' if inplace else ''}"
        self = _tensors(name, self)
        ends, weights = _per_tensor(name, self, tensors1), _per_tensor(name, self, weight)
        out = [(t.lerp_ if inplace else t.lerp)(e, w) for t, e, w in zip(self, ends, weights)]
        return self if inplace else tuple(out)

    def out_of_place(self, tensors1, weight=None, weights=None):
        return call(False, self, tensors1, weights if weight is None else weight)

    def in_place(self, tensors1, weight=None, weights=None):
        return call(True, self, tensors1, weights if weight is None else weight)
    return out_of_place, in_place


def _foreach_norm(self, ord=2, dtype=None):
    return tuple(t.norm(p=ord, dtype=dtype) if dtype is not None else t.norm(p=ord)
                 for t in _tensors("_foreach_norm", self))


def _foreach_clone(self, memory_format=None):
    return tuple(t.clone() for t in _tensors("_foreach_clone", self))


def _foreach_max(self):
    """The largest element of each tensor (0-d results), as torch's ``_foreach_max``."""
    out = []
    for t in _tensors("_foreach_max", self):
        if t.numel() == 0:
            raise RuntimeError("_foreach_max: cannot compute the maximum of an empty tensor "
                               f"(shape {tuple(t.shape)}); max over zero elements is undefined.")
        out.append(t.max())
    return tuple(out)


def _foreach_powsum(self, ord=2, dtype=None):
    """sum(|x| ** ord) of each tensor: the p-norm before its root."""
    out = []
    for t in _tensors("_foreach_powsum", self):
        if dtype is not None:
            t = t.to(dtype)
        out.append((t.abs() ** ord).sum())
    return tuple(out)


def _foreach_mm(self, mat2):
    self = _tensors("_foreach_mm", self)
    return tuple(a.mm(b) for a, b in zip(self, _per_tensor("_foreach_mm", self, mat2)))


def _foreach_zero_(self):
    for t in _tensors("_foreach_zero_", self):
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    self = _tensors("_foreach_copy_", self)
    for t, s in zip(self, _per_tensor("_foreach_copy_", self, src)):
        t.copy_(s)
    return self


def install(namespace: dict) -> None:
    """Put every ``_foreach_*`` function into ``namespace`` (ember's module dict)."""
    pairs = {op: _unary(op) for op in _UNARY}
    pairs.update({op: _binary(op, names) for op, names in _BINARY.items()})
    pairs.update({op: _addc(op) for op in ("addcdiv", "addcmul")})
    pairs["lerp"] = _lerp()
    for op, (out_of_place, in_place) in pairs.items():
        for fn, name in ((out_of_place, f"_foreach_{op}"), (in_place, f"_foreach_{op}_")):
            fn.__name__ = fn.__qualname__ = name
            namespace[name] = fn
    for fn in (_foreach_norm, _foreach_zero_, _foreach_copy_, _foreach_clone, _foreach_max,
               _foreach_powsum, _foreach_mm):
        namespace[fn.__name__] = fn
