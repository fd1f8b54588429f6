"""Count how much of PyTorch's user-facing API ember has, namespace by namespace.

Usage:
    python tools/api_coverage.py [--names] [--write docs/COMPAT.md]

Needs torch installed (it is the reference; ember never imports it). A name counts as
user-facing unless a rule in NOT_USER_FACING matches it: those rules name the internal,
backend-specific or TorchScript-type names that no CPU program written against the public API
calls, each with its reason. A user-facing name that ember lacks on purpose is listed in
MISSING_ON_PURPOSE with its reason; it still counts as missing.

With --write, the table replaces the text between the two API-coverage markers in the file
(the rest of the file is left as it is).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import types
from pathlib import Path

# (label, torch module, ember module); "Tensor" compares the classes' attributes.
NAMESPACES = [
    ("torch", "torch", "ember"),
    ("Tensor", "torch.Tensor", "ember.Tensor"),
    ("nn", "torch.nn", "ember.nn"),
    ("nn.functional", "torch.nn.functional", "ember.nn.functional"),
    ("nn.init", "torch.nn.init", "ember.nn.init"),
    ("nn.utils", "torch.nn.utils", "ember.nn.utils"),
    ("linalg", "torch.linalg", "ember.linalg"),
    ("fft", "torch.fft", "ember.fft"),
    ("special", "torch.special", "ember.special"),
    ("distributions", "torch.distributions", "ember.distributions"),
    ("func", "torch.func", "ember.func"),
    ("optim", "torch.optim", "ember.optim"),
    ("optim.lr_scheduler", "torch.optim.lr_scheduler", "ember.optim.lr_scheduler"),
    ("autograd", "torch.autograd", "ember.autograd"),
    ("utils.data", "torch.utils.data", "ember.utils.data"),
]

# (pattern on the name, reason). Matched with re.fullmatch against every namespace's names.
NOT_USER_FACING = [
    (r"(cudnn|miopen|mkldnn|fbgemm|xpu|mps|vulkan|ipu|xla)_.*|.*_(gpu|ipu|xla)_.*",
     "a GPU or vendor-library entry point; CPU programs do not call it"),
    (r".*(quantiz|qscheme|qparams).*|.*fake_quant.*|q_.*|qu?int\d+(x\d+)?|int_repr|per_(channel|tensor)_.*",
     "quantized tensors: a separate subsystem, out of this wave's scope"),
    (r".*Storage(Base|Context)?|storage_.*", "typed storage classes: legacy, ember exposes "
     "untyped storage through Tensor.untyped_storage"),
    (r"sym_.*|Sym(Int|Float|Bool).*", "symbolic shapes of torch's compiler internals"),
    (r".*Type|Script.*|.*Schema|AliasDb|Argument|ArgumentSpec|Block|CallStack|Capsule|Code|"
     r"CompilationUnit|CompleteArgumentSpec|ConcreteModuleType.*|DeepCopyMemoTable|"
     r"DispatchKey.*|ErrorReport|ExecutionPlan|FileCheck|Gradient|Graph|GraphExecutorState|"
     r"IODescriptor|InferredType|JITException|LiteScriptModule|Node|OperatorInfo|"
     r"StaticModule|TracingState|Use|Value|import_ir_module.*|parse_(ir|schema|type_comment)|"
     r"merge_type_from_type_comment|unify_type_list|fork|wait|Future|Tag|PRIVATE_OPS|"
     r"ExcludeDispatchKeyGuard|DisableTorchFunction.*|BenchmarkConfig|"
     r"BenchmarkExecutionStats|ThroughputBenchmark|LockingLogger|LoggerBase|NoopLogger|"
     r"AggregationType|PyTorchFile(Reader|Writer)|classproperty|AcceleratorError|FatalError",
     "TorchScript/C++ binding internals exported at the top level by accident of history"),
    (r".*_copy|.*_scatter", "functionalization variants (view ops returning copies) used by "
     "torch's compiler, not by programs"),
    (r"native_.*|.*_backward(_.*)?|batch_norm_(stats|elemt|gather_.*|update_stats|backward_.*)|"
     r"_?convolution|conv_tbc|constant_pad_nd|grid_sampler(_[23]d)?|affine_grid_generator|"
     r"(rnn_(tanh|relu)|lstm|gru)(_cell)?|norm_except_dim|embedding_renorm_|"
     r"max_pool1d_with_indices|feature_(alpha_)?dropout_?|alpha_dropout_|dropout_|"
     r"unsafe_.*|segment_reduce|slice_inverse|hash_tensor|empty_permuted|nonzero_static",
     "aten-level kernels that nn.functional wraps; programs call the nn.functional name"),
    (r"USE_.*|TYPE_CHECKING|compiled_with_cxx11_abi|has_(lapack|mkl|openmp|spectral)|"
     r"get_file_path|prepare_multiprocessing_environment|init_num_threads|"
     r"profiler_allow_.*|thread_safe_generator|autocast_(in|de)crement_nesting|"
     r"get_device_module|is_distributed|jagged|legacy_contiguous_format|"
     r"float4_.*|float8_.*|int[1-7]|uint[1-7]|bits.*|complex32|chalf",
     "build flags, process set-up hooks, and exotic dtypes without a NumPy storage"),
    (r"AVG|SUM", "torch._C enum values leaked to the top level"),
    (r"(handle|has)_torch_function.*|boolean_dispatch|assert_int_or_pair|BroadcastingList\d|"
     r"enforce_grad_layout_policy|is_view_replay_enabled|kineto_available",
     "__torch_function__ protocol and TorchScript typing helpers"),
]

MISSING_ON_PURPOSE: dict[str, str] = {
    "ModuleDict": "torch.ModuleDict/ParameterDict/BufferDict (top level) are TorchScript's C++ "
                  "binding types, not the nn containers (ember.nn.ModuleDict is there)",
    "ParameterDict": "TorchScript C++ binding type (see ModuleDict)",
    "BufferDict": "TorchScript C++ binding type (see ModuleDict)",
    "bit": "a 1-bit dtype with no NumPy storage and no operators in torch either",
    "sparse_csr_tensor": "compressed sparse tensors (CSR/CSC/BSR/BSC): ember stores sparse "
                         "tensors as COO only; the layout constants exist for comparisons",
    "sparse_csc_tensor": "compressed sparse tensors: COO only (see sparse_csr_tensor)",
    "sparse_bsr_tensor": "compressed sparse tensors: COO only (see sparse_csr_tensor)",
    "sparse_bsc_tensor": "compressed sparse tensors: COO only (see sparse_csr_tensor)",
    "sparse_compressed_tensor": "compressed sparse tensors: COO only (see sparse_csr_tensor)",
    "to_sparse_csr": "Tensor method: compressed sparse tensors are not stored (COO only)",
    "to_sparse_csc": "Tensor method: compressed sparse tensors are not stored (COO only)",
    "to_sparse_bsr": "Tensor method: compressed sparse tensors are not stored (COO only)",
    "to_sparse_bsc": "Tensor method: compressed sparse tensors are not stored (COO only)",
    "to_mkldnn": "Tensor method: the oneDNN (mkldnn) layout belongs to torch's CPU backend",
    "to_padded_tensor": "Tensor method of nested (ragged) tensors, which ember does not have",
    "index": "Tensor method binding first-class dimensions (functorch.dim), not implemented",
    "symeig": "removed from torch (raises there); linalg.eigh replaces it",
    "eig": "removed from torch (raises there); linalg.eig replaces it",
    "lstsq": "removed from torch (raises there); linalg.lstsq replaces it",
    "solve": "removed from torch (raises there); linalg.solve replaces it",
    "matrix_rank": "removed from torch (raises there); linalg.matrix_rank replaces it",
    "scaled_mm": "nn.functional: scaled float8 GEMM (torch 2.13 runs its tensor-wise recipe on "
                 "CPU too); not implemented: ember has the float8 dtypes but no scaled GEMM "
                 "or scaling-recipe types",
    "scaled_grouped_mm": "nn.functional: CUDA-only in torch 2.13 (scaled float8 grouped GEMM)",
}


_STDLIB_MODULES = {"typing", "typing_extensions", "functools", "collections.abc", "weakref",
                   "math", "builtins", "_operator", "_functools", "abc"}
_TORCH_TENSOR = None


def _is_torch_tensor(value) -> bool:
    module, name = getattr(value, "__module__", ""), getattr(value, "__name__", "")
    return module == "torch" and name == "Tensor"


def _resolve(path: str):
    module_path, _, attr = path.rpartition(".")
    try:
        return importlib.import_module(path)
    except ImportError:
        pass
    try:
        return getattr(importlib.import_module(module_path), attr)
    except (ImportError, AttributeError):
        return None


def _internal_reason(name: str) -> str | None:
    for pattern, reason in NOT_USER_FACING:
        if re.fullmatch(pattern, name):
            return reason
    return None


def user_facing_names(obj) -> list[str]:
    """Public names of a module or class that user programs can reach."""
    names = []
    for name in dir(obj):
        if name.startswith("_"):
            continue
        value = getattr(obj, name, None)
        if isinstance(value, types.ModuleType):
            continue  # submodules are counted as namespaces of their own
        if isinstance(value, (str, dict)) or getattr(value, "__module__", "") in _STDLIB_MODULES:
            continue  # docstring fragments and names the module imported from the stdlib
        if name == "Tensor" and obj is not _TORCH_TENSOR and _is_torch_tensor(value):
            continue  # the Tensor class re-exported by a sub-namespace
        if _internal_reason(name) is None:
            names.append(name)
    return sorted(names)


def coverage():
    """[(label, total, present, missing names)] for every namespace."""
    global _TORCH_TENSOR
    _TORCH_TENSOR = _resolve("torch.Tensor")
    rows = []
    for label, torch_path, ember_path in NAMESPACES:
        reference = _resolve(torch_path)
        ours = _resolve(ember_path)
        names = user_facing_names(reference)
        missing = [n for n in names if ours is None or not hasattr(ours, n)]
        rows.append((label, len(names), len(names) - len(missing), missing))
    return rows


def table(rows) -> str:
    lines = ["| namespace | torch names | in ember | missing | coverage |",
             "|---|---:|---:|---:|---:|"]
    for label, total, present, missing in rows:
        share = 100.0 * present / total if total else 100.0
        lines.append(f"| {label} | {total} | {present} | {len(missing)} | {share:.0f}% |")
    return "\n".join(lines)


START = "<!-- api-coverage:start -->"
END = "<!-- api-coverage:end -->"


def write_section(path: Path, rows) -> None:
    body = [START, "", "API coverage against PyTorch 2.13, made by `python tools/api_coverage.py "
            "--write docs/COMPAT.md` (needs torch installed).", "", table(rows), ""]
    for label, _, _, missing in rows:
        if missing:
            body.append(f"- **{label}** lacks: " + ", ".join(f"`{n}`" for n in missing))
    body.append("")
    purposeful = [f"- `{n}`: {why}" for n, why in sorted(MISSING_ON_PURPOSE.items())]
    body += ["Missing on purpose:", "", *purposeful, "", END]
    text = path.read_text() if path.exists() else "# Compatibility\n"
    if START in text and END in text:
        head, rest = text.split(START, 1)
        text = head + "\n".join(body) + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(body) + "\n"
    path.write_text(text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", action="store_true", help="print the missing names too")
    parser.add_argument("--write", type=Path, help="replace the API-coverage section of FILE")
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401  (the reference API)
    except ImportError:
        print("api_coverage: torch is not installed; it is the reference to count against",
              file=sys.stderr)
        return 2
    try:
        import ember  # noqa: F401  (the tree to count; not installed: PYTHONPATH=<the tree>)
    except ImportError as e:
        print(f"api_coverage: ember is not importable ({e}); install it (pip install -e .) or "
              "run with PYTHONPATH set to the repository", file=sys.stderr)
        return 2
    rows = coverage()
    print(table(rows))
    if args.names:
        for label, _, _, missing in rows:
            if missing:
                print(f"\n{label} ({len(missing)} missing):\n  " + " ".join(missing))
    if args.write:
        write_section(args.write, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
