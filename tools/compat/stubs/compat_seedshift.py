"""Shift the seeds a program sets by COMPAT_SEED, so one program can be run over several random
streams without editing it (the spread behind a corpus bar).

Programs fix their seeds (`torch.manual_seed(123)`); with COMPAT_SEED=k (k != 0) the seed they
pass to `torch.manual_seed`, `torch.random.manual_seed`, `torch.cuda.manual_seed(_all)`,
`random.seed` and `numpy.random.seed` becomes seed + k. Programs that never seed would draw
torch's fixed start-up stream every run: the default generator is seeded with 7919 * k at import.
NumPy's global generator is seeded the same way (7919 * k, also for k = 0) at import; unseeded,
it drew new numbers every run (TCN's copy-memory data comes from np.random.randint, unseeded).
Installed by the sitecustomize of stubs/ (torch runs) and of shim/ (ember runs).
"""
from __future__ import annotations

import importlib.abc
import os
import sys


def _shifted(fn, shift):
    def seed(s=None, *args, **kwargs):
        if isinstance(s, int) and not isinstance(s, bool):
            s = s + shift
        return fn(s, *args, **kwargs)

    seed.__wrapped__ = fn
    seed.__name__ = getattr(fn, "__name__", "seed")
    return seed


def _patch_torch(mod, shift):
    mod.manual_seed(7919 * shift)
    mod.manual_seed = _shifted(mod.manual_seed, shift)
    for sub in ("random", "cuda"):
        m = getattr(mod, sub, None)
        for name in ("manual_seed", "manual_seed_all"):
            if m is not None and callable(getattr(m, name, None)):
                setattr(m, name, _shifted(getattr(m, name), shift))


def _seed_numpy(mod, shift):
    mod.random.seed(7919 * shift)


def _patch_numpy(mod, shift):
    _seed_numpy(mod, shift)
    mod.random.seed = _shifted(mod.random.seed, shift)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Patches torch / numpy right after the first import of them, whoever loads them."""

    def __init__(self, shift):
        self.shift = shift
        self.todo = {"torch": _patch_torch, "numpy": _patch_numpy}

    def find_spec(self, fullname, path=None, target=None):
        patch = self.todo.pop(fullname, None)
        if patch is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader, shift = spec.loader, self.shift
        run = loader.exec_module

        class _Loader(importlib.abc.Loader):
            def __getattr__(self, name):   # resources, get_data, ... stay the real loader's
                return getattr(loader, name)

            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                run(module)
                patch(sys.modules.get(fullname, module), shift)

        spec.loader = _Loader()
        return spec


def install() -> None:
    shift = int(os.environ.get("COMPAT_SEED", "0") or 0)
    if shift == 0:
        # the program as written, except that NumPy's global generator starts seeded (torch's
        # start-up stream is fixed already)
        finder = _AfterImport(0)
        finder.todo = {"numpy": _seed_numpy}
        sys.meta_path.insert(0, finder)
        return
    import random

    random.seed = _shifted(random.seed, shift)
    sys.meta_path.insert(0, _AfterImport(shift))
