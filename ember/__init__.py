"""ember: an eager, define-by-run deep-learning library with a PyTorch-compatible API."""
from __future__ import annotations

from ._dtype import (bfloat16, bool_ as bool, dtype, float16, float32, float64,  # noqa: F401
                     get_default_dtype, int8, int16, int32, int64, promote_types,
                     set_default_dtype, uint8, can_cast)
from ._dtype import float16 as half, float32 as float, float64 as double  # noqa: F401
from ._dtype import int16 as short, int32 as int, int64 as long  # noqa: F401
from ._dtype import complex64 as complex64, complex128 as complex128
from ._dtype import complex64 as cfloat, complex128 as cdouble  # noqa: F401
from ._backend import device, get_device_module  # noqa: F401
from ._size import Size  # noqa: F401
from . import autograd  # noqa: F401  (before _tensor: NOTE [Tensor and autograd imports])
from ._tensor import Tensor, UntypedStorage  # noqa: F401
from . import ops as _ops  # noqa: F401  (registers every op on Tensor)
from .ops.registry import FUNCTIONS as _FUNCTIONS
from .ops.random import Generator, default_generator  # noqa: F401
from . import linalg  # noqa: F401
from .autograd import (enable_grad, inference_mode, is_grad_enabled,  # noqa: F401
                       is_inference_mode_enabled, no_grad, set_grad_enabled)
from .autograd.anomaly_mode import (is_anomaly_check_nan_enabled,  # noqa: F401
                                    is_anomaly_enabled)
from ._determinism import (are_deterministic_algorithms_enabled,  # noqa: F401
                           use_deterministic_algorithms)

globals().update({k: v for k, v in _FUNCTIONS.items() if not k.startswith("_")})
del _FUNCTIONS

from .ops.reduce import values_indices as _vi  # noqa: E402
import types as _types  # noqa: E402

return_types = _types.SimpleNamespace(**_vi)


def result_type(tensor, other):
    """The dtype an arithmetic op on the two operands would produce."""
    from .ops.registry import result_dtype
    return result_dtype(tensor, other)


def typename(obj):
    return obj.type() if isinstance(obj, Tensor) else type(obj).__name__
from . import profiler  # noqa: E402,F401
from . import cuda, backends, amp, sparse, distributed, onnx, accelerator  # noqa: E402,F401
from .torch_version import TorchVersion as _TorchVersion  # noqa: E402

# NOTE [The version ember reports] (ember/torch_version.py): the PyTorch API level, then ember's
# own release as the local label.
_EMBER_RELEASE = "0.1.0"
__version__ = _TorchVersion(f"2.13.0+ember{_EMBER_RELEASE}")
from . import version  # noqa: E402,F401  (torch.version.__version__, .cuda: llm.c prints them)
from . import cpu, mps, xpu, mtia, hub, random, types, torch_version, quasirandom, library  # noqa: E402,F401
from . import testing  # noqa: E402,F401  (torch imports torch.testing: assert_close, make_tensor)
from . import overrides  # noqa: E402,F401  (torch imports it; Lightning and diffusers subclass its mode)
from ._C import PyTorchFileReader, PyTorchFileWriter  # noqa: E402,F401  (names: Lightning annotates with them)
from .amp import (autocast, is_autocast_enabled, set_autocast_enabled,  # noqa: E402,F401
                  get_autocast_dtype, set_autocast_dtype, is_autocast_cache_enabled,
                  set_autocast_cache_enabled, clear_autocast_cache, is_autocast_available,
                  is_autocast_cpu_enabled, get_autocast_cpu_dtype)
from .sparse import sparse_coo_tensor, spmm, sparse_coo, strided, layout  # noqa: E402,F401
from ._legacy import *  # noqa: E402, F403
from ._threads import set_num_threads, get_num_threads, set_num_interop_threads, get_num_interop_threads  # noqa: E402,F401,E501
from os import environ as _os_environ  # noqa: E402
if _os_environ.get("EMBER_BLAS_THREADS", "").strip().lower() not in ("", "openblas"):
    # OpenBLAS's parallel regions on ember's threads: NOTE [OpenBLAS threads callback]
    from . import _blas_threads  # (compiled only when asked for)
    _blas_threads._from_environment()
from ._compile import compile, set_float32_matmul_precision, get_float32_matmul_precision  # noqa: E402, F401
from . import optim  # noqa: E402,F401
from .serialization import save, load  # noqa: E402,F401
from . import utils  # noqa: E402,F401
from . import nn  # noqa: E402
from . import _dynamo, compiler, _functorch  # noqa: E402,F401
from .nn import parallel as _parallel  # noqa: E402  (makes ember.nn.parallel an attribute)
nn.DataParallel = _parallel.DataParallel  # torch.nn.DataParallel, as torch exports it


