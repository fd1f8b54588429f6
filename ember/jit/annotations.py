"""``torch.jit.annotations``: the typing names TorchScript code imports from it (timm's DenseNet
imports ``List``). ember has no TorchScript compiler, so these are ``typing``'s own."""
from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: UP035 (torch's names)

__all__ = ["Any", "Dict", "List", "Optional", "Tuple", "Union"]
