"""``ember._ops``: torch's module path of ``torch.ops`` (``from torch._ops import ops``, as DLRM
writes it) and of the operator overload classes."""
from __future__ import annotations

from . import ops as ops
from .ops._op_namespaces import OpOverload as OpOverload
from .ops._op_namespaces import OpOverloadPacket as OpOverloadPacket

__all__ = ["ops", "OpOverload", "OpOverloadPacket"]
