"""Import-only stand-in, used only where pandas is not installed: d2l's library module imports
pandas at the top but the corpus's chapters never call it. Any use raises, so a program that does
need pandas fails visibly. The classes below exist only for isinstance checks: libraries that
look for pandas in sys.modules (scikit-learn through narwhals: `isinstance(x, pd.DataFrame)`) then
find nothing of it.

Where pandas is installed (LTSF-Linear's data loaders read CSVs with it; pyproject's compat
extra), this module loads the real package in its place, so both kinds of program run."""
import importlib.machinery
import importlib.util
import os
import sys

_STUBS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_real = importlib.machinery.PathFinder.find_spec(
    "pandas", [p for p in sys.path if os.path.abspath(p or ".") != _STUBS])
if _real is not None:
    # the import system hands back whatever sys.modules holds once this module finishes
    _module = importlib.util.module_from_spec(_real)
    sys.modules["pandas"] = _module
    _real.loader.exec_module(_module)
else:
    class _Absent:
        def __init__(self, *args, **kwargs):
            raise RuntimeError(f"pandas stand-in: pandas.{type(self).__name__} is not available in "
                               "the compat runner")

    class DataFrame(_Absent):
        pass

    class Series(_Absent):
        pass

    class Index(_Absent):
        pass

    def __getattr__(name):
        raise RuntimeError(f"pandas stand-in: pandas.{name} is not available in the compat "
                           "runner")
