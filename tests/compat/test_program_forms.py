"""Classes of gaps the corpus's later programs found: the data forms ``tensor`` reads (the
sequence protocol: pytorch/examples' REINFORCE builds its returns in a deque) and the private
config modules programs set before compiling (karpathy/llm.c imports torch._inductor.config)."""
from __future__ import annotations

import array
import collections
import importlib
import types

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


class _Seq:
    """A user sequence: only __len__ and __getitem__."""

    def __len__(self):
        return 3

    def __getitem__(self, i):
        if i >= 3:
            raise IndexError(i)
        return i * 1.5


_FORMS = {
    "deque": lambda: collections.deque([1, 2.5, 3]),
    "range": lambda: range(5),
    "empty_range": lambda: range(0),
    "array_f": lambda: array.array("f", [1, 2]),
    "array_i": lambda: array.array("i", [1, 2]),
    "memoryview": lambda: memoryview(b"ab"),
    "nested_mixed": lambda: [collections.deque([1, 2]), (3, 4), range(5, 7)],
    "user_sequence": _Seq,
    "tuple_of_bools": lambda: (True, False),
    "tensors_in_deque": lambda: collections.deque([np.float64(1.5), 2]),
}


@pytest.mark.parametrize("form", sorted(_FORMS))
def test_tensor_reads_the_sequence_protocol_like_torch(form):
    got = ember.tensor(_FORMS[form]())
    want = torch.tensor(_FORMS[form]())
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert ember.as_tensor(_FORMS[form]()).shape == tuple(want.shape)


@pytest.mark.parametrize("data", [{1, 2}, {"a": 1}, None, object(), (x for x in [1])],
                         ids=["set", "dict", "None", "object", "generator"])
def test_tensor_of_data_without_a_dtype_raises_runtime_error_like_torch(data):
    with pytest.raises(RuntimeError):
        torch.tensor(data)
    with pytest.raises(RuntimeError, match=f"could not infer dtype of {type(data).__name__}"):
        ember.tensor(data)


def test_tensor_of_a_string_raises_type_error_like_torch():
    with pytest.raises(TypeError):
        torch.tensor("ab")
    with pytest.raises(TypeError, match="invalid data type 'str'"):
        ember.tensor("ab")


# ------------------------------------------------------------------ private config modules
# (module path, knob sub-namespaces) programs import to tune torch before compiling
_CONFIG_MODULES = [("_inductor.config", ("triton", "cpp")), ("_functorch.config", ())]


@pytest.mark.parametrize("path,groups", _CONFIG_MODULES)
def test_config_module_has_torchs_knobs_and_defaults(path, groups):
    ours = importlib.import_module("ember." + path)
    theirs = importlib.import_module("torch." + path)
    names = [n for n, v in vars(ours).items() if not n.startswith("_") and n not in groups
             and not callable(v) and not isinstance(v, types.ModuleType) and n != "annotations"]
    assert names, path
    for name in names:
        assert getattr(ours, name) == getattr(theirs, name), f"{path}.{name}"
    for group in groups:
        for name in vars(getattr(ours, group)):
            if not name.startswith("_"):
                assert getattr(getattr(ours, group), name) == \
                    getattr(getattr(theirs, group), name), f"{path}.{group}.{name}"


def test_inductor_config_knobs_set_and_unknown_knobs_raise_like_torch():
    from ember._inductor import config

    saved = config.coordinate_descent_tuning
    try:
        config.coordinate_descent_tuning = True          # llm.c's train_gpt2.py
        assert config.coordinate_descent_tuning is True
    finally:
        config.coordinate_descent_tuning = saved
    for mod in (config, torch._inductor.config):
        with pytest.raises(AttributeError, match="does not exist"):
            mod.coordinate_descent_tunning = True
        with pytest.raises(AttributeError, match="does not exist"):
            mod.triton.no_such_knob = 1


def test_version_module_reads_like_a_cpu_build_of_torch():
    # llm.c prints torch.version.__version__; others branch on torch.version.cuda / .hip
    assert ember.version.__version__ == ember.__version__
    for name in ("cuda", "hip", "rocm", "xpu", "debug", "git_version"):
        assert hasattr(torch.version, name) and hasattr(ember.version, name), name
    assert ember.version.cuda is None and ember.version.hip is None and not ember.version.debug


def test_functorch_config_is_an_attribute_after_import_torch():
    # gpt-fast's generate.py imports torch._dynamo.config and torch._inductor.config, then sets
    # torch._functorch.config.enable_autograd_cache without importing it: torch imports it
    assert ember._functorch.config.enable_autograd_cache is torch._functorch.config \
        .enable_autograd_cache
    ember._functorch.config.enable_autograd_cache = False
    try:
        assert ember._functorch.config.enable_autograd_cache is False
    finally:
        ember._functorch.config.enable_autograd_cache = True
    with pytest.raises(AttributeError, match="does not exist"):
        ember._functorch.config.enable_autograd_caches = True


def test_attention_with_a_boolean_mask_compiles_without_graph_breaks():
    # gpt-fast's Attention: scaled_dot_product_attention(q, k, v, attn_mask=bool_mask) inside
    # torch.compile(fullgraph=True); ember's mask inversion was not an op (Unsupported)
    F = ember.nn.functional
    tf = torch.nn.functional
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in
               [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)])
    masks = [np.tril(np.ones((3, 5), bool)), np.ones((3, 5), bool)]
    compiled = ember.compile(lambda *a: F.scaled_dot_product_attention(*a[:3], attn_mask=a[3]),
                             fullgraph=True)
    for m in masks + masks:   # the second round replays the captured graph
        ours = compiled(*(ember.tensor(a) for a in (q, k, v, m)))
        theirs = tf.scaled_dot_product_attention(*(torch.tensor(a) for a in (q, k, v)),
                                                 attn_mask=torch.tensor(m))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
