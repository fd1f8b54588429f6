"""Products: matmul (batched, broadcasting), mm, bmm, mv, dot, outer, addmm, baddbmm, einsum,
tensordot. The ``ember.linalg`` ops (decompositions, norms) are in ops/linalg/."""
from __future__ import annotations

import operator
import string

import numpy as np

from .. import _dtype as D
from .. import _onepool
from .._backend import gemm, row_order
from .._tensor import Tensor, _make
from ..amp._state import maybe_autocast
from ..amp._state import state as _autocast
from ..autograd.function import Op, _batch_hook, _fw_active, _run_hooked, rename_node
from ..autograd.grad_mode import _state as _grad_state
from ..profiler.profiler import _active as _prof
from ._kernels import reduce as _kreduce
from ._kernels.pointwise import broadcast_binary
from .registry import FUNCTIONS, backward_on_arrays, export, register, sum_to, write_out

_BOOL = np.dtype(np.bool_)


def no_bool_kernel(name, *tensors):
    """torch's NotImplementedError for the products it has no bool kernel for."""
    raise NotImplementedError(f"{name}: not implemented for 'Bool' (torch has no bool kernel for "
                              f"matrix products); got dtypes "
                              f"{', '.join(str(t.dtype) for t in tensors)}. Convert the operands "
                              "with .int() or .float() first.")


def _same_dtype(name, a, b):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{name}: expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype} != {b.dtype}")


def rows_matmul(a, b):
    """(..., K) @ (K, N) as one GEMM over the rows of a, into a C-contiguous result as torch's
    (a program may .view() it). A permuted a costs one copy, of whichever is smaller: a itself
    (torch's way), or the result, computed over a's rows in memory order and then laid out. On
    ember's one pool when it is on (NOTE [One pool] in _onepool.py: a transformer's (B, T, d)
    Linear layers)."""
    if a.size == 0:  # (reshape(-1, 0) of no elements is ambiguous; an empty K sums to 0)
        return np.zeros(a.shape[:-1] + b.shape[1:], np.result_type(a, b))
    if a.flags.c_contiguous or b.shape[-1] >= a.shape[-1]:
        a = np.ascontiguousarray(a)  # (the common case: rows already in order, no copy)
        return _onepool.matmul(a.reshape(-1, a.shape[-1]), b).reshape(
            a.shape[:-1] + b.shape[1:])
    perm = row_order(a)
    at = a.transpose(perm)
    out = _onepool.matmul(at.reshape(-1, a.shape[-1]), b).reshape(at.shape[:-1] + b.shape[1:])
    return np.ascontiguousarray(out.transpose(np.argsort(perm)))


def _matmul_grad_name(arrays):
    # torch's node for a product of two matrices is MmBackward0; with batch dims its matmul
    # folds or batches the operands and its outermost node is the UnsafeViewBackward0 back to
    # the batch shape (bmm() renames its result BmmBackward0): NOTE [Node class names]
    a, b = arrays
    return "MmBackward0" if a.ndim == 2 == b.ndim else "UnsafeViewBackward0"


# NOTE [Tiny products]
# Below 2^14 multiply-adds a product is NumPy's matmul as it comes: gemm's choices (turned
# round, MKL, blocks for OpenBLAS's small kernel) are for products where BLAS's kernel matters,
# and at this size their Python costs more than the product (a 4x4 product's backward G @ B^T:
# 3.1 us through gemm, 0.9 as it comes; (16, 32) @ (32, 32)^T 6.2 against 2.5).
_TINY_MACS = 1 << 14


