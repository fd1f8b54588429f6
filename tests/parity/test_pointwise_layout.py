"""The memory layout (strides) of pointwise results on permuted operands, against torch.

Programs reach this through `.view()`: torch lays out an elementwise result in its operands'
dim order, so a view that flattens across that order fails there and runs only when the order
is row-major (gram-ai/capsule-networks' `(x * y[:, :, None]).view(n, -1)` on a transposed x).
torch's rule (TensorIterator): dims are ordered by the strides of the first operand that tells
them apart, broadcast (stride-0) dims skipped. ember's results follow NumPy's loop, which agrees
except when the operands' orders conflict, where NumPy falls back to row-major: KNOWN below,
docs/DEVIATIONS.md (Tensor core). A KNOWN case that starts to agree fails here, so the table and
the deviation note are updated with the fix.
"""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.parity

# (name, the operands as (shape, permutation or None), the op given the library); the first
# operand is transposed in most cases: the layout at stake is the one it gives the result
CASES = [
    ("mul by a row", [((10, 4, 16), (1, 0, 2)), ((16,), None)], lambda lib, a, b: a * b),
    ("mul by a middle-broadcast operand", [((10, 4, 16), (1, 0, 2)), ((4, 1, 16), None)],
     lambda lib, a, b: a * b),
    ("broadcast operand first", [((4, 10, 1), None), ((10, 4, 16), (1, 0, 2))],
     lambda lib, a, b: a * b),
    ("both transposed", [((10, 4, 16), (1, 0, 2)), ((10, 4, 16), (1, 0, 2))],
     lambda lib, a, b: a * b),
    ("row-major operand first", [((4, 10, 16), None), ((10, 4, 16), (1, 0, 2))],
     lambda lib, a, b: a + b),
    ("add a 0-d tensor", [((10, 4, 16), (1, 0, 2)), ((), None)], lambda lib, a, b: a + b),
    ("mul by a Python number", [((10, 4, 16), (1, 0, 2))], lambda lib, a: a * 3.0),
    ("exp", [((10, 4, 16), (1, 0, 2))], lambda lib, a: a.exp()),
    ("sigmoid", [((10, 4, 16), (1, 0, 2))], lambda lib, a: a.sigmoid()),
    ("relu", [((10, 4, 16), (1, 0, 2))], lambda lib, a: a.relu()),
    ("clamp", [((10, 4, 16), (1, 0, 2))], lambda lib, a: a.clamp(-1, 1)),
    ("softmax over the last dim", [((10, 4, 16), (1, 0, 2))], lambda lib, a: a.softmax(-1)),
    # the conflicts: a transposed first operand against a row-major or last-dim-broadcast one
    ("mul by a last-dim-broadcast operand", [((10, 4, 16), (1, 0, 2)), ((4, 10, 1), None)],
     lambda lib, a, b: a * b),
    ("sub of a last-dim-broadcast operand", [((10, 4, 16), (1, 0, 2)), ((4, 10, 1), None)],
     lambda lib, a, b: a - b),
    ("div by a last-dim-broadcast operand", [((10, 4, 16), (1, 0, 2)), ((4, 10, 1), None)],
     lambda lib, a, b: a / b),
    ("eq with a last-dim-broadcast operand", [((10, 4, 16), (1, 0, 2)), ((4, 10, 1), None)],
     lambda lib, a, b: a == b),
    ("transposed first, row-major second", [((10, 4, 16), (1, 0, 2)), ((4, 10, 16), None)],
     lambda lib, a, b: a * b),
    ("gelu", [((10, 4, 16), (1, 0, 2))], lambda lib, a: lib.nn.functional.gelu(a)),
]

_CONFLICT = ("NumPy's loop lays out a result of operands with conflicting dim orders "
             "row-major; torch follows the first operand's order")
KNOWN = {
    "mul by a last-dim-broadcast operand": _CONFLICT,
    "sub of a last-dim-broadcast operand": _CONFLICT,
    "div by a last-dim-broadcast operand": _CONFLICT,
    "eq with a last-dim-broadcast operand": _CONFLICT,
    "transposed first, row-major second": _CONFLICT,
    "gelu": "ember's gelu is composed of ops whose intermediate products meet the conflict",
}


def _strides(lib, operands, fn, seed):
    rng = np.random.default_rng(seed)
    tensors = []
    for shape, perm in operands:
        t = lib.tensor(rng.standard_normal(shape).astype(np.float32))
        tensors.append(t.permute(*perm) if perm else t)
    result = fn(lib, *tensors)
    return tuple(result.shape), tuple(result.stride()), result.is_contiguous()


@pytest.mark.parametrize("name, operands, fn", CASES, ids=[c[0] for c in CASES])
def test_pointwise_result_layout_matches_torch(name, operands, fn):
    ours = _strides(ember, operands, fn, 0)
    ref = _strides(torch, operands, fn, 0)
    assert ours[0] == ref[0]
    if name in KNOWN:
        assert ours[1:] != ref[1:], f"{name} now agrees with torch: drop it from KNOWN and " \
                                    "from docs/DEVIATIONS.md"
    else:
        assert ours[1:] == ref[1:], f"{name}: strides {ours[1]}, torch's {ref[1]}"


def test_view_across_a_permuted_product_runs_only_in_ember():
    # the deviation a program meets: torch refuses this view, ember's row-major product takes it
    x = np.random.default_rng(1).standard_normal((10, 4, 16)).astype(np.float32)
    y = np.random.default_rng(2).standard_normal((4, 10)).astype(np.float32)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        (torch.tensor(x).transpose(0, 1) * torch.tensor(y)[:, :, None]).view(4, -1)
    ours = (ember.tensor(x).transpose(0, 1) * ember.tensor(y)[:, :, None]).view(4, -1)
    np.testing.assert_allclose(ours.numpy(), (x.transpose(1, 0, 2) * y[:, :, None]).reshape(4, -1),
                               rtol=1e-6)
