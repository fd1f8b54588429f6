"""``ember.export``: a module as an :class:`ExportedProgram` — a graph over ember's functions
with parameters, buffers and tensor constants lifted to graph inputs, and a graph signature
saying which input is which.

Capture is ember.fx's symbolic trace; ember layers with a functional form (Linear, Conv,
BatchNorm in eval mode, LayerNorm, Embedding, activations, pooling, Dropout, Flatten) become
``ember.nn.functional`` calls on the lifted parameters; layers without one (LSTM, GRU,
MultiheadAttention, Transformer layers) stay ``call_module`` nodes holding their own weights.

Differs from torch: the graph is over ember's public functions rather than ATen core ops;
``dynamic_shapes`` is checked by running the program on inputs resized along the dynamic
dimensions (the graph itself is shape-generic), and ``range_constraints`` lists those Dims.
"""
from __future__ import annotations

import contextlib
import copy
import inspect
import os
from dataclasses import dataclass, field
from enum import Enum, auto
from typing import Any

import ember
import ember.fx as fx
import ember.nn as nn
import ember.nn.functional as F
from ember.fx.graph_module import GraphModule
from ember.fx.node import map_arg
from ember.fx.proxy import TraceError

__all__ = ["export", "ExportedProgram", "ExportGraphSignature", "InputSpec", "OutputSpec",
           "InputKind", "OutputKind", "TensorArgument", "Dim", "dims", "save", "load",
           "ExportError"]


class ExportError(RuntimeError):
    """The module could not be exported (the message says what and where)."""


class InputKind(Enum):
    USER_INPUT = auto()
    PARAMETER = auto()
    BUFFER = auto()
    CONSTANT_TENSOR = auto()


class OutputKind(Enum):
    USER_OUTPUT = auto()
    BUFFER_MUTATION = auto()


@dataclass
class TensorArgument:
    name: str


@dataclass
class InputSpec:
    kind: InputKind
    arg: TensorArgument
    target: str | None
    persistent: bool | None = None


@dataclass
class OutputSpec:
    kind: OutputKind
    arg: TensorArgument
    target: str | None


@dataclass
class ExportGraphSignature:
    """Which graph inputs are parameters, buffers, constants or user inputs."""

    input_specs: list = field(default_factory=list)
    output_specs: list = field(default_factory=list)

    def _targets(self, kind) -> list:
        return [s.target for s in self.input_specs if s.kind is kind]

    @property
    def parameters(self) -> list:
        return self._targets(InputKind.PARAMETER)

    @property
    def buffers(self) -> list:
        return self._targets(InputKind.BUFFER)

    @property
    def lifted_tensor_constants(self) -> list:
        return self._targets(InputKind.CONSTANT_TENSOR)

    @property
    def user_inputs(self) -> list:
        return [s.arg.name for s in self.input_specs if s.kind is InputKind.USER_INPUT]

    @property
    def user_outputs(self) -> list:
        return [s.arg.name for s in self.output_specs if s.kind is OutputKind.USER_OUTPUT]

    @property
    def inputs_to_parameters(self) -> dict:
        return {s.arg.name: s.target for s in self.input_specs
                if s.kind is InputKind.PARAMETER}

    @property
    def inputs_to_buffers(self) -> dict:
        return {s.arg.name: s.target for s in self.input_specs if s.kind is InputKind.BUFFER}


class Dim:
    """A named dynamic dimension: ``Dim("batch", min=1, max=64)``."""

    AUTO: Any = None
    DYNAMIC: Any = None
    STATIC: Any = "STATIC"

    def __init__(self, name: str, *, min: int | None = None, max: int | None = None):
        self.__name__ = name
        self.min = 0 if min is None else min
        self.max = max

    def __repr__(self) -> str:
        return f"Dim('{self.__name__}', min={self.min}, max={self.max})"


Dim.AUTO = Dim("AUTO")
Dim.DYNAMIC = Dim("DYNAMIC")


