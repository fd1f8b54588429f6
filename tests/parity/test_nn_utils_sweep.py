"""A differential sweep against torch 2.13 of torch.nn.utils, the helpers training scripts call
around the model: gradient clipping (clip_grad_norm_ / clip_grad_value_ over norm types,
error_if_nonfinite, foreach, generators, single tensors, None and sparse gradients;
get_total_norm and clip_grads_with_norm_), parameters_to_vector, the packed-sequence helpers of
nn.utils.rnn (and PackedSequence through the recurrent layers, values and gradients),
functional_call, fusion, skip_init and the weight memory-format conversion. parametrize,
parametrizations, the old weight/spectral norm hooks and prune are in
test_nn_utils_param_sweep.py.

A case is a function of a Lib (``_sweep_results``): both libraries must raise the same exception
type or return the same results (values, dtypes, shapes, float64 gradients). Parameters a case
needs get fixed values (``det``), so no case depends on either library's random stream.
``raised(...)`` cases compare an error's type and which of its key phrases the message lacks.
Divergences kept on purpose are in KNOWN with a reason (and in docs/DEVIATIONS.md).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from _nn_utils_inputs import det
from _nn_utils_inputs import sym_linear as _sym_linear
from _sweep import assert_verdict, raised, warned
from _sweep_results import divergence

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.parity, pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning")]

CASES: list = []


def case(group, what, fn):
    CASES.append((group, what, fn))


RNG = np.random.default_rng(3701)
G1, G2, G3 = RNG.uniform(-2, 2, (3, 4)), RNG.uniform(-2, 2, (5,)), RNG.uniform(-2, 2, (2, 2, 2))




def params(L, grads=(G1, G2, G3), dtype="float64", nones=()):
    """Parameters whose .grad holds the given arrays (None where an index is in nones)."""
    ps = []
    for i, g in enumerate(grads):
        p = L.mod.nn.Parameter(L.mod.zeros(g.shape, dtype=getattr(L.mod, dtype)))
        if i not in nones:
            p.grad = L.T(g, dtype)
        ps.append(p)
    return ps


def grads_of(ps):
    return [p.grad for p in ps]


# --------------------------------------------------------------------------- clip_grad_norm_
def _clip(norm_type, max_norm=1.0, dtype="float64", **kw):
    def fn(L):
        ps = params(L, dtype=dtype)
        total = L.mod.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type, **kw)
        return total, grads_of(ps)
    return fn


for _nt in (2, 2.0, 1, 3.0, 0.5, 0, math.inf, -math.inf, "inf"):
    case("clip_grad_norm_", f"norm_type {_nt!r}", _clip(_nt))
for _dt in ("float32", "float16", "bfloat16"):
    case("clip_grad_norm_", f"dtype / {_dt}", _clip(2.0, dtype=_dt))
    case("clip_grad_norm_", f"inf norm dtype / {_dt}", _clip(math.inf, dtype=_dt))
case("clip_grad_norm_", "norm_type -2", _clip(-2.0))
case("clip_grad_norm_", "max_norm inf", _clip(2.0, max_norm=math.inf))
case("clip_grad_norm_", "max_norm nan", _clip(2.0, max_norm=math.nan))
case("clip_grad_norm_", "int grads refused", lambda L: raised(lambda: (lambda p: (
    setattr(p, "grad", L.T([1, 2])), L.mod.nn.utils.clip_grad_norm_([p], 1.0)))(
        L.mod.nn.Parameter(L.mod.zeros(2), requires_grad=False))))
case("clip_grad_norm_", "no clipping needed", _clip(2.0, max_norm=100.0))
case("clip_grad_norm_", "max_norm 0", _clip(2.0, max_norm=0.0))
case("clip_grad_norm_", "max_norm negative", _clip(2.0, max_norm=-1.0))
case("clip_grad_norm_", "max_norm as tensor", lambda L: _clip(2.0, max_norm=L.T(0.5))(L))
for _fe in (True, False, None):
    case("clip_grad_norm_", f"foreach {_fe}", _clip(2.0, foreach=_fe))
case("clip_grad_norm_", "generator", lambda L: (lambda ps: (L.mod.nn.utils.clip_grad_norm_(
    (p for p in ps), 0.5), grads_of(ps)))(params(L)))
case("clip_grad_norm_", "single tensor", lambda L: (lambda ps: (L.mod.nn.utils.clip_grad_norm_(
    ps[0], 0.5), grads_of(ps)))(params(L)))
case("clip_grad_norm_", "None grads", lambda L: (lambda ps: (L.mod.nn.utils.clip_grad_norm_(
    ps, 0.5), grads_of(ps)))(params(L, nones=(1,))))
case("clip_grad_norm_", "all None grads", lambda L: (lambda ps: (L.mod.nn.utils.clip_grad_norm_(
    ps, 0.5), grads_of(ps)))(params(L, nones=(0, 1, 2))))
case("clip_grad_norm_", "empty list", lambda L: L.mod.nn.utils.clip_grad_norm_([], 1.0))
case("clip_grad_norm_", "mixed dtypes", lambda L: (lambda ps: (L.mod.nn.utils.clip_grad_norm_(
    ps + params(L, (G3,), "float32"), 0.5), grads_of(ps)))(params(L, (G1,))))
case("clip_grad_norm_", "module parameters", lambda L: (lambda m: (
    m(L.T(G1)).pow(2).sum().backward(), L.mod.nn.utils.clip_grad_norm_(m.parameters(), 0.1),
    [p.grad for p in m.parameters()])[1:])(det(L, L.mod.nn.Linear(4, 2))))
_NAN = np.array([1.0, np.nan, 2.0])
_INF = np.array([1.0, np.inf, 2.0])
for _what, _g in (("nan", _NAN), ("inf", _INF)):
    case("clip_grad_norm_", f"{_what} grad error_if_nonfinite", lambda L, g=_g: raised(
        lambda: L.mod.nn.utils.clip_grad_norm_(params(L, (g,)), 1.0, error_if_nonfinite=True),
        "non-finite", "error_if_nonfinite"))
    case("clip_grad_norm_", f"{_what} grad allowed", lambda L, g=_g: (lambda ps: (
        L.mod.nn.utils.clip_grad_norm_(ps, 1.0), grads_of(ps)))(params(L, (g, G2))))
    case("clip_grad_norm_", f"{_what} grad inf norm", lambda L, g=_g: (lambda ps: (
        L.mod.nn.utils.clip_grad_norm_(ps, 1.0, math.inf), grads_of(ps)))(params(L, (g, G2))))
case("clip_grad_norm_", "bad norm_type string", lambda L: raised(
    lambda: L.mod.nn.utils.clip_grad_norm_(params(L), 1.0, norm_type="fro")))
case("clip_grad_norm", "deprecated alias", lambda L: (lambda ps: (warned(
    lambda: L.mod.nn.utils.clip_grad_norm(ps, 0.5))[1:], grads_of(ps)))(params(L)))

case("get_total_norm", "basic", lambda L: L.mod.nn.utils.get_total_norm([L.T(G1), L.T(G2)]))
case("get_total_norm", "norm_type 1", lambda L: L.mod.nn.utils.get_total_norm(
    [L.T(G1), L.T(G2)], 1.0))
case("get_total_norm", "inf", lambda L: L.mod.nn.utils.get_total_norm([L.T(G1), L.T(G2)],
                                                                         math.inf))
case("get_total_norm", "single tensor", lambda L: L.mod.nn.utils.get_total_norm(L.T(G1), 3))
case("get_total_norm", "empty", lambda L: L.mod.nn.utils.get_total_norm([]))
case("get_total_norm", "float32", lambda L: L.mod.nn.utils.get_total_norm(
    [L.T(G1, "float32"), L.T(G2, "float32")]))
case("get_total_norm", "nonfinite error", lambda L: raised(
    lambda: L.mod.nn.utils.get_total_norm([L.T(_NAN)], error_if_nonfinite=True), "non-finite"))
case("get_total_norm", "does not record a graph", lambda L: L.mod.nn.utils.get_total_norm(
    [L.G(G1)]).requires_grad)
case("clip_grads_with_norm_", "basic", lambda L: (lambda ps: (
    L.mod.nn.utils.clip_grads_with_norm_(ps, 1.0, L.T(7.5)), grads_of(ps)))(params(L)))
case("clip_grads_with_norm_", "below max", lambda L: (lambda ps: (
    L.mod.nn.utils.clip_grads_with_norm_(ps, 10.0, L.T(7.5)), grads_of(ps)))(params(L)))
case("clip_grads_with_norm_", "None grad", lambda L: (lambda ps: (
    L.mod.nn.utils.clip_grads_with_norm_(ps, 1.0, L.T(7.5)), grads_of(ps)))(
        params(L, nones=(0,))))
case("clip_grads_with_norm_", "float total", lambda L: raised(
    lambda: L.mod.nn.utils.clip_grads_with_norm_(params(L), 1.0, 7.5)))

for _cv in (0.5, 1, 0.0, 100.0):
    case("clip_grad_value_", f"clip {_cv}", lambda L, cv=_cv: (lambda ps: (
        L.mod.nn.utils.clip_grad_value_(ps, cv), grads_of(ps)))(params(L)))
case("clip_grad_value_", "negative clip", lambda L: (lambda ps: (
    L.mod.nn.utils.clip_grad_value_(ps, -0.5), grads_of(ps)))(params(L)))
case("clip_grad_value_", "None grad and generator", lambda L: (lambda ps: (
    L.mod.nn.utils.clip_grad_value_((p for p in ps), 0.5), grads_of(ps)))(params(L, nones=(1,))))
case("clip_grad_value_", "single tensor", lambda L: (lambda ps: (
    L.mod.nn.utils.clip_grad_value_(ps[0], 0.5), grads_of(ps)))(params(L)))
for _fe in (True, False):
    case("clip_grad_value_", f"foreach {_fe}", lambda L, fe=_fe: (lambda ps: (
        L.mod.nn.utils.clip_grad_value_(ps, 0.5, foreach=fe), grads_of(ps)))(params(L)))
case("clip_grad_value_", "float16", lambda L: (lambda ps: (
    L.mod.nn.utils.clip_grad_value_(ps, 0.5), grads_of(ps)))(params(L, dtype="float16")))

# --------------------------------------------------------------------------- parameter vectors
case("parameters_to_vector", "basic", lambda L: L.mod.nn.utils.parameters_to_vector(
    [L.G(G1), L.G(G2), L.G(G3)]))
case("parameters_to_vector", "generator of module parameters", lambda L: (
    L.mod.nn.utils.parameters_to_vector(det(L, L.mod.nn.Linear(3, 2), leaves=True).parameters())))
case("parameters_to_vector", "non-contiguous", lambda L: L.mod.nn.utils.parameters_to_vector(
    [L.G(G1).t()]))
case("parameters_to_vector", "empty", lambda L: raised(
    lambda: L.mod.nn.utils.parameters_to_vector([])))
case("parameters_to_vector", "single tensor", lambda L: raised(
    lambda: L.mod.nn.utils.parameters_to_vector(L.T(G1))))
case("vector_to_parameters", "basic", lambda L: (lambda ps: (
    L.mod.nn.utils.vector_to_parameters(L.T(np.arange(25.0)), ps), ps)[1])(params(L)))
case("vector_to_parameters", "vector too long", lambda L: (lambda ps: (
    L.mod.nn.utils.vector_to_parameters(L.T(np.arange(30.0)), ps), ps)[1])(params(L)))
case("vector_to_parameters", "vector too short", lambda L: raised(
    lambda: L.mod.nn.utils.vector_to_parameters(L.T(np.arange(10.0)), params(L))))
case("vector_to_parameters", "not a tensor", lambda L: raised(
    lambda: L.mod.nn.utils.vector_to_parameters(list(range(25)), params(L)), "Tensor"))
case("vector_to_parameters", "keeps requires_grad", lambda L: (lambda ps: (
    L.mod.nn.utils.vector_to_parameters(L.T(np.arange(25.0)), ps),
    [(p.requires_grad, type(p).__name__, p.grad is None) for p in ps])[1])(params(L)))

# --------------------------------------------------------------------------- rnn utilities
SEQ = RNG.uniform(-1, 1, (5, 3, 2))            # (T, B, *) with lengths 5, 3, 2
LENS = [5, 3, 2]


def U(L):
    return L.mod.nn.utils.rnn


def pack(L, x=SEQ, lengths=LENS, **kw):
    return U(L).pack_padded_sequence(L.G(x), lengths, **kw)


case("pack_padded_sequence", "list lengths", lambda L: pack(L))
case("pack_padded_sequence", "tensor lengths", lambda L: pack(L, lengths=L.T(LENS)))
case("pack_padded_sequence", "int32 tensor lengths", lambda L: pack(L, lengths=L.T(LENS,
                                                                                    "int32")))
case("pack_padded_sequence", "float tensor lengths", lambda L: pack(L, lengths=L.T(
    LENS, "float64")))
case("pack_padded_sequence", "batch_first", lambda L: pack(L, SEQ.transpose(1, 0, 2),
                                                           batch_first=True))
case("pack_padded_sequence", "unsorted enforce_sorted=False", lambda L: pack(
    L, lengths=[3, 5, 2], enforce_sorted=False))
case("pack_padded_sequence", "unsorted enforce_sorted=True", lambda L: raised(
    lambda: pack(L, lengths=[3, 5, 2]), "enforce_sorted", "sorted"))
case("pack_padded_sequence", "sorted enforce_sorted=False", lambda L: pack(L,
                                                                           enforce_sorted=False))
case("pack_padded_sequence", "equal lengths unsorted", lambda L: pack(
    L, lengths=[2, 2, 2], enforce_sorted=False))
case("pack_padded_sequence", "numpy lengths", lambda L: pack(L, lengths=np.array(LENS)))
case("pack_padded_sequence", "tuple lengths", lambda L: pack(L, lengths=tuple(LENS)))
case("pack_padded_sequence", "float list lengths", lambda L: pack(L, lengths=[5.0, 3.0, 2.0]))
case("pack_padded_sequence", "fractional lengths", lambda L: pack(L, lengths=[4.5, 3.0, 2.0]))
case("pack_padded_sequence", "0-d lengths", lambda L: raised(lambda: pack(L, lengths=L.T(5))))
case("pack_padded_sequence", "meta lengths", lambda L: raised(lambda: pack(
    L, lengths=L.T(LENS).to("meta"))))
case("pack_padded_sequence", "lengths requiring grad", lambda L: raised(lambda: pack(
    L, lengths=L.G([5.0, 3.0, 2.0]))))
case("pack_padded_sequence", "zero length", lambda L: raised(
    lambda: pack(L, lengths=[5, 3, 0]), "greater than 0"))
case("pack_padded_sequence", "negative length", lambda L: raised(
    lambda: pack(L, lengths=[5, 3, -1], enforce_sorted=False)))
case("pack_padded_sequence", "length too long", lambda L: raised(
    lambda: pack(L, lengths=[6, 3, 2])))
case("pack_padded_sequence", "too few lengths", lambda L: raised(
    lambda: pack(L, lengths=[5, 3]), "batch_size"))
case("pack_padded_sequence", "2-d lengths", lambda L: raised(
    lambda: pack(L, lengths=L.T([[5, 3, 2]]))))
case("pack_padded_sequence", "1-d input", lambda L: raised(
    lambda: pack(L, SEQ[:, 0, 0], lengths=[5])))
case("pack_padded_sequence", "2-d input", lambda L: pack(L, SEQ[:, :, 0]))
case("pack_padded_sequence", "int data", lambda L: U(L).pack_padded_sequence(
    L.T((SEQ * 10).astype(np.int64)), LENS))
case("PackedSequence", "to float32 and metadata", lambda L: (lambda p: (
    p.to(L.mod.float32), p.is_cuda, p.cpu().data.dtype, p.double().data.dtype,
    p.is_pinned()))(pack(L, lengths=[3, 5, 2], enforce_sorted=False)))
case("PackedSequence", "positional construction", lambda L: raised(
    lambda: U(L).PackedSequence(L.T(SEQ[:, 0]), [2, 1])))
case("PackedSequence", "tensor batch_sizes", lambda L: U(L).PackedSequence(
    L.T(SEQ[:3, 0]), L.T([2, 1])))
case("PackedSequence", "repr", lambda L: repr(U(L).pack_sequence(
    [L.T([1.0, 2.0]), L.T([3.0])])).replace("ember", "torch"))


def _try(fn):
    """fn's result, or the name of the exception it raises."""
    try:
        return fn()
    except Exception as exc:
        return type(exc).__name__


