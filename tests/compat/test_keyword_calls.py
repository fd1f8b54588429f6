"""Every public function and Tensor method ember shares with torch, called with its arguments by
keyword as torch's parser names them, computes what torch computes (see _kwcalls.py for how the
forms and inputs are found). Forms ember does not take yet are listed with their reason; the
list must stay exact in both directions."""
from __future__ import annotations

import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

from _kwcalls import check  # noqa: E402

KNOWN = {
    "torch.repeat_interleave": "the repeats-only overload repeat_interleave(repeats=t) "
                               "(test_keyword_binding)",
    "torch.isin": "the scalar overloads' names element=/test_element= (test_keyword_binding)",
    "torch.result_type": "the scalar overloads' names scalar=/scalar1=/scalar2= "
                         "(test_keyword_binding)",
}


@pytest.fixture(scope="module")
def findings():
    found, checked = check(ember, torch)
    # (about 1390 forms of 1039 of the 1118 callables had inputs found when this was written)
    assert checked > 1300, f"only {checked} forms were checked: did a namespace go missing?"
    return found


def test_keyword_forms_compute_as_torch(findings):
    new = [f"{name}: {problem}" for name, problem in sorted(findings.items())
           if problem and name not in KNOWN]
    assert not new, "keyword forms torch takes that ember rejects or computes differently:\n" + \
        "\n".join(new)


def test_listed_failures_are_current(findings):
    fixed = [name for name in KNOWN if not findings.get(name)]
    assert not fixed, "these now pass: delete them from KNOWN:\n" + "\n".join(fixed)
