"""ember.func: composable function transforms (torch.func): grad, vjp, jvp, jacrev, jacfwd,
hessian, linearize, vmap, functional_call and stack_module_state.

Transforms nest (``grad(grad(f))``, ``vmap(grad(f))``); vmap runs the function once on batched
tensors, each op through its batching rule (NOTE [vmap batching] in _batched.py).
"""

from ._rearrange import rearrange
from ._module import functional_call, replace_all_batch_norm_modules_, stack_module_state
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ._vmap import vmap

__all__ = ["debug_unwrap", "functional_call", "functionalize", "grad", "grad_and_value",
           "hessian", "jacfwd", "jacrev", "jvp", "linearize", "rearrange",
           "replace_all_batch_norm_modules_", "stack_module_state", "vjp", "vmap"]


def functionalize(func, *, remove="mutations"):
    """``func`` itself: ember's transforms handle in-place operations directly."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument "
                           f"for remove={remove}. Valid options are: mutations, "
                           "mutations_and_views")
    return func


def debug_unwrap(tensor, *, recurse=True):
    """Inside vmap, the physical tensor behind a batched one (batch dims in front); any other
    tensor as it is."""
    from ._batched import is_batched, physical
    return physical(tensor)[0] if is_batched(tensor) else tensor
