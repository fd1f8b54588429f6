"""Views and reshapes (view, reshape, permute, transpose, expand, squeeze, flatten, narrow,
select, split, movedim, as_strided), contiguous/clone/casts. Views share storage and the
version counter with their input. Joining tensors (cat, stack) is in join.py."""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype as D
from .._backend import check_device, data_ptr, reusable_empty
from .._info import check_memory_format, contiguous_format, preserve_format, preserved_empty
from .._meta import check_not_meta, to_meta
from .._size import Size, int_sizes
from .._tensor import Tensor, _make, _make_view, _root_array, _wrap_dim
from ..autograd.function import Op, _batch_hook, rename_node
from ..autograd.grad_mode import _state
from .registry import export, norm_dims, register, sum_to, unwatched


def _shape_arg(shape, op="view"):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:  # a loop, not a generator: Python ints, the common case, are kept as they are
        if type(s) is not int:
            return int_sizes(shape, op, "shape" if op in ("view", "reshape") else "size")
    return shape


def _infer(name, numel, shape, src_shape):
    if min(shape, default=0) >= 0 and math.prod(shape) == numel:
        return shape  # nothing to infer and the sizes fit (per-op overhead: view, reshape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError(f"{name}: only one dimension can be inferred; got shape {list(shape)}")
    if any(s < -1 for s in shape):
        raise RuntimeError(f"{name}: invalid shape dimension {min(shape)}")
    known = math.prod(s for s in shape if s != -1)  # math.prod: ~20x np.prod on tuples
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"{name}: shape '{list(shape)}' is invalid for input of size "
                               f"{numel} (input shape {list(src_shape)})")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"{name}: shape '{list(shape)}' is invalid for input of size {numel} "
                           f"(input shape {list(src_shape)})")
    return shape


