"""``ember.distributed.checkpoint.hf_storage``: the safetensors readers/writers of distributed
checkpoints (transformers imports them at import time); making one raises."""
from __future__ import annotations

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]

_WHY = "ember has no distributed checkpoints (torch.distributed.checkpoint)"


class HuggingFaceStorageReader:
    """Reads a distributed checkpoint from safetensors files: not implemented in ember."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"HuggingFaceStorageReader: {_WHY}")


class HuggingFaceStorageWriter:
    """Writes a distributed checkpoint as safetensors files: not implemented in ember."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"HuggingFaceStorageWriter: {_WHY}")