def _product(a, b):
    """Matmul's forward on arrays: the batched product of >= 2-D a and b."""
    if a.shape[-1] == 1:
        # an outer product (the gradient of a matrix-vector product): BLAS takes 2.3x as
        # long as the broadcast multiply for (12800, 1) @ (1, 256)
        out = broadcast_binary("mul", a, b)  # NOTE [Row-broadcast binary ops]
        if out is None:
            out = np.multiply(a, b, order="C")  # C order, as np.matmul's results
    elif a.ndim > 2 and b.ndim == 2:
        # (..., M, K) @ (K, N) is one GEMM on the rows of a; np.matmul would make one BLAS
        # call per batch entry (attention's (B, T, S, H) @ (H, 1): 640 calls, 4x slower).
        # Rows are taken in memory order, so a permuted a is not copied.
        out = rows_matmul(a, b)
    elif b.flags.c_contiguous:  # what gemm does then, without its two calls (0.1 us)
        out = (np.matmul if _onepool._on[0] is False else _onepool.matmul)(a, b)
    elif a.size * b.shape[-1] < _TINY_MACS:  # NOTE [Tiny products]
        out = np.matmul(a, b)
    else:
        out = gemm(a, b)  # np.matmul, turned round where faster
    # np.matmul returns float32 for ml_dtypes' bfloat16 operands; keep the input dtype
    dt = out.dtype
    return out if dt is a.dtype or dt == a.dtype else out.astype(a.dtype)


# NOTE [Unrecorded matrix backward]
# The backward of a product of two matrices is two more products. Taken as ember ops, each went
# through Op.apply with a transposed view of an operand (a view tensor, a node context, the
# dispatch): ~20 us of a 4x4 product's forward and backward of ~60 (torch's 32). When nothing
# records the backward (no create_graph) and nothing watches op calls (the profiler, vmap,
# forward AD, a capture), Matmul.backward takes the two products on the arrays with the
# forward's own code (`_product`), so the results are the bits the ops would give.