class View(Op):
    """A view with a new shape; the input's strides must allow it (else use reshape)."""

    view = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return _viewed(x, shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None


def _reshaped_copy(x, shape):
    """`x` with `shape` in memory of its own: np.reshape has already copied when no view of `x`
    has that shape, so copy only when it returned one."""
    y = np.reshape(x, shape)
    return y.copy() if np.may_share_memory(x, y) else y


class Reshape(Op):
    """A copy with a new shape (used by reshape when a view is impossible)."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return _reshaped_copy(x, shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None


def _as_view(x, shape):
    """Array ``x`` as a view of the given (inferred) shape, or None when its strides do not
    allow one."""
    y = x.view()
    try:
        y.shape = shape  # raises instead of copying when strides do not allow a view
    except AttributeError:
        return None
    return y


def _viewed(x, shape):
    """view's array: ``x`` as a view of ``shape`` (-1 inferred), else view's error."""
    shape = _infer("view", x.size, shape, x.shape)
    y = _as_view(x, shape)
    if y is None:
        raise RuntimeError(
            f"view size is not compatible with input tensor's size and stride (at least one "
            f"dimension spans across two contiguous subspaces); input shape "
            f"{list(x.shape)}, requested {list(shape)}. Use .reshape(...) instead.")
    return y


def view(input, *shape, size=None, dtype=None):
    """Tensor.view(*shape) or view(dtype) reinterpreting the bytes (``size=``/``dtype=`` are
    torch's keyword forms of the two)."""
    if size is not None or dtype is not None:
        shape = (size if dtype is None else dtype,) + shape
    if len(shape) == 1 and (isinstance(shape[0], D.dtype) or not isinstance(
            shape[0], (int, tuple, list, np.integer))):
        dt = D.to_dtype(shape[0])
        # a reinterpretation of the bytes: no gradient flows through it, and torch gives a
        # result that does not require grad rather than an error
        try:
            return _make_view(input._data.view(dt.np), input)
        except ValueError:  # NumPy's refusal: the last dim must be contiguous and fit
            raise RuntimeError(
                f"view: cannot view {input.dtype} as {dt} (different element sizes) for a "
                f"tensor of shape {list(input.shape)} and strides {list(input.stride())}; the "
                "last dim must have stride 1 and a size in bytes divisible by the new element "
                "size") from None
    shape = _shape_arg(shape)
    if (not input._requires_grad or not _state.enabled) and unwatched():
        return _make_view(_viewed(input._data, shape), input)  # NOTE [Unwatched no-grad views]
    return View.apply(input, shape)


def reshape(input, *shape_args, shape=None):
    """A view when strides allow it, else a copy, with the given shape."""
    shape = _infer("reshape", input._data.size,
                   _shape_arg(shape_args if shape is None else (shape,) + shape_args,
                              "reshape"),
                   input._data.shape)
    if (not input._requires_grad or not _state.enabled) and unwatched():
        # NOTE [Unwatched no-grad views]; else a copy, as Reshape's
        x = input._data
        y = _as_view(x, shape)
        return _make(_reshaped_copy(x, shape)) if y is None else _make_view(y, input)
    if shape == input._data.shape:
        return View.apply(input, shape)
    try:
        return View.apply(input, shape)
    except RuntimeError:
        return Reshape.apply(input, shape)


register("view")(view)
Tensor.view = view
register("reshape")(reshape)
Tensor.reshape = reshape
Tensor.view_as = lambda self, other: View.apply(self, tuple(other.shape))
Tensor.reshape_as = lambda self, other: reshape(self, tuple(other.shape))


class Permute(Op):
    """Reorder dims (a view)."""

    view = True

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return x.transpose(dims)

    @staticmethod
    def backward(ctx, grad):
        dims = ctx.dims  # the inverse permutation, without NumPy's per-call cost
        return grad.permute(tuple(sorted(range(len(dims)), key=dims.__getitem__))), None


def permute(input, *dims_args, dims=None):
    dims = _shape_arg(dims_args if dims is None else (dims,) + dims_args, "permute")
    nd = input._data.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    if sorted(dims) != _IOTA[nd]:  # not a permutation of 0..nd-1 as given: wrap, check
        d = tuple(_wrap_dim(x, nd, "permute") for x in dims)
        if len(set(d)) != nd:
            raise RuntimeError(f"permute(): duplicate dims are not allowed; got {list(dims)}")
        dims = d
    if (not input._requires_grad or not _state.enabled) and unwatched():
        return _make_view(input._data.transpose(dims), input)  # NOTE [Unwatched no-grad views]
    return Permute.apply(input, dims)


_IOTA = [list(range(n)) for n in range(65)]  # 0..n-1 by n, for permute's check (NumPy: n <= 64)


register("permute")(permute)
Tensor.permute = permute


def transpose(input, dim0, dim1):
    """Swap two dims (a view)."""
    nd = input._data.ndim
    if nd == 0:  # (dims 0 and -1 only)
        _wrap_dim(dim0, 0, "transpose")
        _wrap_dim(dim1, 0, "transpose")
        return View.apply(input, ())
    a = dim0 if 0 <= dim0 < nd else _wrap_dim(dim0, nd, "transpose")
    b = dim1 if 0 <= dim1 < nd else _wrap_dim(dim1, nd, "transpose")
    order = list(range(nd))
    order[a], order[b] = order[b], order[a]
    if (not input._requires_grad or not _state.enabled) and unwatched():
        return _make_view(input._data.transpose(order), input)  # NOTE [Unwatched no-grad views]
    return rename_node(Permute.apply(input, tuple(order)), "TransposeBackward0")


register("transpose", aliases=("swapdims",))(transpose)


def swapaxes(input, axis0, axis1):
    """NumPy's name for transpose, with NumPy's parameter names."""
    return transpose(input, axis0, axis1)


register("swapaxes")(swapaxes)


def t(input):
    """Transpose a <= 2-D tensor."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    out = transpose(input, 0, 1) if input.ndim == 2 else View.apply(input, tuple(input.shape))
    return rename_node(out, "TBackward0")  # torch's node names: NOTE [Node class names]


register("t")(t)
Tensor.T = property(lambda self: permute(self, *reversed(range(self.ndim))))
def _matrix_transpose(self, name):
    if self._data.ndim == 0:  # its own transpose, as torch's
        return self
    if self._data.ndim == 1:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                           f"Got {self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


Tensor.mT = property(lambda self: _matrix_transpose(self, "mT"))
# the conjugate transposes: conj() of a real tensor is the tensor itself
Tensor.H = property(lambda self: self.T.conj())
Tensor.mH = property(lambda self: _matrix_transpose(self, "mH").conj())


def adjoint(input):
    """The conjugate transpose of the last two dims (a 0-d tensor is its own)."""
    if input.ndim == 0:
        return input.conj()
    return transpose(input, -2, -1).conj()


register("adjoint")(adjoint)


class Expand(Op):
    """Broadcast to a larger shape without copying: a read-only view when elements repeat,
    a writable one when the expansion only adds size-1 dimensions (``arange(n).expand(1, -1)``
    is a buffer programs write into, as torch allows: no two elements share memory)."""

    view = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        if math.prod(shape) == x.size:
            return x.reshape(shape)  # unit dimensions only: never a copy
        if x.ndim == 0 and x.dtype.kind in "fc":
            # a 0-d value (the gradient of every `x.sum()`) repeated: the zero-stride view
            # built directly, without np.broadcast_to's Python-level nditer (~2 us)
            y = np.ndarray(shape, x.dtype, x, 0, (0,) * len(shape))
            y.flags.writeable = False  # elements repeat: read-only, as broadcast_to's
            return y
        return np.broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, grad):
        return sum_to(grad, ctx.in_shape), None


def expand(input, *sizes, size=None, implicit=False):
    sizes = _shape_arg(sizes if size is None else (size,) + sizes, "expand")
    src = input._data.shape
    if len(sizes) < len(src):
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({len(src)})")
    lead = len(sizes) - len(src)
    shape = []
    for i, s in enumerate(sizes):
        cur = src[i - lead] if i >= lead else None
        if s == -1:
            if cur is None:
                raise RuntimeError("expand: -1 is not allowed in a leading, non-existing "
                                   "dimension")
            s = cur
        elif cur is not None and cur != s and cur != 1:
            raise RuntimeError(f"expand: The expanded size of the tensor ({s}) must match the "
                               f"existing size ({cur}) at non-singleton dimension {i}.  Target "
                               f"sizes: {list(sizes)}.  Tensor sizes: {list(src)}")
        shape.append(s)
    shape = tuple(shape)
    if shape == src:
        return View.apply(input, shape)
    return Expand.apply(input, shape)


register("expand")(expand)
Tensor.expand = expand
Tensor.expand_as = lambda self, other: expand(self, tuple(other.shape))


def broadcast_to(input, size):
    return expand(input, tuple(size))


register("broadcast_to")(broadcast_to)
Tensor.broadcast_to = lambda self, *size_args, size=None: expand(
    self, *size_args, size=size)


@export
def broadcast_tensors(*tensors):
    """Expand all tensors to their common broadcast shape (one that has it already is
    returned as it is, as torch does)."""
    shapes = [tuple(t.shape) for t in tensors]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise RuntimeError(f"broadcast_tensors: the shapes {[list(s) for s in shapes]} do not "
                           "broadcast; each dim must match or be 1") from None
    return tuple(t if s == shape else expand(t, shape) for t, s in zip(tensors, shapes))


@export
def broadcast_shapes(*shapes):
    try:
        return Size(np.broadcast_shapes(*[tuple(s) if not isinstance(s, int) else (s,)
                                          for s in shapes]))
    except ValueError:
        raise RuntimeError(f"broadcast_shapes: shapes {list(shapes)} cannot be broadcast "
                           "together") from None


def squeeze(input, *dims_args, dim=None):
    """Remove size-1 dims (all, or those listed in dim; the method also takes them as
    ``squeeze(0, 1)``)."""
    if dims_args:
        dim = dims_args[0] if len(dims_args) == 1 and dim is None else dims_args + (
            () if dim is None else tuple(dim) if isinstance(dim, (tuple, list)) else (dim,))
    shape = input._data.shape
    if dim is None:
        new = tuple(s for s in shape if s != 1)
    else:
        dims = norm_dims(dim, len(shape), "squeeze")
        new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    # torch's names: squeeze() 0, squeeze(dim) 1, squeeze(dims) 2
    kind = 0 if dim is None else 2 if isinstance(dim, (tuple, list)) else 1
    return rename_node(View.apply(input, new), f"SqueezeBackward{kind}")


def unsqueeze(input, dim):
    """Insert a size-1 dim at position dim."""
    shape = list(input._data.shape)
    d = _wrap_dim(dim, len(shape) + 1, "unsqueeze")
    shape.insert(d, 1)
    return rename_node(View.apply(input, tuple(shape)), "UnsqueezeBackward0")


register("squeeze", inplace=False)(squeeze)
register("unsqueeze", inplace=False)(unsqueeze)


def flatten(input, start_dim=0, end_dim=-1):
    shape = input._data.shape
    s = _wrap_dim(start_dim, len(shape), "flatten")
    e = _wrap_dim(end_dim, len(shape), "flatten")
    if not shape:
        return reshape(input, (1,))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:  # nothing to flatten: the input itself, as torch
        return input
    new = shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:]
    return reshape(input, new)


def unflatten(input, dim, sizes):
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if input.ndim == 0:
        _wrap_dim(dim, 0, "unflatten")
        raise RuntimeError(f"unflatten: a 0-d tensor has no dim {dim} to unflatten")
    shape = input._data.shape
    d = _wrap_dim(dim, len(shape), "unflatten")
    sizes = _infer("unflatten", shape[d], tuple(sizes), (shape[d],))
    return View.apply(input, shape[:d] + tuple(sizes) + shape[d + 1:]) if input.is_contiguous() \
        else reshape(input, shape[:d] + tuple(sizes) + shape[d + 1:])


register("flatten")(flatten)
register("unflatten")(unflatten)
# ravel is contiguous().view(-1): a copy of any non-contiguous input (reshape would return a
# view of one whose strides allow it, as x[..., ::2])
register("ravel")(lambda input: view(contiguous(input), -1))


class Contiguous(Op):
    """A C-contiguous copy."""

    grad_name = "CloneBackward0"  # torch's contiguous() clones: NOTE [Node class names]

    @staticmethod
    def forward(ctx, x):
        return np.ascontiguousarray(x).copy() if not x.flags.c_contiguous else x

    @staticmethod
    def backward(ctx, grad):
        return grad


def contiguous(input, memory_format=None):
    if memory_format is not None:
        check_memory_format(memory_format, input._data.ndim)
    if input._data.flags.c_contiguous:
        return input
    return Contiguous.apply(input)


Tensor.contiguous = contiguous


class Clone(Op):
    """A copy with its own storage: with preserve_format (the default) laid out as torch's
    (NOTE [Layout of a preserve_format copy] in ember/_info.py), else row-major
    (contiguous_format; channels-last too, which ember does not lay out)."""

    @staticmethod
    def forward(ctx, x, memory_format=None):
        if memory_format is None and (x.flags.c_contiguous or x.flags.f_contiguous):
            return np.array(x, copy=True)  # (order "K": keeps x.t()'s strides, as torch)
        if x.flags.c_contiguous:
            check_memory_format(memory_format, x.ndim)
            return x.copy()
        if memory_format in (None, preserve_format):
            out = preserved_empty(x)
            np.copyto(out, x)
            return out
        check_memory_format(memory_format, x.ndim)
        return np.array(x, order="C", copy=True)

    @staticmethod
    def backward(ctx, grad):
        return grad


register("clone")(Clone)


class Cast(Op):
    """Convert to another dtype; gradients flow back in the input's dtype."""

    grad_name = "ToCopyBackward0"  # torch's name for to()/float()/type(): NOTE [Node class names]

    @staticmethod
    def forward(ctx, x, dt):
        ctx.src = x.dtype
        if x.dtype.kind == "c" and np.dtype(dt).kind != "c":
            warnings.warn("Casting complex values to real discards the imaginary part",
                          UserWarning, stacklevel=4)
            x = x.real
        return D.astype(x, np.dtype(dt))

    @staticmethod
    def backward(ctx, grad):
        if not D.from_numpy_dtype(ctx.src).is_floating_point and ctx.src.kind != "c":
            return None, None
        if grad._data.dtype.kind == "c" and ctx.src.kind != "c":
            grad = grad.real  # see NOTE [Complex gradients]
        return grad.to(D.from_numpy_dtype(ctx.src)), None


def _to(self, *args, **kwargs):
    """Tensor.to(dtype), .to(device), .to(other), .to(device, dtype); copy=False by default."""
    dt = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    if kwargs:
        check_memory_format(kwargs.pop("memory_format", None), self._data.ndim)
    for a in args:
        if isinstance(a, Tensor):
            dt = a.dtype
        elif isinstance(a, D.dtype) or a in (float, int, bool, complex):
            dt = a
        elif type(a) is int:  # torch reads an int as an accelerator's device index
            raise RuntimeError(f"to: cannot move to accelerator device {a}: ember has no "
                               "accelerator (Cannot access accelerator device when none is "
                               "available.)")
        elif a is not None:
            dev = a
    if dev is not None:
        if check_device(dev).type == "meta":
            self = to_meta(self)
        else:
            check_not_meta(self)
    if dt is None:
        return Clone.apply(self) if copy else self
    dt = D.to_dtype(dt)
    if dt.np == self._data.dtype:
        return Clone.apply(self) if copy else self
    return Cast.apply(self, dt.np)


Tensor.to = _to


def _type(self, dtype=None, non_blocking=False, **kw):
    if dtype is None:
        return _TYPE_NAMES[self.dtype]
    if (isinstance(dtype, str) and ".cuda." in dtype) or getattr(dtype, "_cuda_legacy", False):
        raise RuntimeError(f"type: cannot convert to {dtype}: ember has no CUDA backend "
                           "(Torch not compiled with CUDA enabled).")
    # the Tensor class (or its name) means the default tensor type: float32 unless
    # set_default_dtype changed it, as in torch
    if dtype is Tensor or dtype in ("torch.Tensor", "ember.Tensor"):
        return _to(self, D.get_default_dtype())
    if isinstance(dtype, str):
        for k, v in _TYPE_NAMES.items():
            if v == dtype or v.split(".")[-1] == dtype.split(".")[-1]:
                return _to(self, k)
        raise ValueError(f"invalid type: '{dtype}'")
    if isinstance(dtype, type) and hasattr(dtype, "_legacy_dtype"):
        return _to(self, dtype._legacy_dtype)
    if isinstance(dtype, type):  # a class that names no tensor type: float, nn.Parameter
        raise ValueError(f"invalid type: '{dtype.__name__}'")
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"type(): argument 'dtype' must be a dtype, a tensor type or its name; "
                        f"got {type(dtype).__name__}")
    return _to(self, dtype)


_TYPE_NAMES = {D.float32: "ember.FloatTensor", D.float64: "ember.DoubleTensor",
               D.float16: "ember.HalfTensor", D.bfloat16: "ember.BFloat16Tensor",
               D.int64: "ember.LongTensor", D.int32: "ember.IntTensor",
               D.int16: "ember.ShortTensor", D.int8: "ember.CharTensor",
               D.uint8: "ember.ByteTensor", D.bool_: "ember.BoolTensor",
               D.complex64: "ember.ComplexFloatTensor", D.complex128: "ember.ComplexDoubleTensor"}
Tensor.type = _type
Tensor.type_as = lambda self, other: _to(self, other.dtype)
for _name, _dt in (("float", D.float32), ("double", D.float64), ("half", D.float16),
                   ("bfloat16", D.bfloat16), ("long", D.int64), ("int", D.int32),
                   ("short", D.int16), ("char", D.int8), ("byte", D.uint8), ("bool", D.bool_),
                   ("cfloat", D.complex64), ("cdouble", D.complex128)):
    setattr(Tensor, _name, (lambda dt: lambda self, memory_format=None: _to(self, dt))(_dt))


class AsStrided(Op):
    """A view with explicit size, stride and storage offset (elements, relative to input)."""

    view = True

    @staticmethod
    def forward(ctx, x, size, stride, storage_offset=None):
        root = _root_array(x)
        item = x.itemsize
        base_off = (data_ptr(x) - data_ptr(root)) // item
        off = base_off if storage_offset is None else storage_offset
        if root.flags.c_contiguous:
            flat = root
        elif root.flags.f_contiguous:  # (a clone of x.t()): its elements in memory order, a view
            flat = root.ravel(order="K")
        else:
            raise RuntimeError("as_strided: only supported on tensors whose storage is "
                               "contiguous")
        need = off + sum((s - 1) * st for s, st in zip(size, stride)) + 1 if all(size) else 0
        if need > root.size:
            raise RuntimeError(f"as_strided: storage size {root.size} is too small for size "
                               f"{list(size)}, stride {list(stride)}, offset {off}")
        ctx.in_shape = x.shape
        ctx.geom = (tuple(size), tuple(stride), off, base_off)
        ctx.in_strides = tuple(s // item for s in x.strides)  # (x's elements in the storage)
        # an ndarray over the storage's buffer has it as its base (as_strided's would be a
        # stand-in object), so storage_offset() and untyped_storage() see the storage
        y = np.ndarray(tuple(size), x.dtype, buffer=flat, offset=off * item,
                       strides=tuple(s * item for s in stride))
        if len(set(stride)) != len(stride) or 0 in stride:  # (may overlap itself)
            y.flags.writeable = False
        return y

    @staticmethod
    def backward(ctx, grad):
        # scatter-add the gradient back through the same geometry into a buffer the size of
        # the input's storage region; correct also when the view overlaps itself
        size, stride, off, base_off = ctx.geom
        from .inplace import _ViewScatter
        span = off + 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) \
            else off + 1
        storage = np.lib.stride_tricks.as_strided(np.arange(span, dtype=np.int64)[off:], size,
                                                  [s * 8 for s in stride])
        # each storage element's position in the input (row-major), -1 where the input does
        # not reach: the input may be laid out in any order (x.t() of a clone)
        n = math.prod(ctx.in_shape)
        where = np.full(max(span, base_off + 1 + sum((s - 1) * abs(st) for s, st in zip(
            ctx.in_shape, ctx.in_strides))), -1, np.int64)
        if n:
            held = np.lib.stride_tricks.as_strided(
                where[base_off:], ctx.in_shape, [s * 8 for s in ctx.in_strides])
            held[...] = np.arange(n).reshape(ctx.in_shape)
        idx = where[storage]
        if (idx < 0).any():
            raise RuntimeError("as_strided backward: the view reaches outside the input's "
                               "elements; not supported")
        return _ViewScatter.apply(grad, idx, ctx.in_shape), None, None, None


def as_strided(input, size, stride, storage_offset=None):
    """A view with explicit size, stride and storage offset (in elements)."""
    # always four positional arguments: backward returns one gradient per positional argument
    return AsStrided.apply(input, tuple(size), tuple(stride), storage_offset)


register("as_strided")(as_strided)


def narrow(input, dim, start, length):
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim, "narrow")
    n = input.shape[d]
    if isinstance(start, float):  # (an int or a 0-d integer tensor, as torch's overloads)
        raise TypeError(f"narrow(): argument 'start' must be int or Tensor, not float; got "
                        f"{start!r}")
    start = int(start)
    if not -n <= start <= n:
        raise IndexError(f"narrow(): start out of range (expected to be in range of [{-n}, {n}]"
                         f", but got {start}) for dim {d} of shape {list(input.shape)}")
    if start < 0:
        start += n
    if length < 0 or start + length > n:
        raise RuntimeError(f"narrow(): start ({start}) + length ({length}) exceeds dimension "
                           f"size ({n}) of dim {d} of shape {list(input.shape)}")
    idx = [slice(None)] * input.ndim
    idx[d] = slice(start, start + length)
    return input[tuple(idx)]


