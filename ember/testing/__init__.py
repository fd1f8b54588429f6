"""Testing helpers: ``assert_close``, ``make_tensor`` and the op database view used by the
generic op tests (``op_db``, ``SampleInput``). Public so users can test their own ops the same
way ember tests its own.
"""
from __future__ import annotations

from ._comparison import assert_allclose as assert_allclose
from ._comparison import assert_close as assert_close
from ._comparison import default_tolerances as default_tolerances
from ._comparison import make_tensor as make_tensor
from ._samples import ErrorInput as ErrorInput
from ._samples import OpSpec as OpSpec
from ._samples import SampleInput as SampleInput
from ._samples import op_db as op_db

__all__ = ["ErrorInput", "OpSpec", "SampleInput", "assert_allclose", "assert_close",
           "default_tolerances", "make_tensor", "op_db"]
