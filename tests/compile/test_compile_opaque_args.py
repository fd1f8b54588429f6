"""Non-tensor arguments of a compiled call (NOTE [Arguments a guard cannot see]): one keyed by
its id must never replay a capture made for another object that held that id, nor for the same
object before it was changed. Objects whose data lives outside Python attributes (PIL images,
buffers, array-likes) run the call eagerly; plain objects, __dict__ or __slots__, are guarded."""
import array
import dataclasses
import gc

import numpy as np
import pytest

import ember
from ember._dynamo.exc import Unsupported


class _Mean(ember.nn.Module):
    def forward(self, image):
        return ember.from_numpy(np.asarray(image, dtype=np.float32)).mean()


def test_a_module_over_pil_images_follows_each_image():
    image_mod = pytest.importorskip("PIL.Image")
    mean = ember.compile(_Mean())
    for v in range(0, 250, 10):
        img = image_mod.fromarray(np.full((4, 4), v, dtype=np.uint8))
        assert mean(img).item() == v
        del img
        gc.collect()  # frees the image, so the next one may take its id
    why = mean.__dict__["_compiled"].last_breaks[0][0]
    assert "PIL.Image.Image argument exposes the array interface" in why


class _ArrayLike:
    """A container whose data the guard cannot read (private, reached by __array__)."""

    def __init__(self, values):
        self._values = np.asarray(values, dtype=np.float32)

    def __array__(self, dtype=None, copy=None):
        return self._values


def test_an_array_like_written_in_place_is_read_again():
    f = ember.compile(lambda a: ember.from_numpy(np.asarray(a)).sum())
    box = _ArrayLike([1.0, 2.0])
    assert f(box).item() == 3.0
    box._values[0] = 10.0
    assert f(box).item() == 12.0
    assert "_ArrayLike argument exposes the array interface" in f.last_breaks[0][0]


@pytest.mark.parametrize("make", [bytearray, lambda b: array.array("B", b),
                                  lambda b: memoryview(bytearray(b))])
def test_a_buffer_written_in_place_is_read_again(make):
    f = ember.compile(lambda b: ember.tensor(list(b), dtype=ember.float32).sum())
    buf = make(bytes([1, 2, 3]))
    assert f(buf).item() == 6
    buf[0] = 10
    assert f(buf).item() == 15
    assert "exposes a buffer" in f.last_breaks[0][0]


def test_bytes_are_keyed_by_value():
    f = ember.compile(lambda x, b: x * len(b) + b[0])
    x = ember.ones(2)
    assert f(x, b"\x01\x02").tolist() == [3.0, 3.0]
    assert f(x, b"\x05\x02\x03").tolist() == [8.0, 8.0]
    assert f(x, b"\x01\x02").tolist() == [3.0, 3.0]
    assert f.last_breaks == [] and f.stats["hits"] == 1


def test_an_opaque_argument_under_fullgraph_raises():
    pytest.importorskip("PIL.Image")
    from PIL import Image
    f = ember.compile(_Mean(), fullgraph=True)
    with pytest.raises(Unsupported, match="PIL.Image.Image argument.*fullgraph=True"):
        f(Image.new("L", (2, 2)))


class _Cfg:
    def __init__(self, scale):
        self.scale = scale


@dataclasses.dataclass(slots=True)
class _SlotCfg:
    scale: float


@pytest.mark.parametrize("kind", [_Cfg, _SlotCfg])
def test_a_plain_object_changed_in_place_or_replaced_at_its_id(kind):
    f = ember.compile(lambda x, c: x * c.scale)
    x = ember.ones(2)
    cfg = kind(2.0)
    assert f(x, cfg).tolist() == [2.0, 2.0]
    assert f(x, cfg).tolist() == [2.0, 2.0]
    cfg.scale = 3.0
    assert f(x, cfg).tolist() == [3.0, 3.0]
    for s in range(4, 12):
        del cfg
        gc.collect()
        cfg = kind(float(s))  # often at the freed object's id
        assert f(x, cfg).tolist() == [s, s]
    assert f.last_breaks == [] and f.stats["hits"] >= 1


def test_tensor_and_module_arguments_still_replay():
    lin = ember.nn.Linear(2, 2)
    f = ember.compile(lambda m, t: m(t) * 2)
    for _ in range(3):
        f(lin, ember.ones(2))
    assert f.stats["hits"] == 2 and f.last_breaks == []


def test_numpy_scalars_are_keyed_by_value():
    f = ember.compile(lambda x, s: x * s)
    x = ember.ones(2)
    for v in (2.0, 3.0, 2.0, 3.0):
        assert f(x, np.float32(v)).tolist() == [v, v]
        gc.collect()
    assert f.last_breaks == [] and f.stats["hits"] == 2