def select(input, dim, index):
    if isinstance(index, float):
        raise TypeError(f"select(): argument 'index' (position 2) must be int, not float; got "
                        f"{index!r}")
    d = _wrap_dim(dim, input.ndim, "select")
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    idx = [slice(None)] * input.ndim
    idx[d] = index
    return input[tuple(idx)]


def narrow_copy(input, dim, start, length):
    """narrow's slice as a row-major copy."""
    return Clone.apply(narrow(input, dim, start, length), contiguous_format)


register("narrow")(narrow)
register("narrow_copy", out_exact=True)(narrow_copy)
register("select")(select)


def unbind(input, dim=0):
    shape = input._data.shape  # the array's tuple: Size objects cost a decoding step's time
    d = _wrap_dim(dim, len(shape), "unbind")
    n = shape[d]
    if n == 0 or _batch_hook[0] is not None:  # vmap batches select, not the pieces op
        return tuple(select(input, d, i) for i in range(n))
    if d == 0 and (not input._requires_grad or not _state.enabled) and unwatched():
        # NOTE [Unwatched no-grad views]; x[i] of an array of ndim >= 1 is an array
        x = input._data
        return tuple([_make_view(x[i, ...], input) for i in range(n)])
    return Unbind.apply(input, dim=d, sizes=(1,) * n, squeeze=True)


