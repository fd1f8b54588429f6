"""From a captured fx graph to an ``onnx.ModelProto``."""
from __future__ import annotations

import ember

from ._builder import Builder, T, np_dtype
from ._capture import capture
from ._functions import FUNCTIONS, METHODS, _Unsupported
from ._modules import MODULES


def _module_translation(m):
    for cls in type(m).__mro__:
        fn = MODULES.get(cls)
        if fn is not None:
            return fn
    return None


def _leaf_types() -> tuple:
    return tuple(MODULES)


def _merge(a, b):
    """Combine a node's described values from the two runs (None where a size differs)."""
    if isinstance(a, tuple) and len(a) == 3 and a[0] == "tensor":
        shape = tuple(x if b is not None and x == y else None
                      for x, y in zip(a[2], b[2], strict=True)) if b is not None else a[2]
        return ("tensor", a[1], shape)
    if isinstance(a, (tuple, list)):
        parts = [_merge(x, y) for x, y in zip(a, b, strict=True)]
        return type(a)(*parts) if hasattr(a, "_fields") else type(a)(parts)
    return a


def _has_tensor(v) -> bool:
    if isinstance(v, tuple) and len(v) == 3 and v[0] == "tensor":
        return True
    if isinstance(v, (tuple, list)):
        return any(_has_tensor(e) for e in v)
    if isinstance(v, dict):
        return any(_has_tensor(e) for e in v.values())
    return False


def _where(node) -> str:
    scope = node.meta.get("onnx_scope") or "the top-level forward"
    return f"in {scope}, at {node.meta.get('onnx_line', '?')}"


def _target_name(node) -> str:
    from ember.fx.node import _qualified_name
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    if node.op == "call_module":
        return type(node.graph.owning_module.get_submodule(node.target)).__name__
    return _qualified_name(node.target)


def _unsupported(node, detail: str = ""):
    from . import UnsupportedOperatorError
    extra = f" ({detail})" if detail else ""
    return UnsupportedOperatorError(
        f"ember.onnx.export: no ONNX translation for {_target_name(node)}{extra}; used by node "
        f"'{node.name}' {_where(node)}. Rewrite that part of the model with ops that have one, "
        "or keep it outside the exported module.")


def _dynamic_inputs(placeholders, input_names, dynamic_axes):
    """Positional index -> axes that vary, from torch-style ``dynamic_axes``."""
    out: dict[int, dict] = {}
    for i, _p in enumerate(placeholders):
        name = input_names[i]
        spec = dynamic_axes.get(name)
        if spec is None:
            continue
        if isinstance(spec, dict):
            out[i] = {int(k): str(v) for k, v in spec.items()}
        else:
            out[i] = {int(k): f"{name}_dynamic_axes_{k}" for k in spec}
    return out


def _value_info(onnx, name, dtype, shape, names: dict | None = None):
    dims = []
    for i, d in enumerate(shape):
        if names and i in names:
            dims.append(names[i])
        elif d is None:
            dims.append(f"{name}_dim_{i}")
        else:
            dims.append(int(d))
    elem = onnx.helper.np_dtype_to_tensor_dtype(np_dtype(dtype))
    return onnx.helper.make_tensor_value_info(name, elem, dims)


def build_model(model, args, kwargs, input_names, output_names, dynamic_axes, opset):
    try:
        import onnx
    except ImportError as e:
        raise ImportError("ember.onnx.export needs the 'onnx' package: pip install "
                          "'ember[onnx]' (or pip install onnx).") from e
    from ember.fx.proxy import TraceError

    try:
        gm, flat, values_a, values_b = _capture_with_names(model, args, kwargs, input_names,
                                                           dynamic_axes)
    except TraceError as e:
        from . import OnnxExporterError
        raise OnnxExporterError(f"ember.onnx.export: the model could not be traced: {e}") from e
    b = Builder(opset)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    names = list(input_names or [])
    names += [p.target for p in placeholders[len(names):]]
    dyn = _dynamic_inputs(placeholders, names, dynamic_axes)
    graph_inputs = []
    env: dict = {}
    for i, p in enumerate(placeholders):
        desc = _merge(values_a[p], values_b[p])
        if i < len(flat) and isinstance(flat[i], ember.Tensor):
            _, dtype, shape = desc
            shape = tuple(None if ax in dyn.get(i, {}) else d for ax, d in enumerate(shape))
            b.reserve(names[i])
            env[p] = T(names[i], np_dtype(dtype), shape)
            graph_inputs.append(_value_info(onnx, names[i], dtype, shape, dyn.get(i)))
        else:
            env[p] = flat[i] if i < len(flat) else (p.args[0] if p.args else None)
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            outputs = node.args[0]
            break
        env[node] = _emit(b, gm, node, env, values_a, values_b)
    flat_out = _flatten_outputs(outputs, env)
    out_names = list(output_names or [])
    if len(out_names) > len(flat_out):
        raise ValueError(f"ember.onnx.export: output_names has {len(out_names)} names; the "
                         f"model returns {len(flat_out)} tensors.")
    graph_outputs = []
    for i, (t, desc) in enumerate(flat_out):
        name = out_names[i] if i < len(out_names) else \
            ("output" if len(flat_out) == 1 else f"output_{i}")
        b.reserve(name)
        b.nodes.append(onnx.helper.make_node("Identity", [t.name], [name],
                                             name=b.fresh("n_output")))
        _, dtype, shape = desc
        spec = dynamic_axes.get(name)
        axis_names = ({int(k): str(v) for k, v in spec.items()} if isinstance(spec, dict)
                      else {int(k): f"{name}_dynamic_axes_{k}" for k in spec}) if spec else None
        graph_outputs.append(_value_info(onnx, name, dtype, shape, axis_names))
    graph = onnx.helper.make_graph(b.nodes, type(model).__name__, graph_inputs, graph_outputs,
                                   initializer=b.initializers)
    proto = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)],
                                   producer_name="ember", producer_version=ember.version.ember)
    proto.ir_version = min(proto.ir_version, 10)
    return proto