def pad_packed(L, lengths=LENS, pack_kw=None, **kw):
    return U(L).pad_packed_sequence(pack(L, lengths=lengths, **(pack_kw or {})), **kw)


case("pad_packed_sequence", "basic", lambda L: pad_packed(L))
case("pad_packed_sequence", "batch_first", lambda L: pad_packed(L, batch_first=True))
case("pad_packed_sequence", "padding_value", lambda L: pad_packed(L, padding_value=-7.5))
case("pad_packed_sequence", "total_length", lambda L: pad_packed(L, total_length=8))
case("pad_packed_sequence", "total_length batch_first", lambda L: pad_packed(
    L, total_length=7, batch_first=True))
case("pad_packed_sequence", "total_length too small", lambda L: raised(
    lambda: pad_packed(L, total_length=4), "total_length"))
case("pad_packed_sequence", "round trip unsorted", lambda L: pad_packed(
    L, lengths=[3, 5, 2], pack_kw={"enforce_sorted": False}, batch_first=True))
case("pad_packed_sequence", "plain tensor", lambda L: raised(
    lambda: U(L).pad_packed_sequence(L.T(SEQ))))
case("pad_packed_sequence", "int padding_value on float", lambda L: pad_packed(
    L, padding_value=2))
case("pad_packed_sequence", "negative total_length", lambda L: raised(
    lambda: pad_packed(L, total_length=-1)))
