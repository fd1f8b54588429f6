"""ember.jit's eager helpers: annotate, isinstance on typing containers, Attribute, interface,
script_if_tracing and the fusion settings, against torch.jit's eager behaviour."""
# ruff: noqa: UP006, UP007, UP035, UP045  (the typing forms are what programs pass)
from __future__ import annotations

import warnings
from typing import Dict, List, Optional, Tuple, Union

import pytest

import ember
import ember.jit as jit

CASES = [   # (object, target type, torch.jit.isinstance's answer)
    ([1, 2], List[int], True), ([1, "a"], List[int], False), ({"a": 1}, Dict[str, int], True),
    ({"a": "b"}, Dict[str, int], False), (None, Optional[int], True),
    (3, Optional[int], True), ("s", Optional[int], False), ((1, "a"), Tuple[int, str], True),
    ((1, "a"), Tuple[int, int], False), (1, float, False), (True, int, True),
    ([1], list[int], True), ([[1], [2.0]], List[List[int]], False),
    (1.5, Union[int, float], True), ((1,), Tuple[int, int], False),
]


@pytest.mark.parametrize("obj,target,expected", CASES)
def test_jit_isinstance_checks_elements(obj, target, expected):
    assert jit.isinstance(obj, target) is expected


@pytest.mark.parity
@pytest.mark.parametrize("obj,target,expected", CASES)
def test_jit_isinstance_matches_torch(obj, target, expected):
    torch = pytest.importorskip("torch")
    assert jit.isinstance(obj, target) == torch.jit.isinstance(obj, target)


def test_jit_isinstance_tensor_dict_and_empty_container_warns():
    assert jit.isinstance({"w": ember.ones(2)}, Dict[str, ember.Tensor])
    assert not jit.isinstance({"w": 1}, Dict[str, ember.Tensor])
    with pytest.warns(UserWarning, match="empty container"):
        assert jit.isinstance([], List[str])
    from ember.jit import isinstance as imported
    assert imported is jit.isinstance


def test_jit_annotate_attribute_interface_script_if_tracing():
    x = ember.zeros(3)
    assert jit.annotate(List[int], []) == [] and jit.annotate(ember.Tensor, x) is x
    a = jit.Attribute([1, 2], List[int])
    assert a.value == [1, 2] and a.type == List[int] and a == ([1, 2], List[int])

    @jit.interface
    class Proto:
        def forward(self, x: ember.Tensor) -> ember.Tensor: ...
    assert isinstance(Proto, type) and Proto.__name__ == "Proto"
    with pytest.raises(RuntimeError, match="jit.interface: expected a class"):
        jit.interface(3)

    @jit.script_if_tracing
    def double(t):
        return t * 2
    assert double.__name__ == "double"
    assert ember.equal(double(ember.arange(3)), ember.tensor([0, 2, 4]))
    traced = jit.trace(lambda t: double(t) + 1, (ember.ones(2),))
    assert ember.equal(traced(ember.full((2,), 3.0)), ember.full((2,), 7.0))


def test_jit_fusion_settings_round_trip():
    before = jit.onednn_fusion_enabled()
    try:
        jit.enable_onednn_fusion(True)
        assert jit.onednn_fusion_enabled() is True
    finally:
        jit.enable_onednn_fusion(before)
    old = jit.set_fusion_strategy([("DYNAMIC", 3)])
    try:
        assert old == [("STATIC", 2), ("DYNAMIC", 10)]
        assert jit.set_fusion_strategy(old) == [("DYNAMIC", 3)]
    finally:
        jit.set_fusion_strategy(old)
    with pytest.raises(ValueError, match="'STATIC' or 'DYNAMIC'.*'FOO'"):
        jit.set_fusion_strategy([("FOO", 2)])
    with jit.strict_fusion() as ctx:
        y = ember.ones(2) + 1
    assert isinstance(ctx, jit.strict_fusion) and y.tolist() == [2.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jit.isinstance([1], List[int])
