"""torchvision.io: image and video decoding is not served offline (transformers imports the
module when torchvision is present; a call raises)."""
from __future__ import annotations


def _absent(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"torchvision.io.{name}: not in the compatibility stand-in")
    return fn


read_image = _absent("read_image")
decode_image = _absent("decode_image")
read_video = _absent("read_video")
