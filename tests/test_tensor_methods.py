"""tools/tensor_methods.py: the one listing of where each Tensor attribute is defined."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tool():
    spec = importlib.util.spec_from_file_location(
        "tensor_methods", os.path.join(ROOT, "tools", "tensor_methods.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_tensor_attribute_resolves_to_a_file():
    rows = dict(_tool().rows())
    missing = sorted(name for name, where in rows.items() if where is None)
    assert not missing, f"Tensor attributes the listing cannot place: {missing}"


def test_listing_points_registered_ops_at_their_module():
    rows = dict(_tool().rows())
    assert rows["tanh"] == "ember/ops/unary.py: Tanh"       # the decorated `def tanh`
    assert rows["index_select"].startswith("ember/ops/gather.py")
    assert rows["det"].startswith("ember/ops/linalg/")
    assert rows["backward"] == "ember/_tensor.py: Tensor.backward"
