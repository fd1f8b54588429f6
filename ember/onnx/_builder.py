"""The ONNX graph under construction: tensors (name, dtype, shape), nodes and initializers."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import ember

INT64_MAX = np.iinfo(np.int64).max


@dataclass
class T:
    """An ONNX value: its name, NumPy dtype and shape (None marks a dynamic dimension)."""

    name: str
    dtype: np.dtype
    shape: Any = None          # tuple, or None when unknown
    ragged: Any = None         # an axis whose length depends on the data (x[mask]), if any

    @property
    def rank(self) -> int:
        if self.shape is None:
            raise RuntimeError(f"ember.onnx.export: internal error: rank of {self.name} unknown")
        return len(self.shape)


def np_dtype(dtype) -> np.dtype:
    if isinstance(dtype, ember.dtype):
        return np.dtype(dtype.np)
    return np.dtype(dtype)


class Builder:
    """Accumulates ONNX nodes and initializers with unique value names."""

    def __init__(self, opset: int):
        import onnx
        self.onnx = onnx
        self.opset = opset
        self.nodes: list = []
        self.initializers: list = []
        self._names: set[str] = set()
        self._params: dict[int, T] = {}
        self._consts: dict = {}

    # ----------------------------------------------------------------- names and nodes
    def fresh(self, hint: str) -> str:
        base = hint or "v"
        name, i = base, 0
        while name in self._names:
            i += 1
            name = f"{base}_{i}"
        self._names.add(name)
        return name

    def reserve(self, name: str) -> None:
        self._names.add(name)

    def op(self, op_type: str, inputs: list, dtype=None, shape=None, outputs: int = 1,
           name: str | None = None, **attrs):
        """Append a node; returns its output T (or a list of T for ``outputs > 1``)."""
        in_names = [x.name if isinstance(x, T) else (x or "") for x in inputs]
        if shape is None and outputs == 1:
            shape = _infer_shape(op_type, inputs, attrs)
        if dtype is None:      # Where's condition is boolean: its values take the others'
            dtype = _first_dtype(inputs[1:] if op_type == "Where" else inputs)
        outs = [T(self.fresh(name or op_type.lower()), np_dtype(dtype), shape)
                for _ in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.onnx.helper.make_node(op_type, in_names, [o.name for o in outs],
                                                     name=self.fresh("n_" + op_type), **attrs))
        return outs[0] if outputs == 1 else outs

    # ----------------------------------------------------------------- constants
    def const(self, value, dtype=None, hint: str = "const") -> T:
        arr = np.asarray(value, dtype=np_dtype(dtype) if dtype is not None else None)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if arr.size <= 16 and key in self._consts:
            return self._consts[key]
        name = self.fresh(hint)
        self.initializers.append(self.onnx.numpy_helper.from_array(arr, name))
        t = T(name, arr.dtype, tuple(arr.shape))
        if arr.size <= 16:
            self._consts[key] = t
        return t

    def param(self, tensor, qualname: str) -> T:
        """An initializer holding a parameter or buffer (once per tensor object)."""
        cached = self._params.get(id(tensor))
        if cached is not None:
            return cached
        arr = np.ascontiguousarray(tensor.detach().numpy())
        name = self.fresh(qualname)
        self.initializers.append(self.onnx.numpy_helper.from_array(arr, name))
        t = T(name, arr.dtype, tuple(arr.shape))
        self._params[id(tensor)] = t
        return t

    def array_param(self, arr: np.ndarray, hint: str) -> T:
        name = self.fresh(hint)
        arr = np.ascontiguousarray(arr)
        self.initializers.append(self.onnx.numpy_helper.from_array(arr, name))
        return T(name, arr.dtype, tuple(arr.shape))

    # ----------------------------------------------------------------- conversions
    def tensor(self, v, dtype=None) -> T:
        """``v`` as an ONNX value: a T (cast to ``dtype`` if given) or a Python scalar/list."""
        if isinstance(v, T):
            return v if dtype is None or v.dtype == np_dtype(dtype) else self.cast(v, dtype)
        if isinstance(v, (list, tuple)) and any(isinstance(e, T) for e in v):
            return self.cast(self.i64_vec(v), dtype) if dtype is not None else self.i64_vec(v)
        if dtype is None:
            dtype = np.int64 if isinstance(v, (bool, int, np.integer)) and \
                not isinstance(v, bool) else (np.bool_ if isinstance(v, bool) else np.float32)
        return self.const(v, dtype)

    def cast(self, t: T, dtype) -> T:
        dt = np_dtype(dtype)
        if t.dtype == dt:
            return t
        to = self.onnx.helper.np_dtype_to_tensor_dtype(dt)
        return self.op("Cast", [t], dtype=dt, shape=t.shape, to=to)

    def i64_vec(self, items) -> T:
        """A 1-D int64 tensor from ints and 0-d/1-d int64 values (shape arguments)."""
        if isinstance(items, T):
            return items if items.shape is not None and len(items.shape) == 1 else \
                self.op("Reshape", [items, self.const([-1], np.int64)], dtype=np.int64,
                        shape=(None,))
        items = list(items)
        if all(not isinstance(e, T) for e in items):
            return self.const(np.array(items, dtype=np.int64).reshape(-1), np.int64)
        parts = []
        for e in items:
            if isinstance(e, T):
                e = self.cast(e, np.int64)
                if e.shape is None or len(e.shape) == 0:
                    e = self.op("Unsqueeze", [e, self.const([0], np.int64)], dtype=np.int64,
                                shape=(1,))
                parts.append(e)
            else:
                parts.append(self.const([int(e)], np.int64))
        return self.op("Concat", parts, dtype=np.int64, shape=(len(items),), axis=0)

    def shape_of(self, t: T) -> T:
        return self.op("Shape", [t], dtype=np.int64,
                       shape=(len(t.shape),) if t.shape is not None else (None,))

    def dim(self, t: T, i: int):
        """Size of dimension ``i`` of ``t``: an int if static, else a 0-d int64 value."""
        i = i % t.rank
        if t.shape[i] is not None:
            return t.shape[i]
        return self.op("Gather", [self.shape_of(t), self.const(i, np.int64)], dtype=np.int64,
                       shape=(), axis=0)

    def dims(self, t: T) -> list:
        return [self.dim(t, i) for i in range(t.rank)]

    def axes(self, op_type: str, inputs: list, axes, **kw):
        """Reduce*/Squeeze/Unsqueeze: axes as an attribute or an input depending on opset."""
        as_input = op_type in ("Squeeze", "Unsqueeze", "ReduceSum") or self.opset >= 18
        if axes is None:
            return op_type, inputs, kw
        if as_input:
            return op_type, inputs + [self.const(list(axes), np.int64)], kw
        kw["axes"] = list(axes)
        return op_type, inputs, kw


def _first_dtype(inputs):
    for x in inputs:
        if isinstance(x, T):
            return x.dtype
    return np.dtype(np.float32)


# ops whose output shape is the broadcast of their tensor inputs' shapes
_ELEMENTWISE = frozenset("""
    Add Sub Mul Div Pow Max Min Mod Where Equal Less Greater LessOrEqual GreaterOrEqual And Or
    Xor Not Neg Abs Exp Log Sqrt Sin Cos Tan Tanh Sigmoid Relu Erf Reciprocal Floor Ceil Sign
    Round IsNaN IsInf Cast Clip Atan Asin Acos Sinh Cosh Asinh Acosh Atanh Identity LeakyRelu
    Elu Softplus Softmax LogSoftmax BitwiseAnd BitwiseOr BitwiseXor BitwiseNot HardSigmoid
    Selu Celu ThresholdedRelu Softsign PRelu""".split())


def _broadcast(shapes):
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        known = [d for d in dims if d is not None and d != 1]
        if None in dims and not known:
            out.append(None)
        else:
            out.append(known[0] if known else 1)
    return tuple(out)


def _infer_shape(op_type: str, inputs: list, attrs: dict):
    """The output shape where it follows from the inputs' (None if unknown): translators
    compose intermediate values whose rank later ops need."""
    ts = [x for x in inputs if isinstance(x, T)]
    if op_type == "Reshape" and len(ts) == 2 and ts[1].shape is not None and \
            len(ts[1].shape) == 1 and ts[1].shape[0] is not None:
        return (None,) * ts[1].shape[0]         # the rank is the shape vector's length
    if not ts or any(t.shape is None for t in ts):
        return None
    if op_type in _ELEMENTWISE:
        return _broadcast([t.shape for t in ts])
    if op_type in ("Slice", "Tile", "ScatterElements", "ScatterND", "GatherElements",
                   "Trilu", "CumSum"):
        # the first input's rank (the indices' shape for GatherElements)
        src = ts[1] if op_type == "GatherElements" else ts[0]
        return src.shape if op_type != "Slice" and op_type != "Tile" else \
            (None,) * len(src.shape)
    if op_type == "Concat":
        axis = attrs["axis"] % len(ts[0].shape)
        sizes = [t.shape[axis] for t in ts]
        total = None if None in sizes else sum(sizes)
        return tuple(total if i == axis else d for i, d in enumerate(ts[0].shape))
    if op_type == "Transpose":
        perm = attrs.get("perm") or list(reversed(range(len(ts[0].shape))))
        return tuple(ts[0].shape[p] for p in perm)
    if op_type == "Gather" and len(ts) == 2:
        axis = attrs.get("axis", 0) % max(len(ts[0].shape), 1)
        return ts[0].shape[:axis] + tuple(ts[1].shape) + ts[0].shape[axis + 1:]
    if op_type == "Expand" and len(ts[1].shape) == 1 and ts[1].shape[0] is not None:
        return (None,) * max(ts[1].shape[0], len(ts[0].shape))
    return None