class Matmul(Op):
    """Batched matrix product of >= 2-D arrays, broadcasting the batch dims."""

    holomorphic = True  # see NOTE [Complex gradients]
    grad_name_for = staticmethod(_matmul_grad_name)

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _product(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        if a.ndim == 2 == b.ndim and backward_on_arrays(grad):  # NOTE [Unrecorded matrix backward]
            g = grad._data
            return (_make(_product(g, b._data.T)) if need[0] else None,
                    _make(_product(a._data.T, g)) if need[1] else None)
        if (a.ndim > 2 and b.ndim == 2 and b.shape[1] == 1 and need[0] and need[1]
                and _FUSED_MV_BWD[0] and not _grad_state.enabled):
            # (..., K) @ (K, 1) with nothing recording this backward: both gradients in one
            # pass over A (NOTE [Matrix-vector backward in one pass] in _kernels/reduce.py)
            both = _kreduce.mv_backward(a._data, grad._data, b._data[:, 0])
            if both is not None:
                return _make(both[0]), _make(both[1].reshape(b.shape))
        if a.ndim > 2 and b.ndim == 2:  # the folded form of forward
            # work in a's memory order: dA then has a's layout (so the gradient of a
            # permuted activation fuses with it) and A's rows need no copy
            perm = row_order(a._data)
            a_rows, g_rows = a.permute(*perm), grad.permute(*perm)
            ga = gb = None
            if need[0]:  # dA = G B^T
                ga = Matmul.apply(g_rows, b.mT).permute(*np.argsort(perm).tolist())
            if need[1]:  # dB = sum over the batch of A^T G: one GEMM
                gb = Matmul.apply(a_rows.reshape(-1, a.shape[-1]).mT,
                                  g_rows.reshape(-1, grad.shape[-1]))
            return ga, gb
        ga = sum_to(Matmul.apply(grad, b.mT), a.shape) if need[0] else None  # dA = G B^T
        gb = sum_to(Matmul.apply(a.mT, grad), b.shape) if need[1] else None  # dB = A^T G
        return ga, gb


# Matmul's backward for (..., K) @ (K, 1) in one pass (an A/B switch)
_FUSED_MV_BWD = [True]
# Op._run as defined: a capture replaces it while it records (a replay sets _run_hooked)
_PLAIN_RUN = Op.__dict__["_run"]


def matmul(input, other):
    """Matrix product with numpy/torch semantics for 1-D, 2-D and batched operands."""
    if type(input) is Tensor and type(other) is Tensor and not _autocast.enabled:
        a, b = input._data, other._data  # plain dense tensors: the common case first
        if a.ndim == 2 == b.ndim and a.shape[1] == b.shape[0] and (
                a.dtype is b.dtype or a.dtype == b.dtype) and a.dtype is not _BOOL:
            if _prof.prof is None:  # what apply calls when not profiling: a call less
                if (not (input._requires_grad or other._requires_grad) and a.shape[1] != 1
                        and b.flags.c_contiguous and _batch_hook[0] is None
                        and not _fw_active[0] and Op.__dict__["_run"] is _PLAIN_RUN
                        and not _run_hooked[0]):
                    # NOTE [Unrecorded 2-D matmul]: nothing to record and no hook that sees
                    # op calls (vmap, forward AD, the profiler, compile capture, which patches
                    # Op._run): Matmul's forward on this path is one np.matmul, and Op._run
                    # around it would only build a ctx nobody keeps (0.4 us of 2.7, 4x4)
                    out = np.matmul(a, b)
                    if out.dtype is a.dtype or out.dtype == a.dtype:
                        return _make(out)
                return Matmul._run(input, other)
            return Matmul.apply(input, other)
    if getattr(input, "is_sparse", False):  # sparse COO x dense (ember/sparse)
        return input._sparse_mm(other)
    if getattr(other, "is_sparse", False) and isinstance(input, Tensor):
        return _dense_sparse_mm(input, other, "matmul")
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        bad = "input" if not isinstance(input, Tensor) else "other"
        raise TypeError(f"matmul(): argument '{bad}' must be Tensor, not "
                        f"{type(input if bad == 'input' else other).__name__}")
    if _autocast.enabled:
        input, other = maybe_autocast("matmul", input, other)
    a, b = input._data, other._data
    if a.dtype is _BOOL or b.dtype is _BOOL:
        no_bool_kernel("matmul", input, other)
    if a.ndim >= 2 and b.ndim >= 2 and a.dtype == b.dtype and a.shape[-1] == b.shape[-2]:
        try:  # fast path: the common case needs no reshaping
            return Matmul.apply(input, other)
        except ValueError:
            raise RuntimeError(f"matmul: batch dimensions of {list(a.shape)} and "
                               f"{list(b.shape)} do not broadcast") from None
    return _matmul_general(input, other)


def _matmul_general(input, other):
    _same_dtype("matmul", input, other)
    a, b = input, other
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"matmul: both arguments to matmul need to be at least 1D, but they "
                           f"are {a.ndim}D and {b.ndim}D")
    ka = a.shape[-1]
    kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        sa = "x".join(map(str, a.shape))
        sb = "x".join(map(str, b.shape))
        raise RuntimeError(f"matmul: mat1 and mat2 shapes cannot be multiplied ({sa} and {sb}); "
                           f"got {tuple(a.shape)} @ {tuple(b.shape)}, expected "
                           "a.shape[-1] == b.shape[-2].")
    if a.ndim == 1 and b.ndim == 1:
        return dot(a, b)
    squeeze_a = a.ndim == 1
    squeeze_b = b.ndim == 1
    if squeeze_a:
        a = a.unsqueeze(0)
    if squeeze_b:
        b = b.unsqueeze(-1)
    try:
        out = Matmul.apply(a, b)
    except ValueError:
        raise RuntimeError(f"matmul: batch dimensions of {list(input.shape)} and "
                           f"{list(other.shape)} do not broadcast") from None
    if squeeze_a:
        out = out.squeeze(-2)
    if squeeze_b:
        out = out.squeeze(-1)
        if a.ndim == 2:  # matrix @ vector: torch's node is MvBackward0
            rename_node(out, "MvBackward0")
    return out


# bool products are not claimed: torch has no bool matmul kernels ("not implemented for 'Bool'")
_NUMERIC = tuple(d for d in D.ALL if d is not D.bool_)
register("matmul", out_exact=True)(matmul)
Tensor.__matmul__ = matmul
Tensor.__rmatmul__ = lambda self, other: matmul(other, self)


def _dense_sparse_mm(dense, sparse, op):
    """dense @ sparse COO = (sparse^T @ dense^T)^T: dense result, as in torch."""
    if dense.ndim not in (1, 2):
        raise RuntimeError(f"{op}: a dense operand times a sparse matrix must be 1-D or 2-D; "
                           f"got shape {list(dense.shape)} @ sparse {list(sparse.shape)}.")
    return sparse.t()._sparse_mm(dense.t()).t()