def _capture_with_names(model, args, kwargs, input_names, dynamic_axes):
    # dynamic axes are named per input name: map them to positions before tracing
    import inspect
    fn = model.forward if isinstance(model, ember.nn.Module) else model
    params = [p.name for p in inspect.signature(fn).parameters.values()]
    names = list(input_names or []) + params[len(input_names or []):]
    dynamic = {}
    for i, name in enumerate(names[:len(args) + len(kwargs)]):
        spec = dynamic_axes.get(name)
        if spec is not None:
            dynamic[i] = [int(k) for k in (spec.keys() if isinstance(spec, dict) else spec)]
    return capture(model, args, kwargs, _leaf_types(), dynamic)


def _flatten_outputs(out, env):
    from ember.fx.node import Node
    flat = []

    def visit(v):
        if isinstance(v, Node):
            visit_value(env[v], v.meta.get("onnx_desc"))
        elif isinstance(v, (tuple, list)):
            for e in v:
                visit(e)
        elif isinstance(v, dict):
            for e in v.values():
                visit(e)

    def visit_value(val, desc):
        if isinstance(val, T):
            flat.append((val, desc))
        elif isinstance(val, (tuple, list)):
            for e, d in zip(val, desc, strict=True):
                visit_value(e, d)
    visit(out)
    return flat


def _map(a, env):
    from ember.fx.node import map_arg
    return map_arg(a, lambda n: env[n])


def _emit(b: Builder, gm, node, env, values_a, values_b):
    desc_a = values_a[node]
    desc_b = values_b[node]
    if not _has_tensor(desc_a) and desc_a == desc_b and node.op != "get_attr":
        return desc_a            # a Python value that does not depend on dynamic sizes
    desc = _merge(desc_a, desc_b)
    node.meta["onnx_desc"] = desc
    if isinstance(desc, tuple) and len(desc) == 3 and desc[0] == "tensor":
        node.meta["onnx_dtype"] = np_dtype(desc[1])
    node.meta["onnx_value"] = desc
    args, kwargs = _map(node.args, env), _map(node.kwargs, env)
    try:
        if node.op == "get_attr":
            value = _fetch(gm, node.target)
            if isinstance(value, ember.Tensor):
                return b.param(value, node.target)
            return value
        if node.op == "call_module":
            m = gm.get_submodule(node.target)
            fn = _module_translation(m)
            if fn is None:
                raise _unsupported(node)
            result = fn(b, m, node.target, *args, **kwargs)
        elif node.op == "call_method":
            fn = METHODS.get(node.target)
            if fn is None:
                raise _unsupported(node)
            result = fn(b, node, args, kwargs)
        else:
            fn = FUNCTIONS.get(node.target)
            if fn is None:
                raise _unsupported(node)
            result = fn(b, node, args, kwargs)
    except _Unsupported:
        raise _unsupported(node, "this form of the call") from None
    if isinstance(result, T) and result.ragged is None and _ragged_input(args, kwargs):
        result.ragged = "all"
    result = _annotate(b, result, desc)
    if isinstance(result, T) and result.ragged is not None:
        node.meta["onnx_desc"] = ("tensor", desc[1], result.shape)
    return result


def _ragged_input(args, kwargs) -> bool:
    """Whether an argument's size depends on the data (see ``_functions._mask_select``)."""
    found = []

    def visit(v):
        if isinstance(v, T):
            found.append(v.ragged is not None)
        elif isinstance(v, (tuple, list)):
            for e in v:
                visit(e)
        elif isinstance(v, dict):
            for e in v.values():
                visit(e)
    visit(args)
    visit(kwargs)
    return any(found)


def _fetch(gm, target):
    obj = gm
    for atom in target.split("."):
        obj = getattr(obj, atom)
    return obj


def _annotate(b: Builder, result, desc):
    """Give translator outputs the dtype and shape the eager run produced."""
    if isinstance(result, T) and isinstance(desc, tuple) and len(desc) == 3 and \
            desc[0] == "tensor":
        dt = np_dtype(desc[1])
        if result.dtype != dt:
            result = b.cast(result, dt)
        result.shape = desc[2]
        if result.ragged == "all":  # computed from a data-dependent length: sizes unknown
            result.shape = (None,) * len(result.shape)
        elif result.ragged is not None:  # its length is the eager run's, not a fixed size
            result.shape = tuple(None if i == result.ragged else d
                                 for i, d in enumerate(result.shape))
        return result
    if isinstance(result, (tuple, list)) and isinstance(desc, (tuple, list)) and \
            len(result) == len(desc):
        return type(result)(_annotate(b, r, d) for r, d in zip(result, desc, strict=True))
    return result