case("pad_packed_sequence", "shorter than padded", lambda L: pad_packed(L, lengths=[4, 3, 2]))

SEQS = [RNG.uniform(-1, 1, (n, 2)) for n in (2, 4, 3)]


def seqs(L, arrs=SEQS):
    return [L.G(a) for a in arrs]


for _bf in (False, True):
    for _side in ("right", "left"):
        case("pad_sequence", f"batch_first {_bf} {_side}", lambda L, bf=_bf, s=_side: U(
            L).pad_sequence(seqs(L), batch_first=bf, padding_side=s))
case("pad_sequence", "padding_value", lambda L: U(L).pad_sequence(seqs(L), padding_value=3.0))
case("pad_sequence", "bad padding_side", lambda L: raised(
    lambda: U(L).pad_sequence(seqs(L), padding_side="middle"), "padding_side"))
case("pad_sequence", "1-d sequences", lambda L: U(L).pad_sequence(
    [L.G(a[:, 0]) for a in SEQS], batch_first=True))
case("pad_sequence", "mismatched trailing dims", lambda L: raised(
    lambda: U(L).pad_sequence([L.T(np.zeros((2, 3))), L.T(np.zeros((2, 4)))])))
case("pad_sequence", "single tensor input", lambda L: U(L).pad_sequence(L.G(SEQ)))
case("pad_sequence", "empty list", lambda L: raised(lambda: U(L).pad_sequence([])))
case("pad_sequence", "int sequences", lambda L: U(L).pad_sequence(
    [L.T([1, 2, 3]), L.T([4])], batch_first=True, padding_value=-1))