def mm(input, mat2):
    """Product of two 2-D matrices."""
    if getattr(input, "is_sparse", False):
        return input._sparse_mm(mat2)
    if getattr(mat2, "is_sparse", False):
        if input.ndim != 2:
            raise RuntimeError(f"mm: expected 2-D tensors, got {input.ndim}-D (shape "
                               f"{list(input.shape)}) and a sparse matrix")
        return _dense_sparse_mm(input, mat2, "mm")
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2-D tensors, got {input.ndim}-D (shape "
                           f"{list(input.shape)}) and {mat2.ndim}-D (shape {list(mat2.shape)})")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mm: mat1 and mat2 shapes cannot be multiplied "
                           f"({input.shape[0]}x{input.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]}); expected mat1.shape[1] == "
                           "mat2.shape[0].")
    return matmul(input, mat2)


def bmm(input, mat2):
    """Batched product of 3-D tensors with equal batch size."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"bmm: batch1 must be a 3D tensor and batch2 must be a 3D tensor; got "
                           f"shapes {list(input.shape)} and {list(mat2.shape)}")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: batch1 and batch2 must have same number of batches, got "
                           f"{input.shape[0]} and {mat2.shape[0]}")
    if input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"bmm: Expected size for first two dimensions of batch2 tensor to "
                           f"be: [{input.shape[0]}, {input.shape[2]}] but got: "
                           f"[{mat2.shape[0]}, {mat2.shape[1]}] (shapes {list(input.shape)} and "
                           f"{list(mat2.shape)}).")
    return rename_node(matmul(input, mat2), "BmmBackward0")


def mv(input, vec):
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"mv: expected a 2-D matrix and a 1-D vector, got shapes "
                           f"{list(input.shape)} and {list(vec.shape)}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"mv: size mismatch, got mat ({input.shape[0]}x{input.shape[1]}), "
                           f"vec ({vec.shape[0]}); expected mat.shape[1] == vec.shape[0]")
    return rename_node(matmul(input, vec), "MvBackward0")


class Dot(Op):
    """Inner product of two 1-D tensors."""

    holomorphic = True  # see NOTE [Complex gradients]

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.asarray(np.dot(a, b))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a


def dot(input, tensor):
    other = tensor
    _tensors("dot", input=input, tensor=tensor)
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"dot: 1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"dot: inconsistent tensor size, expected tensor [{input.shape[0]}] "
                           f"and src [{other.shape[0]}] to have the same number of elements, but "
                           "got different sizes")
    _same_dtype("dot", input, other)
    if input._data.dtype is _BOOL:
        no_bool_kernel("dot", input, other)
    return Dot.apply(input, other)


def _tensors(name, **args):
    """torch's TypeError for an argument that is not a tensor."""
    for i, (arg, value) in enumerate(args.items()):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {i + 1}) must be Tensor, not "
                            f"{type(value).__name__}")


def outer(input, vec2):
    _tensors("outer", input=input, vec2=vec2)
    for arg, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {arg}, but got {t.ndim}-D (shape "
                               f"{list(t.shape)})")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


def _coefficients(name, input, a, b, beta, alpha):
    """The add*mm family's checks of its operands and of beta/alpha, as torch's: one dtype for
    all three operands, a beta/alpha that fits the result's dtype (a complex one only for a
    complex result); for an integer result a float beta/alpha is truncated (addr refuses it,
    and a bool one for a non-bool result). Returns (beta, alpha)."""
    if isinstance(input, Tensor) and not (input.dtype == a.dtype == b.dtype) and name != "addr":
        raise RuntimeError(f"{name}: expected all operands to have the same dtype, but got "
                           f"input {input.dtype}, {a.dtype} and {b.dtype}")
    if type(beta) is int and type(alpha) is int or (
            type(beta) in _REAL and type(alpha) in _REAL and a.dtype in _WIDE_FLOATS
            and abs(beta) < 3e38 and abs(alpha) < 3e38):
        return beta, alpha  # (the common cases: nothing to check or convert)
    dt = a.dtype
    for arg, v in (("beta", beta), ("alpha", alpha)):
        D.check_fits(name, v, dt)  # NOTE [Numbers that do not fit the dtype]
        if name != "addr":
            continue
        if isinstance(v, float) and not (dt.is_floating_point or dt.is_complex):
            raise RuntimeError(f"addr: For integral input tensors, argument {arg} must not be a "
                               f"floating point number; got {arg}={v!r} for dtype {dt}")
        if isinstance(v, bool) and dt is not D.bool_:
            raise RuntimeError(f"addr: Boolean {arg} only supported for Boolean results; got "
                               f"{arg}={v!r} for dtype {dt}")
    if dt is D.bool_:
        return bool(beta), bool(alpha)
    if not (dt.is_floating_point or dt.is_complex):
        return int(beta.real), int(alpha.real)  # (torch casts them to the integer dtype)
    if not dt.is_complex:
        return beta.real, alpha.real  # (it fits: no imaginary part)
    return beta, alpha