# NOTE [Pieces of one tensor]
# unbind and split return views of consecutive pieces of their input along one dim. Each piece
# as a separate select/narrow has a backward that builds a zero tensor of the input's full
# shape and writes its piece into it, and the engine then adds those n full-size tensors: for
# a transformer's q, k, v = qkv.view(B, T, 3, H, E).permute(2, 0, 3, 1, 4).unbind(0), three
# (3, B, H, T, E) zero fills and two sums per block, and the sum comes out in the permuted
# order, so the Linear before it copied it once more. One op for all the pieces writes the
# pieces' gradients into ONE buffer instead (zeros only where a piece got no gradient), laid
# out in the input's memory order, so that the permute and view before it stay views and the
# Linear's backward reads the gradient as it is. Its backward cuts the incoming gradient into
# pieces again, so double backward works.


class _Pieces(Op):
    """Consecutive pieces of x along ``dim`` of the given ``sizes`` (views); ``squeeze`` drops
    the dim (unbind). See NOTE [Pieces of one tensor]."""

    view = True

    @classmethod
    def forward(cls, ctx, x, dim, sizes, squeeze):
        ctx.materialize_grads = False  # a piece without a gradient is zeros in the buffer only
        ctx.piece_op, ctx.dim, ctx.sizes, ctx.squeeze = cls, dim, sizes, squeeze
        if ctx.needs_input_grad:  # set when the call is recorded: the backward's layout
            ctx.shape, ctx.order = x.shape, _memory_order(x)
        if squeeze and dim == 0:  # unbind(0) (a decoding step's q, k, v): plain indexing
            # x[i] of an array of ndim >= 1 is an array (0-d for a 1-D x), never a scalar
            return tuple([x[i, ...] for i in range(len(sizes))])
        return tuple(x[key] for key in _piece_keys(x.ndim, dim, sizes, squeeze))

    @staticmethod
    def backward(ctx, *grads):
        return _JoinGrads.apply(*grads, dim=ctx.dim, sizes=ctx.sizes, squeeze=ctx.squeeze,
                                shape=ctx.shape, order=ctx.order, piece_op=ctx.piece_op)

    @staticmethod
    def jvp(ctx, tangent):
        return ctx.piece_op.apply(tangent, dim=ctx.dim, sizes=ctx.sizes, squeeze=ctx.squeeze)