case("pad_sequence", "zero-length member", lambda L: U(L).pad_sequence(
    [L.T(np.zeros((0, 2))), L.T(np.ones((2, 2)))]))
case("pad_sequence", "mixed dtypes", lambda L: _try(lambda: U(L).pad_sequence(
    [L.T([1, 2]), L.T([1.5])])))
case("pad_sequence", "float padding into int", lambda L: U(L).pad_sequence(
    [L.T([1, 2, 3]), L.T([4])], padding_value=-1.5))
case("pad_sequence", "bool sequences", lambda L: U(L).pad_sequence(
    [L.T([True, False]), L.T([True])], batch_first=True))
for _dt in ("float16", "bfloat16", "int32", "complex64"):
    case("pack_padded_sequence", f"dtype / {_dt}", lambda L, d=_dt: (lambda p: (
        p, U(L).pad_packed_sequence(p, padding_value=1)))(U(L).pack_padded_sequence(
            L.T(SEQ * 3, d), LENS)))
case("pack_sequence", "1-d sequences", lambda L: U(L).pack_sequence(
    [L.G(a[:, 0]) for a in SEQS], enforce_sorted=False))
case("unpad_sequence", "float lengths tensor", lambda L: U(L).unpad_sequence(
    U(L).pad_sequence(seqs(L)), L.T([2.0, 4.0, 3.0])))
