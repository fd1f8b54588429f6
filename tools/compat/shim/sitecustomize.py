"""Make `import torch` and every `torch.*` submodule resolve to ember.

run.py puts this directory first on PYTHONPATH only for `--impl ember`, so Python imports it at
start-up in the program's process and in every process the program starts (DataLoader workers,
spawn, torchrun). `torch.X.Y` is served by `ember.X.Y`: the same module object under both names,
so `isinstance` and identity checks agree whichever name a program used.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys


class _TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `torch` and `torch.*` and loads the module of the same path under `ember`."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        target_name = "ember" + fullname[len("torch"):]
        try:
            if importlib.util.find_spec(target_name) is None:
                return None
        except ModuleNotFoundError:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module("ember" + spec.name[len("torch"):])
        if spec.name == "torch":
            # the top-level name a program sees is torch's: code that checks it (Pyro's
            # patch_dependency asserts "torch.x.y".split(".")[0] == torch.__name__) runs;
            # submodules and classes keep their ember names (pickles, __module__)
            module.__name__ = "torch"
        if spec.name == "torch" and os.environ.get("COMPAT_COMPILE") == "1":
            import compat_compile  # run.py --compile
            compat_compile.install(module)
        return module

    def exec_module(self, module):
        # the ember module ran already when create_module imported it
        pass


sys.meta_path.insert(0, _TorchAlias())

# after the alias finder, so the seed shift wraps ember's module once it is loaded as torch
import compat_seedshift  # noqa: E402  (stubs/ is on PYTHONPATH too)

compat_seedshift.install()