class Unbind(_Pieces):
    """unbind's pieces (grad_fn UnbindBackward0, as in torch)."""


class Split(_Pieces):
    """split's pieces of one size (grad_fn SplitBackward0)."""


class SplitWithSizes(_Pieces):
    """split's pieces of listed sizes (grad_fn SplitWithSizesBackward0)."""


class _JoinGrads(Op):
    """The pieces' gradients written side by side into one buffer shaped like the input."""

    @staticmethod
    def forward(ctx, *grads, dim, sizes, squeeze, shape, order, piece_op):
        ctx.dim, ctx.sizes, ctx.squeeze, ctx.piece_op = dim, sizes, squeeze, piece_op
        keys = _piece_keys(len(shape), dim, sizes, squeeze)
        joined = _joined_already(grads, keys, shape, order)
        if joined is not None:
            return joined
        dtype = next(g.dtype for g in grads if g is not None)
        buf = reusable_empty(tuple(shape[i] for i in order), dtype).transpose(np.argsort(order))
        for g, key in zip(grads, keys, strict=True):
            buf[key] = 0 if g is None else g
        return buf

    @staticmethod
    def backward(ctx, grad):
        pieces = ctx.piece_op.apply(grad, dim=ctx.dim, sizes=ctx.sizes, squeeze=ctx.squeeze)
        return tuple(p if need else None for p, need in zip(pieces, ctx.needs_input_grad,
                                                                  strict=True))


