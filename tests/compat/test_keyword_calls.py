"""Every public function and Tensor method ember shares with torch, called with its arguments by
keyword as torch's parser names them, computes what torch computes (see _kwcalls.py for how the
forms and inputs are found by trial, and _kwcalls_hand.py for the hand-written calls of the
callables the trial finds no input for). Forms ember does not take yet are listed with their
reason; the list must stay exact in both directions."""
from __future__ import annotations

import warnings

import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

from _kwcalls import _plain, _same, _undetermined, check  # noqa: E402
from _kwcalls_hand import HAND, NOT_CALLED, UNDETERMINED  # noqa: E402

KNOWN = {
    "torch.repeat_interleave": "the repeats-only overload repeat_interleave(repeats=t) "
                               "(test_keyword_binding)",
    "torch.isin": "the scalar overloads' names element=/test_element= (test_keyword_binding)",
    "torch.result_type": "the scalar overloads' names scalar=/scalar1=/scalar2= "
                         "(test_keyword_binding)",
}


@pytest.fixture(scope="module")
def sweep():
    found, checked, covered = check(ember, torch)
    # (about 1400 forms of 1050 of the 1130 callables had inputs found when this was written)
    assert checked > 1300, f"only {checked} forms were checked: did a namespace go missing?"
    return found, covered


def test_keyword_forms_compute_as_torch(sweep):
    new = [f"{name}: {problem}" for name, problem in sorted(sweep[0].items())
           if problem and name not in KNOWN]
    assert not new, "keyword forms torch takes that ember rejects or computes differently:\n" + \
        "\n".join(new)


def test_listed_failures_are_current(sweep):
    fixed = [name for name in KNOWN if not sweep[0].get(name)]
    assert not fixed, "these now pass: delete them from KNOWN:\n" + "\n".join(fixed)


def test_every_shared_callable_is_called(sweep):
    """A callable the trial finds no input for needs a hand-written call (or a reason)."""
    covered = sweep[1]
    uncalled = sorted(n for n, ok in covered.items()
                      if not ok and n not in HAND and n not in NOT_CALLED)
    assert not uncalled, "no keyword call made: add them to _kwcalls_hand.HAND:\n" + \
        "\n".join(uncalled)
    stale = sorted(n for n in list(HAND) + list(NOT_CALLED) if n not in covered)
    assert not stale, "no longer shared with torch (delete the entry):\n" + "\n".join(stale)


@pytest.mark.parametrize("name", sorted(HAND))
def test_hand_written_keyword_call(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn, args, kwargs = HAND[name](torch)
        expected = _plain(fn(*args, **kwargs))
        fn, args, kwargs = HAND[name](ember)
        got = _plain(fn(*args, **kwargs))
    undetermined = name in UNDETERMINED or _undetermined(name.rsplit(".", 1)[1])
    assert _same(expected, got, undetermined), f"{name}: {got!r:.300} vs torch's {expected!r:.300}"