_REAL = (int, float)
_WIDE_FLOATS = (D.float32, D.float64)  # (a number below 3e38 fits them)


def _reduced(name, product, input, a, b, beta, alpha, keep_zero_alpha=False):
    """beta * input + alpha * product(a, b), in float32 for float16/bfloat16 operands and
    rounded once to their dtype (see NOTE [Reduced-precision addmm])."""
    beta, alpha = _coefficients(name, input, a, b, beta, alpha)
    low = a.dtype in (D.float16, D.bfloat16) and a.dtype == b.dtype
    if not low or not isinstance(input, Tensor) or input.dtype != a.dtype:
        return _scaled_sum(input, product(a, b), beta, alpha, keep_zero_alpha)
    wide = _scaled_sum(input.float(), product(a.float(), b.float()), beta, alpha,
                       keep_zero_alpha)
    return wide.to(a.dtype)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2)."""
    return _reduced("addmm", mm, input, mat1, mat2, beta, alpha)


def _dropped(t):
    """t's values replaced by zeros, its gradient zeros: a term that beta=0 or alpha=0 takes
    out of the sum, NaN and inf included, while its operands still get (zero) gradients."""
    return t.masked_fill(_TRUE, 0)


_TRUE = _make(np.ones((), np.bool_))


def _scaled_sum(input, prod, beta, alpha, keep_zero_alpha=False):
    # NOTE [Reduced-precision addmm]: torch's addmm family in float16/bfloat16 forms
    # beta * input + alpha * prod in float32 and rounds once; scaling and adding the rounded
    # product in bfloat16 rounds three more times (Newton-Schulz iterations in bfloat16, as
    # Muon-style optimizers run them, drift by 0.1 after five steps). The callers pass the
    # product of float32 upcasts here for those dtypes (see _reduced), and the result is cast back.
    if alpha == 0 and not keep_zero_alpha:  # torch skips the product (an inf there does not
        prod = _dropped(prod)                # make NaN)
    elif alpha != 1:
        prod = prod * alpha
    if beta == 0:  # torch ignores input entirely (its NaNs do not propagate)
        if isinstance(input, Tensor) and input.requires_grad:
            return prod + _dropped(input)  # (input's gradient: zeros, as torch's)
        shape = np.broadcast_shapes(tuple(prod.shape), tuple(input.shape))
        return prod if tuple(prod.shape) == shape else prod.expand(shape).contiguous()
    return prod + (input if beta == 1 else input * beta)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    # (torch's baddbmm multiplies by alpha = 0 too: an inf in the product gives NaN)
    return _reduced("baddbmm", bmm, input, batch1, batch2, beta, alpha, keep_zero_alpha=True)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    if batch1.dtype in (D.float16, D.bfloat16) and batch1.ndim == 3 and batch1.shape[0]:
        # torch accumulates a low-precision addbmm batch by batch, rounding after each
        out = addmm(input, batch1[0], batch2[0], beta=beta, alpha=alpha)
        for i in range(1, batch1.shape[0]):
            out = addmm(out, batch1[i], batch2[i], alpha=alpha)
        return out
    beta, alpha = _coefficients("addbmm", input, batch1, batch2, beta, alpha)
    return _scaled_sum(input, bmm(batch1, batch2).sum(0, dtype=batch1.dtype), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    # not _reduced: torch's low-precision addmv rounds alpha and beta to the dtype first and
    # follows neither model exactly in float16
    beta, alpha = _coefficients("addmv", input, mat, vec, beta, alpha)
    return _scaled_sum(input, mv(mat, vec), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    beta, alpha = _coefficients("addr", input, vec1, vec2, beta, alpha)
    if vec1.dtype is D.bool_ and vec1.dtype == vec2.dtype:  # logical: and/or (int would count)
        return (outer(vec1, vec2) & bool(alpha)) | (input & bool(beta))
    # (torch's addr multiplies by alpha = 0 too: an inf in the outer product gives NaN)
    return _scaled_sum(input, outer(vec1, vec2), beta, alpha, keep_zero_alpha=True)


for _f in (mm, bmm, mv, dot, outer, addmm, baddbmm, addbmm, addmv, addr):
    register(_f.__name__, inplace=_f.__name__.startswith("add") or
             _f.__name__ == "baddbmm")(_f)
FUNCTIONS["ger"] = FUNCTIONS["outer"]
Tensor.ger = outer


def inner(input, other, *, out=None):
    """Sum over the last dims of input and other (a product when either is 0-d)."""
    if out is not None:
        return write_out(out, inner(input, other), "inner")
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def _inner_method(self, other):
    return inner(self, other)


FUNCTIONS["inner"] = inner
Tensor.inner = _inner_method


def tensordot(a, b, dims=2, out=None):
    """Contract ``dims`` (an int, or two lists of dims) of a with those of b."""
    if out is not None:
        return write_out(out, tensordot(a, b, dims), "tensordot")
    if isinstance(dims, Tensor):  # a 0-d count or a (2, n) pair of dim lists
        dims = dims.item() if dims.ndim == 0 else dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims} "
                               f"for tensors of {a.ndim} and {b.ndim} dims")
        da = list(range(a.ndim - dims, a.ndim))
        db = list(range(dims))
    else:
        if len(dims) != 2:
            raise RuntimeError(f"tensordot expects dims to be a pair of dim lists; got {dims!r}")
        if isinstance(dims[0], int) != isinstance(dims[1], int) or isinstance(dims[0], int) \
                and not isinstance(dims, list):  # (torch reads (1, 0) as its overloads do)
            raise TypeError(f"tensordot(): argument 'dims_self' (position 3) must be tuple of "
                            f"ints, not int; got dims={dims!r} (pass ([1], [0]))")
        da, db = ([dims[0]] if isinstance(dims[0], int) else list(dims[0]),
                  [dims[1]] if isinstance(dims[1], int) else list(dims[1]))
    da = [d % a.ndim for d in da]
    db = [d % b.ndim for d in db]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"tensordot: contracted dimensions need to match, but first has "
                               f"size {a.shape[x]} in dim {x} and second has size {b.shape[y]} "
                               f"in dim {y}")
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da]))
    am = a.permute(*(fa + da)).reshape(-1, k)
    bm = b.permute(*(db + fb)).reshape(k, -1)
    return matmul(am, bm).reshape(*([a.shape[d] for d in fa] + [b.shape[d] for d in fb]))


export(tensordot)


# ----------------------------------------------------------------------------- einsum
def _parse_einsum(eq, operands):
    """Expand '...' into letters and fill in an implicit output; returns (specs, out)."""
    eq = eq.replace(" ", "")
    lhs, out = eq.split("->") if "->" in eq else (eq, None)
    specs = lhs.split(",")
    if len(specs) != len(operands):
        raise RuntimeError(f"einsum(): the equation names {len(specs)} operands but "
                           f"{len(operands)} were given")
    used = set(eq) - set(".,->")
    spare = [c for c in string.ascii_letters if c not in used]
    ell_n = [op.ndim - (len(s) - 3) if "..." in s else 0 for s, op in zip(specs, operands)]
    ell = "".join(spare[:max(ell_n + [0])])
    new_specs = []
    for s, op, n in zip(specs, operands, ell_n):
        s = s.replace("...", ell[len(ell) - n:] if n else "")  # ellipsis dims align right
        if len(s) != op.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(s)}) "
                               f"does not match the number of dimensions ({op.ndim}) for operand "
                               f"{len(new_specs)}")
        new_specs.append(s)
    if out is None:
        counts = {}
        for s in new_specs:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
        if len(set(out)) != len(out):
            c = next(c for c in out if out.count(c) > 1)
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the "
                               f"output of {eq!r}")
        missing = set(out).difference(*new_specs)
        if missing:
            raise RuntimeError(f"einsum(): output subscript {min(missing)} does not appear in "
                               f"the equation for any input operand of {eq!r}")
    return new_specs, out


def _take_diagonals(specs, operands):
    """Operands whose subscripts repeat a letter ('ii', 'iij') replaced by their diagonals
    (the letter once, as the last dim), so that the contraction and its gradient see each
    letter once per operand; diagonal() is differentiable."""
    specs, operands = list(specs), list(operands)
    for k, (s, op) in enumerate(zip(specs, operands)):
        while len(set(s)) != len(s):
            c = next(c for c in s if s.count(c) > 1)
            p = s.index(c)
            q = s.index(c, p + 1)
            if op.shape[p] != op.shape[q]:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but the "
                                   f"sizes don't match, {op.shape[p]} != {op.shape[q]}")
            op = op.diagonal(0, p, q)
            s = s[:p] + s[p + 1:q] + s[q + 1:] + c
        specs[k], operands[k] = s, op
    return specs, operands


# NOTE [Two-operand einsum as a matmul]
# np.einsum without optimize sums a contraction in its own loop, one product after another (and
# with optimize it still does for any contraction with batch indices, such as attention's
# 'bhij,bhjd->bhid'): slow, and in float32 far less accurate than BLAS's blocked sums (the V
# gradient of attention over 2048 keys: 1.7e-5 from float64 against torch's 3.5e-6; torch
# computes such einsums with bmm). A two-operand equation whose every index is a batch index
# (both operands and the output), a contracted one (both operands only) or kept from one
# operand is that matmul: each operand is laid out (batch, kept, contracted) and
# (batch, contracted, kept), the product is reshaped and its axes put in the output's order.
# Anything else (ellipses, an index repeated or summed within one operand, sizes that
# broadcast, integer dtypes, float16) stays np.einsum's.
def _einsum_as_matmul(eq, a, b):
    """a and b contracted by ``eq`` ('ab,bc->ac' form) through np.matmul, or None."""
    if ("." in eq or "->" not in eq or a.dtype != b.dtype or a.dtype.kind not in "fc"
            or a.dtype.itemsize < 4):  # float16's matmul would round each block's sum to half
        return None
    lhs, out = eq.split("->")
    specs = lhs.split(",")
    if len(specs) != 2:
        return None
    sa, sb = specs
    if (len(set(sa)) != len(sa) or len(set(sb)) != len(sb) or len(set(out)) != len(out)
            or len(sa) != a.ndim or len(sb) != b.ndim):
        return None
    size = {}
    for spec, x in ((sa, a), (sb, b)):
        for c, n in zip(spec, x.shape):
            if size.setdefault(c, n) != n:
                return None
    if (any(c not in sb and c not in out for c in sa)
            or any(c not in sa and c not in out for c in sb) or any(c not in size for c in out)):
        return None
    batch = [c for c in out if c in sa and c in sb]
    kept_a = [c for c in out if c in sa and c not in sb]
    kept_b = [c for c in out if c in sb and c not in sa]
    summed = [c for c in sa if c in sb and c not in out]
    bsz = [size[c] for c in batch]
    m, k, n = (int(np.prod([size[c] for c in cs])) for cs in (kept_a, summed, kept_b))
    at = a.transpose([sa.index(c) for c in batch + kept_a + summed]).reshape(bsz + [m, k])
    bt = b.transpose([sb.index(c) for c in batch + summed + kept_b]).reshape(bsz + [k, n])
    res = np.matmul(at, bt).reshape(bsz + [size[c] for c in kept_a + kept_b])
    order = batch + kept_a + kept_b
    res = res.transpose([order.index(c) for c in out])
    return res if res.flags.c_contiguous else res.copy()  # (ascontiguousarray makes 0-d 1-d)


class Einsum(Op):
    """np.einsum with the gradient of each operand written as another einsum."""

    holomorphic = True  # see NOTE [Complex gradients]

    @staticmethod
    def forward(ctx, eq, *xs):
        ctx.eq = eq
        ctx.save_for_backward(*xs)
        dt = xs[0].dtype
        if dt == D.bfloat16.np:  # np.einsum rejects bfloat16: compute in float32, round back
            xs = tuple(x.astype(np.float32) for x in xs)
        if len(xs) == 2:
            out = _einsum_as_matmul(eq, xs[0], xs[1])  # NOTE [Two-operand einsum as a matmul]
            if out is not None:
                return out.astype(dt, copy=False)
        return np.asarray(np.einsum(eq, *xs, optimize=len(xs) > 2)).astype(dt, copy=False)

    @staticmethod
    def backward(ctx, grad):
        xs = ctx.saved_tensors
        lhs, out = ctx.eq.split("->")
        specs = lhs.split(",")
        grads = [None]
        for i, (s, x) in enumerate(zip(specs, xs)):
            if not ctx.needs_input_grad[i + 1]:
                grads.append(None)
                continue
            if len(set(s)) != len(s):
                raise RuntimeError("einsum backward: repeated subscripts within one operand "
                                   "(diagonals) are not differentiable in ember yet")
            others = [(sp, xx) for j, (sp, xx) in enumerate(zip(specs, xs)) if j != i]
            avail = set(out).union(*[set(sp) for sp, _ in others]) if others else set(out)
            keep = "".join(c for c in s if c in avail)
            eq = ",".join([out] + [sp for sp, _ in others]) + "->" + keep
            g = Einsum.apply(eq, grad, *[xx for _, xx in others])
            if keep != s:  # an index summed away inside this operand only: broadcast back
                g = g.reshape([x.shape[s.index(c)] if c in keep else 1 for c in s]).expand(
                    tuple(x.shape))
            grads.append(g)
        return tuple(grads)


def _sublist_letters(sublist) -> str:
    """One operand's subscript list (ints in [0, 52), Ellipsis) as equation letters."""
    letters = []
    for s in sublist:
        if s is Ellipsis:
            letters.append("...")
            continue
        s = operator.index(s)
        if not 0 <= s < len(string.ascii_letters):
            raise ValueError("einsum(): subscript in subscript list is not within the valid "
                             f"range [0, 52); got {s}")
        letters.append(string.ascii_letters[s])
    return "".join(letters)