case("pack_sequence", "sorted", lambda L: U(L).pack_sequence(seqs(L, sorted(
    SEQS, key=len, reverse=True))))
case("pack_sequence", "unsorted enforce", lambda L: raised(
    lambda: U(L).pack_sequence(seqs(L)), "enforce_sorted"))
case("pack_sequence", "unsorted", lambda L: U(L).pack_sequence(seqs(L), enforce_sorted=False))
case("unpad_sequence", "basic", lambda L: U(L).unpad_sequence(
    U(L).pad_sequence(seqs(L)), L.T([2, 4, 3])))
case("unpad_sequence", "batch_first", lambda L: U(L).unpad_sequence(
    U(L).pad_sequence(seqs(L), batch_first=True), L.T([2, 4, 3]), batch_first=True))
case("unpad_sequence", "list lengths", lambda L: U(L).unpad_sequence(
    U(L).pad_sequence(seqs(L)), [2, 4, 3]))
case("unpack_sequence", "unsorted round trip", lambda L: U(L).unpack_sequence(
    U(L).pack_sequence(seqs(L), enforce_sorted=False)))
case("unpack_sequence", "sorted", lambda L: U(L).unpack_sequence(pack(L)))
case("invert_permutation", "basic", lambda L: U(L).invert_permutation(L.T([2, 0, 1])))
case("invert_permutation", "None", lambda L: U(L).invert_permutation(None))

# PackedSequence through the recurrent layers (fixed weights: gradients of input and weights)
XB = RNG.uniform(-1, 1, (3, 5, 4))             # batch_first (B, T, F)
for _cls in ("LSTM", "GRU", "RNN"):
    for _what, _kw, _lens in (("sorted", {}, [5, 3, 2]), ("unsorted", {}, [3, 5, 2]),
                              ("bidirectional", {"bidirectional": True}, [3, 5, 2]),
                              ("2 layers", {"num_layers": 2}, [2, 5, 4]),
                              ("batch_first out", {"batch_first": True}, [3, 5, 2]),
                              ("bidirectional 2 layers dropout", {
                                  "bidirectional": True, "num_layers": 2, "dropout": 0.5},
                               [4, 5, 1])):
        def _run(L, cls=_cls, kw=_kw, lens=_lens):
            m = det(L, getattr(L.mod.nn, cls)(4, 3, **{"batch_first": True, **kw}), leaves=True)
            m.eval()   # (dropout between layers is off in eval: a deterministic comparison)
            packed = U(L).pack_padded_sequence(L.G(XB), lens, batch_first=True,
                                               enforce_sorted=False)
            out, h = m(packed)
            padded, lengths = U(L).pad_packed_sequence(out, batch_first=True)
            return out.sorted_indices, out.unsorted_indices, padded, lengths, h
        case(f"PackedSequence {_cls}", _what, _run)