def _joined_already(grads, keys, shape, order):
    """The buffer that the gradients already are the pieces of, laid out as `_JoinGrads` would
    lay it out (fused attention writes dq, dk, dv so: NOTE [Gradients of q, k, v as pieces of
    one buffer] in ops/_kernels/attention.py), or None."""
    base = grads[0].base if grads[0] is not None else None
    if (base is None or not base.flags.c_contiguous or base.size != math.prod(shape)
            or any(g is None or g.base is not base for g in grads)):
        return None
    buf = base.reshape(tuple(shape[i] for i in order)).transpose(np.argsort(order))
    for g, key in zip(grads, keys, strict=True):
        piece = buf[key]
        if (piece.ctypes.data != g.ctypes.data or piece.shape != g.shape
                or piece.strides != g.strides or piece.dtype != g.dtype):
            return None
    return buf


def _piece_keys(ndim, dim, sizes, squeeze):
    """The basic-index keys of the pieces."""
    lead = (slice(None),) * dim
    keys, start = [], 0
    for n in sizes:
        # the Ellipsis keeps a 0-d piece an array (a NumPy scalar otherwise)
        keys.append(lead + ((start,) if squeeze else (slice(start, start + n),)) + (Ellipsis,))
        start += n
    return keys


def _memory_order(x):
    """x's axes from the outermost in memory to the innermost (by stride; ties keep the axis
    order), so that an array allocated in that order and transposed back has x's layout."""
    return tuple(sorted(range(x.ndim), key=lambda i: -abs(x.strides[i])))