def dims(*names: str, min: int | None = None, max: int | None = None) -> tuple[Dim, ...]:
    """Several dynamic dimensions with the same range: ``batch, seq = dims("batch", "seq")``."""
    return tuple(Dim(name, min=min, max=max) for name in names)


# ------------------------------------------------------------------------------ layers -> F
_PARAM = "param"


def _functional_form(m):
    """(function, arguments after the input, kwargs) for a layer with a functional form, or
    None; ``(_PARAM, name)`` stands for the layer's tensor attribute ``name``."""
    if isinstance(m, nn.Linear):
        return F.linear, [(_PARAM, "weight"), (_PARAM, "bias")], {}
    if isinstance(m, (nn.Conv1d, nn.Conv2d)) and m.padding_mode == "zeros":
        fn = F.conv1d if isinstance(m, nn.Conv1d) else F.conv2d
        return fn, [(_PARAM, "weight"), (_PARAM, "bias"), m.stride, m.padding, m.dilation,
                    m.groups], {}
    if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)) and not m.training and \
            m.running_mean is not None:
        return F.batch_norm, [(_PARAM, "running_mean"), (_PARAM, "running_var"),
                              (_PARAM, "weight"), (_PARAM, "bias"), False, m.momentum or 0.0,
                              m.eps], {}
    if isinstance(m, nn.LayerNorm):
        return F.layer_norm, [tuple(m.normalized_shape), (_PARAM, "weight"),
                              (_PARAM, "bias"), m.eps], {}
    if isinstance(m, nn.Embedding) and m.max_norm is None:
        return F.embedding, [(_PARAM, "weight"), m.padding_idx], {}
    simple = {nn.ReLU: F.relu, nn.ReLU6: F.relu6, nn.Sigmoid: ember.sigmoid,
              nn.Tanh: ember.tanh, nn.SiLU: F.silu}
    if type(m) in simple:
        return simple[type(m)], [], {}
    if isinstance(m, nn.GELU):
        return F.gelu, [], {"approximate": m.approximate}
    if isinstance(m, nn.LeakyReLU):
        return F.leaky_relu, [m.negative_slope], {}
    if isinstance(m, nn.Softmax):
        return F.softmax, [m.dim], {}
    if isinstance(m, nn.LogSoftmax):
        return F.log_softmax, [m.dim], {}
    if isinstance(m, nn.Dropout):
        return F.dropout, [m.p, m.training], {}
    if isinstance(m, nn.Flatten):
        return ember.flatten, [m.start_dim, m.end_dim], {}
    if isinstance(m, nn.MaxPool2d) and not m.return_indices:
        return F.max_pool2d, [m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode], {}
    if isinstance(m, nn.AvgPool2d):
        return F.avg_pool2d, [m.kernel_size, m.stride, m.padding, m.ceil_mode,
                              m.count_include_pad], {}
    if isinstance(m, nn.AdaptiveAvgPool2d):
        return F.adaptive_avg_pool2d, [m.output_size], {}
    return None


# ------------------------------------------------------------------------------ program
class ExportedProgram:
    """The result of :func:`export`: ``graph_module`` (inputs: lifted tensors, then user
    inputs), ``graph_signature`` and ``state_dict``; ``module()`` gives a callable Module."""

    def __init__(self, graph_module, graph_signature, state_dict, constants=None,
                 range_constraints=None, example_inputs=None):
        self.graph_module = graph_module
        self.graph_signature = graph_signature
        self.state_dict = state_dict
        self.constants = constants or {}
        self.range_constraints = range_constraints or {}
        self.example_inputs = example_inputs
        self.verifiers: list = []

    @property
    def graph(self):
        return self.graph_module.graph

    def parameters(self):
        for name in self.graph_signature.parameters:
            yield self.state_dict[name]

    def named_parameters(self):
        for name in self.graph_signature.parameters:
            yield name, self.state_dict[name]

    def buffers(self):
        for name in self.graph_signature.buffers:
            yield self.state_dict.get(name, self.constants.get(name))

    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops=False):
        """ember's graph is already over its public functions: returns a copy."""
        return copy.copy(self)

    def module(self):
        """A Module running the program with the lifted tensors as its own attributes."""
        lifted = {s.arg.name: s for s in self.graph_signature.input_specs
                  if s.kind is not InputKind.USER_INPUT}
        g = fx.Graph()
        env: dict = {}
        root = nn.Module()
        for name, mod in self.graph_module.named_children():
            root.add_module(name, mod)
        for node in self.graph.nodes:
            if node.op == "placeholder" and node.name in lifted:
                spec = lifted[node.name]
                _install_tensor(root, spec, self._tensor_for(spec))
                env[node] = g.get_attr(spec.target)
            else:
                env[node] = g.node_copy(node, lambda n: env[n])
        return GraphModule(root, g, "ExportedModule")

    def _tensor_for(self, spec):
        if spec.target in self.state_dict:
            return self.state_dict[spec.target]
        return self.constants[spec.target]

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def __str__(self) -> str:
        code = self.graph_module.code.strip().replace("\n", "\n    ")
        return (f"ExportedProgram:\n    {code}\n\nGraph signature: {self.graph_signature}\n"
                f"Range constraints: {self.range_constraints}\n")


