"""Import-only stand-in: d2l's library module imports pandas at the top but the corpus's chapters
never call it. Any use raises, so a program that does need pandas fails visibly. The classes
below exist only for isinstance checks: libraries that look for pandas in sys.modules
(scikit-learn through narwhals: `isinstance(x, pd.DataFrame)`) then find nothing of it."""


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
    raise RuntimeError(f"pandas stand-in: pandas.{name} is not available in the compat runner")