def _at_least_1d(input, name):
    if input.ndim == 0:
        raise RuntimeError(f"{name} expects at least a 1-dimensional tensor; got a 0-d tensor")


def split(tensor, split_size_or_sections, dim=0):
    _at_least_1d(tensor, "split")
    if isinstance(split_size_or_sections, Tensor) and split_size_or_sections.ndim == 0:
        split_size_or_sections = int(split_size_or_sections.item())  # (a 0-d size, as torch)
    d = _wrap_dim(dim, tensor.ndim, "split")
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        s = int(split_size_or_sections)
        if s <= 0 and n:
            raise RuntimeError(f"split: split_size must be positive; got {s}")
        sizes = [min(s, n - i) for i in range(0, n, s)] if n else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got split_sizes="
                               f"{sizes}")
    if _batch_hook[0] is not None:  # vmap batches narrow, not the pieces op
        out, start = [], 0
        for s in sizes:
            out.append(narrow(tensor, d, start, s))
            start += s
        return tuple(out)
    op = Split if isinstance(split_size_or_sections, (int, np.integer)) else SplitWithSizes
    return op.apply(tensor, dim=d, sizes=tuple(int(s) for s in sizes), squeeze=False)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    _at_least_1d(input, "chunk")
    d = _wrap_dim(dim, input.ndim, "chunk")
    n = input.shape[d]
    if n == 0:  # `chunks` empty pieces, as torch
        return tuple(narrow(input, d, 0, 0) for _ in range(chunks))
    return split(input, -(-n // chunks), d)


def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    """Split into ``sections`` near-equal pieces or at ``indices`` along ``dim`` (torch's
    keyword names of its three overloads are accepted, as is NumPy's indices_or_sections)."""
    given = [v for v in (indices_or_sections, sections, indices, tensor_indices_or_sections)
             if v is not None]
    if len(given) != 1:
        raise TypeError("tensor_split(): expected exactly one of indices_or_sections, sections, "
                        f"indices or tensor_indices_or_sections; got {len(given)}")
    indices_or_sections = given[0]
    if isinstance(indices_or_sections, Tensor):
        v = indices_or_sections
        if v.dtype.is_floating_point or v.dtype.is_complex or v.dtype is D.bool_ or v.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have a "
                               "integral dtype and be 0-D or 1-D; got dtype "
                               f"{v.dtype} and shape {list(v.shape)}")
        indices_or_sections = v.item() if v.ndim == 0 else v.tolist()
    _at_least_1d(input, "tensor_split")
    d = _wrap_dim(dim, input.ndim, "tensor_split")
    n = input.shape[d]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got {k}")
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
    else:
        # each piece is the slice input[prev:index] with Python's slice rules: a negative
        # index counts from the end, and indices need not increase (a piece may be empty)
        bounds = [0] + [min(max(int(i) + n if int(i) < 0 else int(i), 0), n)
                        for i in indices_or_sections] + [n]
        return tuple(narrow(input, d, a, max(b - a, 0)) for a, b in zip(bounds, bounds[1:]))
    out, start = [], 0
    for s in sizes:
        out.append(narrow(input, d, start, s))
        start += s
    return tuple(out)


register("unbind")(unbind)
register("split")(split)
Tensor.split = lambda self, split_size, dim=0: split(self, split_size, dim)
register("chunk")(chunk)
register("tensor_split")(tensor_split)


class Unfold(Op):
    """All windows of ``size`` along ``dim`` with ``step``, as a new last dim: a view of the
    input's memory whatever its strides."""

    view = True

    @staticmethod
    def forward(ctx, x, dim, size, step):
        ctx.in_shape, ctx.dim, ctx.size, ctx.step = x.shape, dim, size, step
        count = (x.shape[dim] - size) // step + 1
        shape = x.shape[:dim] + (count,) + x.shape[dim + 1:] + (size,)
        strides = x.strides[:dim] + (x.strides[dim] * step,) + x.strides[dim + 1:] + (
            x.strides[dim],)
        # windows overlap when step < size: read-only, as expand's views
        return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False) \
            if step < size else np.lib.stride_tricks.as_strided(x, shape, strides)

    @staticmethod
    def backward(ctx, grad):
        # each window element came from input position i * step + j along dim: add them back
        d, size, step = ctx.dim, ctx.size, ctx.step
        count = grad.shape[d]
        source = np.add.outer(np.arange(count) * step, np.arange(size)).reshape(-1)
        pieces = grad.movedim(-1, d + 1).flatten(d, d + 1)
        zeros = pieces.new_zeros(ctx.in_shape)
        return zeros.index_add(d, _make(source), pieces), None, None, None


def _unfold(input, dimension, size, step):
    """All windows of ``size`` along ``dimension`` with ``step`` as a new last dim (a view)."""
    d = _wrap_dim(dimension, max(input.ndim, 1), "unfold")
    n = input.shape[d] if input.ndim else 1
    if size > n:
        raise RuntimeError(f"unfold: maximum size for tensor at dimension {d} is {n} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"unfold: step is {step} but must be > 0")
    if input.ndim == 0:  # one window of the one element
        return unsqueeze(input, 0)
    return Unfold.apply(input, d, size, step)


Tensor.unfold = _unfold


def movedim(input, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    nd = input.ndim
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    src = [_wrap_dim(s, max(nd, 1), "movedim") for s in src]
    dst = [_wrap_dim(s, max(nd, 1), "movedim") for s in dst]
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    if nd == 0:  # (a 0-d tensor takes dim 0 or -1)
        return View.apply(input, ())
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return Permute.apply(input, tuple(order))


register("movedim", aliases=("moveaxis",))(movedim)