def _owner(root, target: str, create: bool = True):
    *path, leaf = target.split(".")
    owner = root
    for atom in path:
        sub = owner._modules.get(atom)
        if sub is None:
            sub = nn.Module()
            owner.add_module(atom, sub)
        owner = sub
    return owner, leaf


def _install_tensor(root, spec, tensor) -> None:
    owner, leaf = _owner(root, spec.target)
    if spec.kind is InputKind.PARAMETER:
        owner.register_parameter(leaf, tensor if isinstance(tensor, nn.Parameter)
                                 else nn.Parameter(tensor))
    elif spec.kind is InputKind.BUFFER:
        owner.register_buffer(leaf, tensor, persistent=spec.persistent is not False)
    else:
        object.__setattr__(owner, leaf, tensor)


class _Lifter:
    """Builds the lifted graph: one placeholder per parameter/buffer/constant, then the
    user inputs; layers with a functional form become function calls on those."""

    def __init__(self, gm, root):
        self.gm = gm
        self.params = {id(p): n for n, p in root.named_parameters()}
        self.buffers = {id(b): n for n, b in root.named_buffers()}
        # torch's order: parameters, then buffers (module order), then constants, then inputs
        self.order = {n: i for i, (n, _) in enumerate(list(root.named_parameters()) +
                                                      list(root.named_buffers()))}
        self.non_persistent = set()
        for path, m in root.named_modules():
            for b in getattr(m, "_non_persistent_buffers_set", ()):
                self.non_persistent.add(f"{path}.{b}" if path else b)
        self.g = fx.Graph()
        self.specs: list = []
        self.state: dict = {}
        self.constants: dict = {}
        self.lifted: dict = {}
        self.kept: dict = {}
        self.first_user_input = None

    def lift(self, qualname: str, tensor):
        if qualname in self.lifted:
            return self.lifted[qualname]
        persistent = None
        if id(tensor) in self.params:
            kind, prefix = InputKind.PARAMETER, "p_"
            self.state[qualname] = tensor
        elif id(tensor) in self.buffers:
            kind, prefix = InputKind.BUFFER, "b_"
            persistent = qualname not in self.non_persistent
            (self.state if persistent else self.constants)[qualname] = tensor
        else:
            kind, prefix = InputKind.CONSTANT_TENSOR, "c_"
            self.constants[qualname] = tensor
        where = self.g.inserting_before(self.first_user_input) \
            if self.first_user_input is not None else contextlib.nullcontext()
        with where:
            node = self.g.placeholder(prefix + qualname.replace(".", "_").lower())
        self.specs.append(InputSpec(kind, TensorArgument(node.name), qualname, persistent))
        self.lifted[qualname] = node
        return node

    def run(self):
        env: dict = {}
        user_specs = []
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                new = self.g.node_copy(node)
                if self.first_user_input is None:
                    self.first_user_input = new
                user_specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(new.name),
                                            None))
                env[node] = new
            elif node.op == "get_attr":
                value = _fetch(self.gm, node.target)
                if isinstance(value, ember.Tensor):
                    env[node] = self.lift(node.target, value)
                else:
                    env[node] = self.g.node_copy(node)
                    self.kept[node.target] = value
            elif node.op == "call_module":
                env[node] = self._module_call(node, env)
            else:
                env[node] = self.g.node_copy(node, lambda n: env[n])
        rank = {InputKind.PARAMETER: 0, InputKind.BUFFER: 1, InputKind.CONSTANT_TENSOR: 2}
        self.specs.sort(key=lambda s: (rank[s.kind], self.order.get(s.target, len(self.order))))
        by_name = {n.name: n for n in self.g.nodes if n.op == "placeholder"}
        for spec in self.specs:             # placeholders in signature order, before inputs
            if self.first_user_input is not None:
                self.first_user_input.prepend(by_name[spec.arg.name])
        out_specs = []
        for n in self.g.nodes:
            if n.op == "output":
                map_arg(n.args, lambda a: out_specs.append(
                    OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(a.name), None)))
        return ExportGraphSignature(self.specs + user_specs, out_specs)

    def _module_call(self, node, env):
        m = self.gm.get_submodule(node.target)
        if isinstance(m, nn.Identity):
            return env[node.args[0]]
        form = _functional_form(m)
        if form is None:
            self.kept[node.target] = m
            return self.g.node_copy(node, lambda n: env[n])
        fn, rest, kw = form
        args = list(map_arg(node.args, lambda n: env[n]))
        for item in rest:
            if isinstance(item, tuple) and len(item) == 2 and item[0] == _PARAM:
                t = getattr(m, item[1])
                item = None if t is None else self.lift(f"{node.target}.{item[1]}", t)
            args.append(item)
        return self.g.call_function(fn, tuple(args), kw)


