"""What the ``ember.linalg`` ops share: LinAlgError, torch's result namedtuples, argument
checks, the ``out=`` handling and the registration decorator."""
from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np
from scipy.linalg import lapack as _lapack

from ... import _dtype as D
from ..._tensor import Tensor
from ..registry import register, write_out


# NOTE [linalg parameter names]
# torch's linalg docs write the matrix argument as ``A``, but for cholesky(_ex), eigh,
# eigvalsh, lstsq (input, b), matrix_exp, matrix_norm, matrix_power, matrix_rank, pinv and
# solve_triangular its argument parser takes ``input=`` and rejects ``A=``; the others (det,
# inv, solve, svd, qr, ...) take ``A=``. ember's functions use the parser's name and bind
# ``A = input`` first thing (tests/compat/test_keyword_calls.py calls each by keyword).
def linalg_op(fn):
    """Register ``fn`` as ``ember.linalg.<fn.__name__>`` (it handles ``out=`` itself)."""
    return register(fn.__name__, namespace="linalg", method=False, wrap_out=False)(fn)


class LinAlgError(RuntimeError):
    """A linear-algebra failure (singular matrix, not positive-definite), like
    torch.linalg.LinAlgError; a RuntimeError subclass."""


_rt = {n: namedtuple(n, f) for n, f in (
    ("linalg_inv_ex", "inverse info"), ("linalg_cholesky_ex", "L info"),
    ("linalg_slogdet", "sign logabsdet"), ("slogdet", "sign logabsdet"), ("linalg_qr", "Q R"),
    ("qr", "Q R"), ("linalg_svd", "U S Vh"), ("svd", "U S V"),
    ("linalg_eigh", "eigenvalues eigenvectors"),
    ("linalg_lstsq", "solution residuals rank singular_values"),
    ("linalg_solve_ex", "result info"))}


_TORCH_NAMES = {D.float32: "Float", D.float64: "Double", D.float16: "Half",
                D.bfloat16: "BFloat16", D.int64: "Long", D.int32: "Int", D.int16: "Short",
                D.int8: "Char", D.uint8: "Byte", D.bool_: "Bool", D.complex64: "ComplexFloat",
                D.complex128: "ComplexDouble"}


# ----------------------------------------------------------------------------- checks
# NOTE [linalg dtype errors]
# torch checks the dtype of most linalg inputs in the function (RuntimeError "Expected a
# floating point or complex tensor"), but for these it lets a float16/bfloat16 input (and, where
# the flag is True, an integer or bool one) reach its CPU kernel, whose dispatch raises
# NotImplementedError '"<kernel>" not implemented for <dtype>'. ember raises the exception type
# torch raises (tests/parity/test_linalg_sweep.py compares them), with its own message.
_KERNEL_DTYPES = {  # ember op name -> (torch's CPU kernel, integer inputs reach it too)
    "linalg.det": ("lu_cpu", False), "linalg.solve": ("lu_cpu", False),
    "linalg.lu": ("lu_cpu", True), "linalg.lu_factor": ("lu_cpu", True),
    "linalg.lu_factor_ex": ("lu_cpu", True),
    "linalg.cholesky": ("cholesky_cpu", False), "linalg.cholesky_ex": ("cholesky_cpu", False),
    "linalg.eigh": ("linalg_eigh_cpu", True), "linalg.eigvalsh": ("linalg_eigh_cpu", True),
    "linalg.eig": ("linalg_eig_out_cpu", False), "linalg.eigvals": ("linalg_eig_out_cpu", False),
    "linalg.svd": ("linalg_svd_cpu", False), "linalg.svdvals": ("linalg_svd_cpu", False),
    "linalg.cond": ("linalg_svd_cpu", False), "linalg.qr": ("geqrf_cpu", False),
    "linalg.solve_triangular": ("triangular_solve_cpu", True),
    "linalg.ldl_factor": ("ldl_factor_kernel_cpu", False),
    "linalg.ldl_factor_ex": ("ldl_factor_kernel_cpu", False),
    "linalg.householder_product": ("orgqr_cpu", True),
}


