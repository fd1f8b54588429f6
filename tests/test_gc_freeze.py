"""NOTE [Import-time objects out of the collector's way]: `import ember` freezes the objects alive
then (full collections skip them) unless EMBER_GC_FREEZE=0; objects made later are collected as
before, cycles included."""
import os
import subprocess
import sys

import pytest

_PROBE = """
import gc, weakref
before = gc.get_freeze_count()
import ember
frozen = gc.get_freeze_count()

class Node:
    pass

a, b = Node(), Node()
a.other, b.other = b, a  # a cycle made after the import: still garbage the collector frees
ref = weakref.ref(a)
del a, b
gc.collect()
print(before, frozen, ref() is None)
"""


@pytest.mark.parametrize("setting, freezes", [(None, True), ("0", False)])
def test_import_freezes_unless_switched_off(setting, freezes):
    env = {k: v for k, v in os.environ.items() if k != "EMBER_GC_FREEZE"}
    if setting is not None:
        env["EMBER_GC_FREEZE"] = setting
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    before, frozen, freed = int(out[0]), int(out[1]), out[2]
    assert before == 0
    if freezes:
        assert frozen > 50_000  # NumPy, numba, SciPy and ember's own import-time objects
    else:
        assert frozen == 0
    assert freed == "True"