def _fetch(gm, target: str):
    obj = gm
    for atom in target.split("."):
        obj = getattr(obj, atom)
    return obj


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
           preserve_module_call_signature=()):
    """Capture ``mod`` called on ``args`` as an :class:`ExportedProgram`.

    Example:
        >>> import ember
        >>> ep = ember.export.export(ember.nn.Linear(3, 2), (ember.ones(1, 3),))
        >>> [s.kind.name for s in ep.graph_signature.input_specs]
        ['PARAMETER', 'PARAMETER', 'USER_INPUT']
        >>> ep.module()(ember.ones(1, 3)).shape
        ember.Size([1, 2])
    """
    if not isinstance(mod, nn.Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got "
                         f"{type(mod)}.")
    if not isinstance(args, tuple):
        raise ValueError(f"Expecting `args` to be a tuple of example positional inputs, got "
                         f"{type(args)}")
    kwargs = dict(kwargs or {})
    params = list(inspect.signature(mod.forward).parameters.values())
    concrete = {p.name: p.default for p in params[len(args):]
                if p.name not in kwargs and p.default is not inspect.Parameter.empty}
    try:
        graph = fx.Tracer().trace(mod, concrete_args=concrete)
    except (TraceError, RuntimeError) as e:
        if not isinstance(e, TraceError) and "'len'" not in str(e):
            raise
        from ember.jit import _script_error
        raise ExportError(str(_script_error(mod, e)).replace("jit.script", "export")) from None
    gm = GraphModule(mod, graph, type(mod).__name__)
    lifter = _Lifter(gm, mod)
    sig = lifter.run()
    root = nn.Module()
    for target, m in lifter.kept.items():
        owner, leaf = _owner(root, target)
        if isinstance(m, nn.Module):
            owner.add_module(leaf, m)
        else:
            object.__setattr__(owner, leaf, m)
    lifted_gm = GraphModule(root, lifter.g, type(mod).__name__)
    ep = ExportedProgram(lifted_gm, sig, lifter.state, lifter.constants,
                         _range_constraints(dynamic_shapes, params), (args, kwargs))
    if dynamic_shapes is not None:
        _check_dynamic(ep, args, kwargs, dynamic_shapes, params)
    return ep


