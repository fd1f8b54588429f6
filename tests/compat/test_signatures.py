"""Signatures of ember's public callables against torch 2.13's, over every namespace programs
call: torch's top level, Tensor methods, nn.functional, nn modules' constructors, linalg,
special, optimizers, lr schedulers, utils.data and distributions (parameter names and order,
kinds, defaults; see _signatures.py for how torch's builtins are read). Differences known and
owned by someone are listed in signature_gaps.py; a new one fails here, and so does a listed
one that has been fixed."""
from __future__ import annotations

import inspect

import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

from _signatures import classified, compare, doc_signature  # noqa: E402
from signature_gaps import REASONS, SIGNATURE_GAPS  # noqa: E402

_P = inspect.Parameter


@pytest.fixture(scope="module")
def differences():
    table, compared = classified(ember, torch)
    # (torch's stub-described builtins are compared by test_keyword_binding.py instead)
    assert compared > 450, "the walk compared too few callables: is a namespace missing?"
    return table


def _listed():
    return {(ns, name): who for ns, groups in SIGNATURE_GAPS.items()
            for who, names in groups.items() for name in names}


def test_signatures_match_torch_or_are_listed_gaps(differences):
    listed = _listed()
    new = [f"{ns}.{name}: {diff}" for ns, names in differences.items()
           for name, (_who, diff) in names.items() if (ns, name) not in listed]
    assert not new, ("signatures differing from torch's (fix them, or list them in "
                     "tests/compat/signature_gaps.py with the owner):\n" + "\n".join(new))


def test_signature_gap_list_is_current(differences):
    fixed = [f"{ns}.{name}" for (ns, name) in _listed()
             if name not in differences.get(ns, {})]
    assert not fixed, ("these now match torch (or are gone): delete them from "
                       "tests/compat/signature_gaps.py:\n" + "\n".join(sorted(fixed)))


def test_signature_gap_owners_have_reasons():
    for groups in SIGNATURE_GAPS.values():
        assert set(groups) <= set(REASONS)


# ------------------------------------------------------------------ the comparator itself
def _params(fn):
    return list(inspect.signature(fn).parameters.values())


def test_docstring_signature_reader():
    def fake():
        pass
    fake.__doc__ = ("linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, "
                    "out=None) -> Tensor\n\nComputes a norm.")
    params = list(doc_signature(fake, "vector_norm").parameters.values())
    assert [p.name for p in params] == ["x", "ord", "dim", "keepdim", "dtype", "out"]
    assert params[4].kind is _P.KEYWORD_ONLY and params[1].default == 2
    fake.__doc__ = "zeros(*size, *, out=None) -> (Tensor, Tensor)"
    params = list(doc_signature(fake, "zeros").parameters.values())
    assert params[0].kind is _P.VAR_POSITIONAL and params[1].kind is _P.KEYWORD_ONLY


def test_comparator_finds_each_kind_of_difference():
    def theirs(input, dim=None, *, keepdim=False):
        pass

    def renamed(x, dim=None, *, keepdim=False):
        pass

    def positional(input, dim=None, keepdim=False):
        pass

    def other_default(input, dim=0, *, keepdim=False):
        pass

    assert compare(_params(theirs), _params(theirs), False) is None
    assert "names" in compare(_params(renamed), _params(theirs), False)
    assert "kind of keepdim" in compare(_params(positional), _params(theirs), False)
    assert "default of dim" in compare(_params(other_default), _params(theirs), False)