H0, C0 = RNG.uniform(-1, 1, (1, 3, 3)), RNG.uniform(-1, 1, (1, 3, 3))
case("PackedSequence LSTM", "with h0", lambda L: det(L, L.mod.nn.LSTM(4, 3), leaves=True)(
    U(L).pack_padded_sequence(L.G(XB.transpose(1, 0, 2)), [3, 5, 2], enforce_sorted=False),
    (L.G(H0), L.G(C0))))
case("PackedSequence LSTM", "proj_size", lambda L: det(L, L.mod.nn.LSTM(4, 3, proj_size=2),
                                                       leaves=True)(
    U(L).pack_padded_sequence(L.G(XB.transpose(1, 0, 2)), [3, 5, 2], enforce_sorted=False)))
case("PackedSequence GRU", "batch_first mismatch ignored", lambda L: det(
    L, L.mod.nn.GRU(4, 3), leaves=True)(U(L).pack_padded_sequence(
        L.G(XB), [3, 5, 2], batch_first=True, enforce_sorted=False))[0].data)
case("PackedSequence RNN", "wrong feature size", lambda L: raised(
    lambda: L.mod.nn.RNN(3, 3).double()(U(L).pack_padded_sequence(
        L.G(XB), [3, 5, 2], batch_first=True, enforce_sorted=False))))
case("PackedSequence RNN", "wrong dtype and size", lambda L: raised(lambda: L.mod.nn.RNN(3, 3)(
    U(L).pack_padded_sequence(L.G(XB), [3, 5, 2], batch_first=True, enforce_sorted=False))))


def _sparse_clip(L):
    emb = det(L, L.mod.nn.Embedding(5, 3, sparse=True))
    emb(L.T([0, 2, 2])).sum().backward()
    total = L.mod.nn.utils.clip_grad_norm_(emb.parameters(), 1.0)
    return total, emb.weight.grad.to_dense()


case("clip_grad_norm_", "sparse grad", _sparse_clip)
case("clip_grad_value_", "sparse grad", lambda L: (lambda emb: (
    emb(L.T([0, 2, 2])).sum().backward(), L.mod.nn.utils.clip_grad_value_(emb.parameters(), 1.5),
    emb.weight.grad.to_dense()))(det(L, L.mod.nn.Embedding(5, 3, sparse=True)))[2])

# --------------------------------------------------------------------------- functional_call
XF = RNG.uniform(-1, 1, (4, 3))


def _bn_model(L):
    return det(L, L.mod.nn.Sequential(L.mod.nn.Linear(3, 3), L.mod.nn.BatchNorm1d(3)))


def _fc(L, where, train=True, **kw):
    m = _bn_model(L).train(train)
    new = {"0.weight": L.G(np.eye(3) * 2), "1.running_mean": L.T(np.array([0.5, 0.0, -0.5]))}
    fc = L.mod.func.functional_call if where == "func" else \
        L.mod.nn.utils.stateless.functional_call
    out = fc(m, new, (L.G(XF),), **kw)
    return out, new["1.running_mean"], m[1].running_mean, m[0].weight


for _where in ("func", "stateless"):
    for _train in (True, False):
        case("functional_call", f"{_where} train {_train}", lambda L, w=_where, t=_train: _fc(
            L, w, t))
case("functional_call", "kwargs", lambda L: L.mod.func.functional_call(
    det(L, L.mod.nn.Linear(3, 2)), {}, (), {"input": L.G(XF)}))
case("functional_call", "tuple of dicts", lambda L: L.mod.func.functional_call(
    det(L, L.mod.nn.Linear(3, 2)), ({"weight": L.G(np.ones((2, 3)))}, {"bias": L.G(
        np.zeros(2))}), L.G(XF)))
case("functional_call", "duplicate keys in dicts", lambda L: raised(
    lambda: L.mod.func.functional_call(L.mod.nn.Linear(3, 2), ({"weight": L.mod.ones(2, 3)}, {
        "weight": L.mod.ones(2, 3)}), L.mod.ones(1, 3))))
case("functional_call", "strict missing", lambda L: raised(
    lambda: L.mod.func.functional_call(L.mod.nn.Linear(3, 2), {"weight": L.mod.ones(2, 3)},
                                       L.mod.ones(1, 3), strict=True)))
case("functional_call", "unexpected key", lambda L: raised(
    lambda: L.mod.func.functional_call(L.mod.nn.Linear(3, 2), {"wieght": L.mod.ones(2, 3)},
                                       L.mod.ones(1, 3), strict=True)))
case("functional_call", "unexpected key not strict", lambda L: L.mod.func.functional_call(
    det(L, L.mod.nn.Linear(3, 2)), {"extra": L.mod.ones(2, 3)}, L.G(XF)))


case("functional_call", "parametrized original", lambda L: L.mod.func.functional_call(
    _sym_linear(L), {"parametrizations.weight.original": L.G(np.arange(9.0).reshape(3, 3))},
    L.G(XF)))
