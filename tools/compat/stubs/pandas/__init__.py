"""Import-only stand-in: d2l's library module imports pandas at the top but the corpus's chapters
never call it. Any use raises, so a program that does need pandas fails visibly."""


def __getattr__(name):
    raise RuntimeError(f"pandas stand-in: pandas.{name} is not available in the compat runner")
