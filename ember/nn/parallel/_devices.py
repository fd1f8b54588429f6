"""What the multi-GPU helpers of torch.nn.parallel (scatter, gather, replicate, parallel_apply)
do on a machine without CUDA devices, which is every machine ember runs on: they refuse. torch's
CPU build refuses too (a device named "cpu" with ValueError, device ids and CPU tensors with an
assertion), so a program that imports them at the top (DLRM) and calls them only when it has
several GPUs runs unchanged."""
from __future__ import annotations

from ..._backend import NoCudaError


def check_devices(name, devices, expected="non cpu"):
    """ValueError for a device named "cpu" (torch's words), NoCudaError for any other."""
    for d in devices or ():
        if str(d).split(":")[0] == "cpu":
            raise ValueError(f"Expected a {expected} device, but got: {d}")
    raise NoCudaError(f"{name}: needs CUDA devices to copy to; ember has none (torch's CPU "
                      "build cannot run it either). Call the module directly on the CPU.")