def _check_float(A, name, lapack=True):
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    kernel, ints_too = _KERNEL_DTYPES.get(name, (None, False))
    if not (A.is_floating_point() or A.is_complex()):
        err = NotImplementedError if ints_too else RuntimeError
        raise err(f"{name}: Expected a floating point or complex tensor as input. Got "
                  f"{_TORCH_NAMES[A.dtype]}")
    if lapack and A.dtype in (D.float16, D.bfloat16):
        err = NotImplementedError if kernel else RuntimeError  # NOTE [linalg dtype errors]
        raise err(f"{name}: Low precision dtypes not supported. Got "
                  f"{_TORCH_NAMES[A.dtype]}; convert to float32 or float64 first")


def _check_matrix(A, name, square=False):
    _check_float(A, name)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _batch_prefix(a, b):
    return f"(Batch element {b}): " if a.ndim > 2 else ""


def _each(a):
    """(batch index, 2-D matrix) pairs of a (*, m, n) array."""
    flat = a.reshape((-1,) + a.shape[-2:])
    return enumerate(flat)


def _getrf_info(m):
    return int(_lapack.get_lapack_funcs("getrf", (m,))(m)[2])


def _singular(name, a):
    """The LinAlgError torch raises for a singular (batch of) matrix."""
    for b, m in _each(a):
        info = _getrf_info(m)
        if info > 0:
            return LinAlgError(
                f"{name}: {_batch_prefix(a, b)}The diagonal element {info} is zero, the inversion "
                "could not be completed because the input matrix is singular.")
    return LinAlgError(f"{name}: the input matrix is singular")


def _t(x):
    return x.transpose(-2, -1)


def _broadcast_batch(name, A, B):
    try:
        batch = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"{name}: the batch dimensions of A {list(A.shape)} and B "
                           f"{list(B.shape)} do not broadcast") from None
    return A.expand(batch + tuple(A.shape[-2:])), B.expand(batch + tuple(B.shape[-2:]))


def _check_pair(name, A, B):
    _check_float(B, name)
    if A.dtype != B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of type "
                           f"{_TORCH_NAMES[A.dtype]} and B of type {_TORCH_NAMES[B.dtype]} "
                           "instead")


# ----------------------------------------------------------------------------- pinv, rank, ...
def _tolerances(s_max, m, n, dtype, atol, rtol):
    """torch's rule: rtol defaults to eps * max(m, n) unless atol > 0 was given."""
    atol_v = 0.0 if atol is None else (atol._data if isinstance(atol, Tensor) else atol)
    if rtol is None:
        rtol_v = np.finfo(dtype).eps * max(m, n) if atol is None or np.all(
            np.asarray(atol_v) <= 0) else 0.0
    else:
        rtol_v = rtol._data if isinstance(rtol, Tensor) else rtol
    return np.maximum(np.asarray(atol_v), np.asarray(rtol_v) * s_max)


# torch's linalg out= wants the result's dtype exactly (no casting), except these
_CASTING_OUT = ("linalg.pinv", "linalg.cond", "linalg.matrix_rank", "linalg.tensorinv",
                "linalg.tensorsolve", "linalg.householder_product", "linalg.eigvals")


def _out(res, out, name):
    if out is None:
        return res
    if name not in _CASTING_OUT:
        for o, r in zip(out if isinstance(res, tuple) else (out,),
                        res if isinstance(res, tuple) else (res,)):
            if isinstance(o, Tensor) and o.dtype != r.dtype:
                raise RuntimeError(f"{name}: Expected out tensor to have dtype {r.dtype}, but got "
                                   f"{o.dtype} instead; pass an out of the result's dtype")
    if isinstance(res, tuple):
        for o, r in zip(out, res):
            write_out(o, r, name)
        return type(res)(*out)
    return write_out(out, res, name)


_WARNED: set[str] = set()


def _warn_once(name, message):
    """A deprecation UserWarning, once per process, as torch warns for its legacy names."""
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(message, UserWarning, stacklevel=3)
