"""Counting the calls of module-level functions in a test (which kernel a path took)."""


def count_calls(monkeypatch, module, **names):
    """Wrap ``module.<attr>`` for each ``key=attr`` so that every call adds one to the returned
    dict's ``key`` before running the real function; monkeypatch undoes it after the test."""
    seen = dict.fromkeys(names, 0)
    for key, attr in names.items():
        real = getattr(module, attr)

        def counted(*args, _key=key, _real=real, **kwargs):
            seen[_key] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, attr, counted)
    return seen