case("functional_call", "parametrized weight by name", lambda L: L.mod.func.functional_call(
    _sym_linear(L), {"weight": L.G(np.arange(9.0).reshape(3, 3))}, L.G(XF)))
case("functional_call", "strict with all", lambda L: L.mod.func.functional_call(
    det(L, L.mod.nn.Linear(3, 2)), {"weight": L.G(np.ones((2, 3))), "bias": L.G(np.ones(2))},
    L.G(XF), strict=True))
case("functional_call", "module state unchanged", lambda L: (lambda m: (
    L.mod.func.functional_call(m, {"weight": L.mod.zeros(2, 3, dtype=L.mod.float64)}, L.G(XF)),
    m.weight, type(m.weight).__name__))(det(L, L.mod.nn.Linear(3, 2)))[1:])
case("functional_call", "BatchNorm buffers updated in the dict", lambda L: (lambda m, buf: (
    L.mod.func.functional_call(m, {"running_mean": buf}, L.G(XF)), buf, m.running_mean,
    m.num_batches_tracked))(det(L, L.mod.nn.BatchNorm1d(3)), L.mod.zeros(3, dtype=L.mod.float64)))


def _tied(L, tie):
    m = L.mod.nn.Sequential(L.mod.nn.Linear(2, 2, bias=False), L.mod.nn.Linear(2, 2, bias=False))
    m = det(L, m)
    m[1].weight = m[0].weight
    return L.mod.func.functional_call(m, {"0.weight": L.G(np.eye(2) * 3)}, L.G(XF[:, :2]),
                                      tie_weights=tie)


case("functional_call", "tie_weights True", lambda L: _tied(L, True))
case("functional_call", "tie_weights False", lambda L: _tied(L, False))

# --------------------------------------------------------------------------- fusion
XC = RNG.uniform(-1, 1, (2, 3, 5, 5))


def _fuse_conv(L, conv_kw=None, transpose=False, bn_kw=None):
    cls = L.mod.nn.ConvTranspose2d if transpose else L.mod.nn.Conv2d
    conv = det(L, cls(3, 4, 3, **(conv_kw or {}))).eval()
    bn = det(L, L.mod.nn.BatchNorm2d(4, **(bn_kw or {}))).eval()
    fused = L.mod.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
    x = L.T(XC)
    return (fused(x), bn(conv(x)), type(fused).__name__, fused.weight.requires_grad,
            [n for n, _ in fused.named_parameters()])


case("fuse_conv_bn_eval", "basic", lambda L: _fuse_conv(L))
case("fuse_conv_bn_eval", "no bias", lambda L: _fuse_conv(L, {"bias": False}))
case("fuse_conv_bn_eval", "transpose", lambda L: _fuse_conv(L, transpose=True))
case("fuse_conv_bn_eval", "affine False", lambda L: _fuse_conv(L, bn_kw={"affine": False}))
case("fuse_conv_bn_eval", "training refused", lambda L: raised(
    lambda: L.mod.nn.utils.fuse_conv_bn_eval(L.mod.nn.Conv2d(3, 4, 3),
                                             L.mod.nn.BatchNorm2d(4)), "eval"))
case("fuse_linear_bn_eval", "basic", lambda L: (lambda lin, bn: (
    L.mod.nn.utils.fuse_linear_bn_eval(lin, bn)(L.T(XF)), bn(lin(L.T(XF)))))(
        det(L, L.mod.nn.Linear(3, 4)).eval(), det(L, L.mod.nn.BatchNorm1d(4)).eval()))
case("fuse_linear_bn_eval", "no bias", lambda L: (lambda lin, bn: (
    L.mod.nn.utils.fuse_linear_bn_eval(lin, bn)(L.T(XF)), bn(lin(L.T(XF)))))(
        det(L, L.mod.nn.Linear(3, 4, bias=False)).eval(), det(L, L.mod.nn.BatchNorm1d(4)).eval()))
case("fuse_linear_bn_eval", "training refused", lambda L: raised(
    lambda: L.mod.nn.utils.fuse_linear_bn_eval(L.mod.nn.Linear(3, 4),
                                               L.mod.nn.BatchNorm1d(4)), "eval"))
case("fuse_linear_bn_eval", "mismatched features", lambda L: raised(
    lambda: L.mod.nn.utils.fuse_linear_bn_eval(L.mod.nn.Linear(3, 4).eval(),
                                               L.mod.nn.BatchNorm1d(3).eval())))
case("fuse_linear_bn_eval", "broadcast bn of 1", lambda L: (lambda lin, bn: (
    L.mod.nn.utils.fuse_linear_bn_eval(lin, bn)(L.T(XF)), bn(lin(L.T(XF)))))(
        det(L, L.mod.nn.Linear(3, 1)).eval(), det(L, L.mod.nn.BatchNorm1d(1)).eval()))
