"""A NumPy array passed to a compiled call runs the call eagerly. The cache keyed such an
argument by its id, which the next array reuses once the previous one is freed, so a replay
returned the captured result: run.py --compile compiles every outermost module call, the
torchvision stand-in's Grayscale transform (a Module over NumPy images) among them, and S4's
example then trained on one image repeated (10% test accuracy)."""
import gc

import numpy as np
import pytest

import ember
from ember._dynamo.exc import Unsupported


class _Gray(ember.nn.Module):
    def forward(self, image):
        return np.rint(np.asarray(image, float) @ np.array([0.299, 0.587, 0.114]))


def test_a_module_over_numpy_images_follows_each_image():
    gray = ember.compile(_Gray())
    for v in (10, 20, 30, 40, 50):
        out = gray(np.full((2, 2, 3), v, np.uint8))
        gc.collect()  # frees the array, so the next one may take its id
        assert out.sum() == 4 * round(v * 1.0)


def test_a_function_of_a_numpy_array_follows_each_array_and_says_why():
    f = ember.compile(lambda a: ember.from_numpy(a) * 2)
    for v in (1.0, 2.0, 3.0):
        assert f(np.full(3, v)).tolist() == [2 * v] * 3
    assert "NumPy array is an input" in f.last_breaks[0][0]
    with pytest.raises(Unsupported, match="NumPy array.*fullgraph=True"):
        ember.compile(lambda a: a * 2, fullgraph=True)(np.ones(2))


def test_tensor_arguments_still_replay():
    f = ember.compile(lambda t: t * 2)
    for _ in range(3):
        f(ember.ones(2))
    assert f.stats["hits"] == 2 and f.last_breaks == []
