"""Every public name of torch 2.13 is importable from the same module path in ember, or is on
an explicit list of gaps with its reason (programs import classes from where torch defines
them: `torch.nn.modules.activation.MultiheadAttention`, `torch.utils.data.dataloader.DataLoader`).

Whole packages ember does not mirror are listed by prefix; single names inside mirrored modules
are listed one by one in module_path_gaps.py, and a name ember gains must leave the list."""
from __future__ import annotations

import importlib
import pkgutil
import warnings

import pytest
from module_path_gaps import NAME_GAP_REASONS, NAME_GAPS, PACKAGE_GAPS

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _gap_reason(module: str) -> str | None:
    for prefix, reason in PACKAGE_GAPS.items():
        if module == prefix or module.startswith(prefix + "."):
            return reason
    return None


def _public_modules():
    """torch's public module tree (no `_` component), skipping packages listed as gaps."""
    found, todo = [], [("torch", torch.__path__)]
    while todo:
        name, path = todo.pop()
        found.append(name)
        for info in pkgutil.iter_modules(path):
            full = f"{name}.{info.name}"
            if info.name.startswith("_") or _gap_reason(full) is not None:
                continue
            if info.ispkg:
                try:
                    mod = importlib.import_module(full)
                except Exception:   # needs an optional dependency torch does not have here
                    continue
                todo.append((full, mod.__path__))
            else:
                found.append(full)
    return sorted(found)


def _public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items()
                 if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__]
    return sorted(set(names))


def _missing():
    missing = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in _public_modules():
            try:
                theirs = importlib.import_module(name)
            except Exception:
                continue
            ours_name = "ember" + name[len("torch"):]
            try:
                ours = importlib.import_module(ours_name)
            except ImportError:
                missing[name] = None      # the whole module
                continue
            lacking = [n for n in _public_names(theirs) if not hasattr(ours, n)]
            if lacking:
                missing[name] = lacking
    return missing


@pytest.fixture(scope="module")
def missing():
    return _missing()


def test_module_paths_every_torch_module_exists_or_is_a_listed_gap(missing):
    unlisted = sorted(m for m, names in missing.items()
                      if names is None and m not in NAME_GAPS)
    assert not unlisted, f"ember lacks these torch modules, not listed as gaps: {unlisted}"


def test_module_paths_every_public_name_exists_or_is_a_listed_gap(missing):
    unlisted = {}
    for module, names in missing.items():
        if names is None or (module in NAME_GAPS and NAME_GAPS[module] is None):
            continue   # a module listed whole: ember lacks it, or is growing it right now
        listed = NAME_GAPS.get(module) or ()
        extra = [n for n in names if n not in listed and "*" not in listed]
        if extra:
            unlisted[module] = extra
    assert not unlisted, f"public torch names missing from ember, not listed as gaps: {unlisted}"


def test_module_paths_gap_list_is_current(missing):
    # a name ember gained must leave the list, so the list stays an honest account
    stale = {}
    for module, names in NAME_GAPS.items():
        if names is None and module not in missing and _gap_reason(module) is None:
            stale[module] = "the whole module (ember has every public name now)"
            continue
        if names is None or names == ("*",) or module not in missing and _gap_reason(module):
            continue
        have = missing.get(module)
        if have is None and module in missing:
            continue
        gone = [n for n in names if n != "*" and n not in (have or [])]
        if gone:
            stale[module] = gone
    assert not stale, f"listed as gaps but present in ember now; remove them: {stale}"


def test_module_paths_gap_reasons_are_current_and_readable():
    # a package gap names a precise sub-package with a reason a user can act on; a prefix
    # matches whole dotted components only (torch.func is not a prefix of torch.functional)
    for prefix, reason in PACKAGE_GAPS.items():
        assert len(reason) > 20 and "in progress" not in reason, (prefix, reason)
    assert _gap_reason("torch.fx.passes.split_module") == PACKAGE_GAPS["torch.fx.passes"]
    PACKAGE_GAPS["torch.func"] = "probe"
    try:
        assert _gap_reason("torch.functional") is None
        assert _gap_reason("torch.func.x") == "probe"
    finally:
        del PACKAGE_GAPS["torch.func"]
    for module in NAME_GAP_REASONS:
        assert NAME_GAPS.get(module), f"reason for {module} but no names listed there"


@pytest.mark.parametrize("path", [
    "nn.modules.activation.MultiheadAttention",
    "nn.modules.linear.NonDynamicallyQuantizableLinear",
    "utils.data.dataloader.DataLoader",
    "optim.optimizer.Optimizer",
    "nn.modules.linear.LazyLinear",
    "nn.modules.conv.LazyConv2d",
    "export.exported_program.ExportedProgram",
    "export.graph_signature.InputSpec",
    "export.dynamic_shapes.Dim",
    "onnx.errors.UnsupportedOperatorError",
    "distributed.optim.zero_redundancy_optimizer.ZeroRedundancyOptimizer",
])
def test_module_paths_classes_real_programs_import(path):
    module, _, name = path.rpartition(".")
    ours = getattr(importlib.import_module(f"ember.{module}"), name)
    assert isinstance(ours, type)
    assert ours.__name__ == getattr(importlib.import_module(f"torch.{module}"), name).__name__