case("fuse_conv_bn_weights", "values", lambda L: L.mod.nn.utils.fuse_conv_bn_weights(
    L.T(np.ones((2, 1, 1, 1))), None, L.T([0.0, 1.0]), L.T([1.0, 3.0]), 1e-5, L.T([2.0, 1.0]),
    L.T([0.5, 0.0])))

# --------------------------------------------------------------------------- skip_init, memory
case("skip_init", "Linear", lambda L: (lambda m: (
    type(m).__name__, [tuple(p.shape) for p in m.parameters()], m.weight.dtype, repr(m)))(
        L.mod.nn.utils.skip_init(L.mod.nn.Linear, 3, 4, bias=False)))
case("skip_init", "dtype kwarg", lambda L: L.mod.nn.utils.skip_init(
    L.mod.nn.Conv1d, 2, 3, 2, dtype=L.mod.float64).weight.dtype)
case("skip_init", "no device kwarg", lambda L: raised(
    lambda: L.mod.nn.utils.skip_init(L.mod.nn.ReLU)))
case("skip_init", "not a class", lambda L: raised(
    lambda: L.mod.nn.utils.skip_init(L.mod.nn.Linear(2, 2))))


def _cl(L, make, fmt):
    m = det(L, make(L.mod.nn))
    out = L.mod.nn.utils.convert_conv2d_weight_memory_format(m, getattr(L.mod, fmt))
    return [(n, p.is_contiguous(memory_format=getattr(L.mod, fmt)), p)
            for n, p in out.named_parameters()], out is m


for _fmt in ("channels_last", "contiguous_format"):
    case("convert_conv2d_weight_memory_format", f"Conv2d {_fmt}", lambda L, f=_fmt: _cl(
        L, lambda nn: nn.Conv2d(3, 4, 2), f))
    case("convert_conv2d_weight_memory_format", f"Sequential {_fmt}", lambda L, f=_fmt: _cl(
        L, lambda nn: nn.Sequential(nn.Conv2d(3, 4, 2), nn.ConvTranspose2d(4, 2, 2),
                                    nn.Linear(2, 2)), f))
case("convert_conv2d_weight_memory_format", "strides", lambda L: [
    p.is_contiguous() for p in L.mod.nn.utils.convert_conv2d_weight_memory_format(
        L.mod.nn.Conv2d(3, 4, 2), L.mod.channels_last).parameters()])
case("convert_conv3d_weight_memory_format", "channels_last_3d", lambda L: (lambda m: [
    p.is_contiguous(memory_format=L.mod.channels_last_3d) for p in
    L.mod.nn.utils.convert_conv3d_weight_memory_format(m, L.mod.channels_last_3d).parameters()])(
        L.mod.nn.Conv3d(2, 3, 2)))

# ============================================================================ the harness
# (group, case) -> why the difference is deliberate (docs/DEVIATIONS.md, nn)
KNOWN: dict = {
    ("parameters_to_vector", "non-contiguous"):
        "ember flattens each parameter with reshape (a copy when needed); torch's view(-1) "
        "refuses a non-contiguous parameter, a limitation not worth copying",
    ("pack_padded_sequence", "length too long"):
        "a length beyond the padded sequence is refused (RuntimeError naming it); torch packs "
        "elements read past the end of the batch",
    ("PackedSequence", "positional construction"):
        "ember's PackedSequence takes batch_sizes as a list too; torch's wants a tensor "
        "(AttributeError on a list), a superset kept on purpose",
    ("pad_sequence", "mixed dtypes"):
        "ember pads sequences of different dtypes into their promoted dtype; torch's result "
        "takes the first sequence's dtype and truncates the others' values (1.5 -> 1)",
    ("unpad_sequence", "list lengths"):
        "unpad_sequence takes lengths as a list too (torch: AttributeError on .device), a "
        "superset kept on purpose",
    ("clip_grad_norm_", "sparse grad"):
        "ember clips a sparse gradient (Embedding(sparse=True)) by its values' norm; torch's "
        "vector_norm has no sparse kernel (NotImplementedError), a superset kept on purpose",
    ("clip_grad_value_", "sparse grad"):
        "ember clamps a sparse gradient's values; torch's clamp_ has no sparse kernel",
    ("convert_conv2d_weight_memory_format", "strides"):
        "there is no channels-last layout (docs/DEVIATIONS.md, tensor core): the converted "
        "weight keeps row-major strides, so is_contiguous() stays True",
}

# (group, case) -> found by this sweep and not yet decided: fix ember and drop the entry, or
# move it to KNOWN with a reason. Each still diverges (checked like KNOWN).
PENDING: set = set()

IDS = [f"{group}-{what}" for group, what, _ in CASES]


@pytest.mark.parametrize("group,what,fn", CASES, ids=IDS)
def test_nn_utils_against_torch(group, what, fn):
    assert_verdict(divergence(fn), (group, what), f"{group} ({what})", KNOWN, PENDING)