def _einsum_from_sublists(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]): the equation and operands
    (NumPy's sublist form, which torch.einsum also takes)."""
    operands = list(args[0:len(args) - len(args) % 2:2])
    specs = [_sublist_letters(sub) for sub in args[1::2][:len(operands)]]
    equation = ",".join(specs)
    if len(args) % 2:
        equation += "->" + _sublist_letters(args[-1])
    return equation, tuple(operands)


def einsum(equation, *operands):
    """Einstein summation, e.g. einsum('bij,bjk->bik', a, b); supports '...' and the sublist
    form einsum(a, [0, 1], b, [1, 2], [0, 2])."""
    if isinstance(equation, Tensor):
        equation, operands = _einsum_from_sublists((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    for i, op in enumerate(operands):
        if not isinstance(op, Tensor):
            raise TypeError(f"einsum(): expected Tensor as element {i} in argument 1, but got "
                            f"{type(op).__name__}")
    specs, out = _parse_einsum(equation, operands)
    sizes = {}
    for s, op in zip(specs, operands):
        for c, n in zip(s, op.shape):
            if c in sizes and sizes[c] != n and 1 not in (sizes[c], n):
                raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes "
                                   f"(original->remapped): subscript '{c}' has size {sizes[c]} "
                                   f"and {n}")
            sizes[c] = max(sizes.get(c, n), n)
    dt = operands[0].dtype
    for op in operands[1:]:
        if op.dtype != dt:
            raise RuntimeError(f"einsum(): expected all operands to have the same dtype; got "
                               f"{dt} and {op.dtype}")
    if len(operands) == 1:
        if len(set(specs[0])) != len(specs[0]):
            specs, operands = _take_diagonals(specs, operands)
        if not (dt.is_floating_point or dt.is_complex) and not set(specs[0]) <= set(out):
            operands = [operands[0].to(D.int64)]  # one operand summed: torch's sum (int64)
    else:
        if dt is D.bool_:
            no_bool_kernel("einsum", *operands)
        for s in specs:
            if len(set(s)) != len(s):
                specs, operands = _take_diagonals(specs, operands)
                break
    try:
        return Einsum.apply(",".join(specs) + "->" + out, *operands)
    except ValueError as e:  # NumPy's refusal, as torch's error type
        raise RuntimeError(f"einsum(): {e} (equation {equation!r}, operand shapes "
                           f"{[list(op.shape) for op in operands]})") from None


export(einsum)