def _dyn_axes(dynamic_shapes, params) -> dict:
    """Positional index -> {axis: Dim} from dynamic_shapes (dict by name, or tuple)."""
    if isinstance(dynamic_shapes, dict):
        names = [p.name for p in params]
        items = {names.index(k): v for k, v in dynamic_shapes.items() if k in names}
    else:
        items = dict(enumerate(dynamic_shapes))
    out = {}
    for i, spec in items.items():
        if spec is None:
            continue
        pairs = spec.items() if isinstance(spec, dict) else enumerate(spec)
        axes = {int(k): v for k, v in pairs if v is not None and v != Dim.STATIC}
        if axes:
            out[i] = axes
    return out


def _range_constraints(dynamic_shapes, params) -> dict:
    if dynamic_shapes is None:
        return {}
    out = {}
    for axes in _dyn_axes(dynamic_shapes, params).values():
        for d in axes.values():
            if isinstance(d, Dim):
                out[d.__name__] = (d.min, d.max)
    return out


def _check_dynamic(ep, args, kwargs, dynamic_shapes, params) -> None:
    from ember.onnx._capture import perturb
    axes = _dyn_axes(dynamic_shapes, params)
    resized = tuple(perturb(a, list(axes[i])) if i in axes else a for i, a in enumerate(args))
    try:
        with ember.no_grad():
            ep.module()(*resized, **kwargs)
    except Exception as e:
        raise ExportError(f"export: Constraints violated: the program does not run when the "
                          f"dimensions declared dynamic ({dynamic_shapes}) change: "
                          f"{type(e).__name__}: {e}") from e


# ------------------------------------------------------------------------------ save/load
def save(ep: ExportedProgram, f, *, extra_files=None, opset_version=None, pickle_protocol=2):
    """Write ``ep`` as a graph archive (NOTE [Graph archive format], prefix ember_export)."""
    from ember.jit._serialize import save_archive
    sig = ep.graph_signature
    extra = {"input_specs": [[s.kind.name, s.arg.name, s.target, s.persistent]
                             for s in sig.input_specs],
             "output_specs": [[s.kind.name, s.arg.name, s.target] for s in sig.output_specs],
             "range_constraints": {k: list(v) for k, v in ep.range_constraints.items()}}
    tensors = {"state:" + k: v for k, v in ep.state_dict.items()}
    tensors.update({"const:" + k: v for k, v in ep.constants.items()})
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            save_archive(ep.graph_module, fh, "ember_export", extra, tensors)
    else:
        save_archive(ep.graph_module, f, "ember_export", extra, tensors)


def load(f, *, extra_files=None, expected_opset_version=None) -> ExportedProgram:
    """Load a program written by :func:`save`; no code from the file runs."""
    from ember.jit._serialize import load_archive
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            root, graph, name, extra, tensors = load_archive(fh, "ember_export", True)
    else:
        root, graph, name, extra, tensors = load_archive(f, "ember_export", True)
    specs = [InputSpec(InputKind[k], TensorArgument(a), t, p)
             for k, a, t, p in extra["input_specs"]]
    outs = [OutputSpec(OutputKind[k], TensorArgument(a), t) for k, a, t in extra["output_specs"]]
    state = {k[len("state:"):]: v for k, v in tensors.items() if k.startswith("state:")}
    for s in specs:
        if s.kind is InputKind.PARAMETER:
            state[s.target] = nn.Parameter(state[s.target])
    constants = {k[len("const:"):]: v for k, v in tensors.items() if k.startswith("const:")}
    return ExportedProgram(GraphModule(root, graph, name), ExportGraphSignature(specs, outs),
                           state, constants,
                           {k: tuple(v) for k, v in extra["range_constraints"].items()})


def _import_torch_paths() -> None:
    # torch's submodule paths of these classes (ember.export.graph_signature.InputSpec...)
    import importlib
    for sub in ("dynamic_shapes", "exported_program", "graph_signature"):
        importlib.import_module(f"{__name__}.{sub}")


_import_torch_paths()
