"""``ember.utils.dlpack``: where torch programs import the DLPack exchange functions from
(``from torch.utils.dlpack import from_dlpack, to_dlpack``); the functions are ember's own."""
from __future__ import annotations

import enum

from .._surface_functions import to_dlpack
from ..ops.creation import from_dlpack

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """The device codes of the DLPack standard (``__dlpack_device__()[0]``); ember's tensors
    are always kDLCPU."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17