def _alias_functional():
    # torch exposes these nn.functional ops at the top level and (some) as Tensor methods
    F = nn.functional
    # (softmax, batch_norm, embedding, the dropouts...: their top-level forms bind differently,
    # see NOTE [Top-level nn forms] in _surface_functions.py)
    top = ("cdist", "pdist", "cosine_similarity", "pairwise_distance", "conv1d", "conv2d",
           "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d", "avg_pool1d",
           "conv3d", "conv_transpose3d", "max_pool3d",
           "adaptive_avg_pool1d", "selu", "celu", "prelu",
           "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "bilinear")
    g = globals()
    for name in top:
        if hasattr(F, name) and name not in g:
            g[name] = getattr(F, name)
    if not hasattr(Tensor, "hardshrink"):
        Tensor.hardshrink = F.hardshrink


_alias_functional()
from .nn.functional._grouped_mm import _grouped_mm  # noqa: E402,F401  (torch._grouped_mm)
from . import multiprocessing  # noqa: E402,F401
from . import fx, jit, export  # noqa: E402,F401  (graph capture: issue 19)
from .jit import ScriptFunction, ScriptModule  # noqa: E402,F401  (torch exports its C++ base classes; Lightning imports them)
from . import special, distributions  # noqa: E402,F401
from . import fft, signal  # noqa: E402,F401  (issue 17)
import math as _math  # noqa: E402
from ._info import (channels_last, channels_last_3d, contiguous_format,  # noqa: E402,F401
                    finfo, get_default_device, iinfo, memory_format, preserve_format,
                    set_default_device, set_printoptions)
from . import _tensor_str  # noqa: E402,F401  (torch._tensor_str.PRINT_OPTS / printoptions)

pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
newaxis = None


def _assert(condition, message):
    """``assert condition, message`` as a function (torch's, which fx can trace through)."""
    assert condition, message


def _inplace_functions():
    # torch also offers a Tensor's in-place methods as functions: ember.exp_(t) is t.exp_()
    names = ("abs_ acos_ acosh_ addmv_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ "
             "asinh_ atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ "
             "detach_ erf_ erfc_ exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ i0_ index_put_ log10_ "
             "log1p_ log2_ log_ logit_ nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ "
             "round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ "
             "zero_ detach fill").split()
    g = globals()
    for name in names:
        method = getattr(Tensor, name, None)
        if method is not None and name not in g:
            g[name] = (lambda m: lambda input, *args, **kwargs: m(input, *args, **kwargs))(method)
            g[name].__name__ = name
            g[name].__doc__ = f"``input.{name}(...)`` as a function."


_inplace_functions()
from . import _foreach  # noqa: E402

_foreach.install(globals())
from . import func  # noqa: E402,F401
from .func import vmap  # noqa: E402,F401
from . import _tensor_surface as _surface  # noqa: E402

_surface.install()
globals().update({k: v for k, v in _surface.FUNCTIONS.items() if k not in globals()})
from . import functional  # noqa: E402,F401  (last: it re-exports top-level functions)

import warnings as _warnings  # noqa: E402

# NOTE [NumPy floating-point warnings]
# torch computes inf/nan results silently; NumPy warns ("overflow encountered in multiply") when a
# ufunc raises a floating-point flag. Wrapping every op in np.errstate costs ~1 us per call, so
# instead this filter ignores exactly those warnings when NumPy attributes them to ember's own
# modules: a program's own NumPy code keeps its warnings, and no op pays anything.
_warnings.filterwarnings(
    "ignore", message=r"(overflow|invalid value|divide by zero|underflow) encountered",
    category=RuntimeWarning, module=r"ember(\.|$)")
# Reductions reach ufunc.reduce through NumPy's own Python wrappers (np.sum, ndarray.sum), so
# NumPy attributes their warnings to its modules, not ember's: those two are silenced too. The
# cost: a program's own np.sum that overflows no longer warns once ember is imported
# (docs/DEVIATIONS.md).
_warnings.filterwarnings(
    "ignore", message=r"(overflow|invalid value|divide by zero|underflow) encountered in reduce",
    category=RuntimeWarning, module=r"numpy\._core\.(fromnumeric|_methods)$")

# NOTE [Import-time objects out of the collector's way]
# Python's full (generation 2) collection walks every tracked object, and after `import ember`
# that is ~190k of them (NumPy, numba, SciPy and ember themselves), all of which live as long
# as the program. An autograd graph alive during a generation-1 collection gets promoted, so
# training steps make full collections due every ~15-30 steps, each a pause of 50-80 ms (a
# single product's hand-off was seen to take 54 ms). gc.freeze() moves the objects that exist
# now to the collector's permanent generation: later full collections walk only what was made
# since. One library per process, two threads (/work/s35/gct2.py under `chrt -f 10`), the
# collector's time per step: ResNet-50 2.34 -> 0.34 ms, MobileNetV2 2.47 -> 0.31 ms (~4 % of
# its step). Objects frozen here are never collected as cyclic garbage: those of a program that
# imports ember late, after building cyclic structures it later drops, would stay
# (docs/DEVIATIONS.md); EMBER_GC_FREEZE=0 leaves the collector alone.
import gc as _gc  # noqa: E402
import os as _os  # noqa: E402

if _os.environ.get("EMBER_GC_FREEZE", "").strip() != "0":
    _gc.freeze()
