"""``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>``: the values a built-in op saved
for backward, under the names torch gives them (for inspection and debugging, as in the
saved-tensors-hooks tutorial).

torch names a saved value after the argument of the op's schema it came from (``self`` for the
first input, ``other``, ``exponent``, ``mat2``...) or ``result`` for the op's output; non-tensor
values the backward needs (``alpha``, ``dim``) carry their own names. ember's ops save through
``ctx.save_for_backward`` and keep plain attributes on ctx, so the names here are found, not
declared per op:

- a saved input is named after its position in the forward's parameters: position 0 is
  ``self``; a later position takes the forward's parameter name, with the generic array names
  (``b``, ``y``...) read as torch's ``other``; ``_SCHEMA_NAMES`` corrects the few ops whose
  schema uses another word (pow's ``exponent``, mm's ``mat2``);
- a saved output is ``result`` (``result0``, ``result1``... when the op has several outputs);
- a non-tensor argument saved as it was (a scalar exponent) comes back as a Python number;
- a public attribute the forward set on ctx (``ctx.alpha``) is ``_saved_alpha``.

Only built-in ops' nodes have these: a custom Function's ctx has the user's own attributes.
Nothing here runs unless such an attribute is asked for (Node.__getattr__ calls in on a miss).
"""
from __future__ import annotations

import inspect

import numpy as np

# forward parameter names that mean "an array argument" rather than a schema name
_ARRAY_NAMES = frozenset({"a", "b", "c", "x", "y", "z", "u", "v", "arr", "other", "input",
                          "self", "t", "x1", "x2", "lhs", "rhs"})

# ops whose schema names its inputs other than self/other (by Op class name)
_SCHEMA_NAMES = {
    "Pow": ("self", "exponent"),
    "Mm": ("self", "mat2"),
    "Bmm": ("self", "mat2"),
    "Addmm": ("self", "mat1", "mat2"),
    "Where": ("condition", "self", "other"),
    "Linear": ("input", "weight", "bias"),
    "Conv2d": ("input", "weight", "bias"),
    "ConvTranspose2d": ("input", "weight", "bias"),
    "Embedding": ("weight", "indices"),
}

# ctx attributes that hold what torch saves under a schema name (ctx name -> torch name); other
# ctx attributes are ember's own bookkeeping (shapes, kernels, packed layouts) and stay hidden
_CTX_NAMES = {
    "alpha": "alpha", "beta": "beta", "dim": "dim", "dims": "dim", "keepdim": "keepdim",
    "eps": "eps", "p": "p", "reduction": "reduction", "approximate": "approximate",
    "upper": "upper", "scale": "scale", "dtype": "dtype", "mode": "mode",
    "is_causal": "is_causal", "negative_slope": "negative_slope", "threshold": "threshold",
    "min": "min", "max": "max", "padding_idx": "padding_idx", "ignore_index": "ignore_index",
    "label_smoothing": "label_smoothing", "stride": "stride", "padding": "padding",
    "dilation": "dilation", "groups": "groups", "rounding_mode": "rounding_mode",
    "shape": "self_sym_sizes", "idx": "indices",
}

_PREFIX = "_saved_"
_RAW_PREFIX = "_raw_saved_"


def _input_names(op):
    names = _SCHEMA_NAMES.get(op.__name__)
    if names is not None:
        return names
    cached = op.__dict__.get("_saved_input_names")
    if cached is not None:
        return cached
    try:
        params = list(inspect.signature(op.forward).parameters.values())[1:]  # after ctx
    except (TypeError, ValueError):
        params = []
    names = []
    for i, p in enumerate(params):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            break
        if i == 0:
            names.append("self")
        elif p.name in _ARRAY_NAMES:
            names.append("other" if "other" not in names else p.name)
        else:
            names.append(p.name)
    op._saved_input_names = tuple(names)
    return op._saved_input_names


def _entry_names(node):
    """[(name, index into node._saved)] for the node's saved values that have a name."""
    saved = node._saved
    if not isinstance(saved, list):
        return []
    # a node named after a torch op (MmBackward0 for a matmul of matrices) uses that op's schema
    inputs = _SCHEMA_NAMES.get(type(node).__name__[:-9]) or _input_names(node._op)
    n_out = node.num_outputs
    edges = node.next_functions
    used = set()
    out = []
    for k, s in enumerate(saved):
        if s is None:
            continue
        arg = s.arg
        if s.output_nr is not None:
            name = "result" if n_out == 1 else f"result{s.output_nr}"
        elif arg is not None:
            if arg in used:
                # the same tensor passed twice (x * x): its arrays are one object, so both
                # saves matched the first position; the later save is the next equal edge
                arg = next((j for j in range(arg + 1, len(edges))
                            if j not in used and edges[j] == edges[arg]), arg)
            used.add(arg)
            name = inputs[arg] if arg < len(inputs) else f"arg{arg}"
        else:
            continue  # an intermediate the forward computed: torch has no name for it
        if all(name != have for have, _ in out):
            out.append((name, k))
    return out


def _ctx_names(node):
    """{torch name: ctx attribute} for the node's saved non-tensor values."""
    have = vars(node)
    return {_CTX_NAMES[k]: k for k in have if k in _CTX_NAMES}


def saved_names(node):
    """The ``_saved_<name>`` attributes of a built-in op's node (for dir())."""
    if not _is_op_node(node):
        return []
    names = [_PREFIX + k for k in _ctx_names(node)]
    for name, _ in _entry_names(node):
        names += [_PREFIX + name, _RAW_PREFIX + name]
    return names


def _is_op_node(node):
    from .function import OpNode
    return isinstance(node, OpNode) and node._builtin and node._op is not None


def lookup(node, attr):
    """Value of ``node.<attr>`` for ``_saved_*`` / ``_raw_saved_*`` names; AttributeError when
    the node has no such saved value."""
    raw = attr.startswith(_RAW_PREFIX)
    name = attr[len(_RAW_PREFIX if raw else _PREFIX):]
    if _is_op_node(node):
        ctx = _ctx_names(node)
        if not raw and name in ctx:
            v = vars(node)[ctx[name]]
            if isinstance(v, np.ndarray):  # an index array kept by the forward (max's indices)
                from .._tensor import _make
                return _make(v)
            return v
        node._check_saved()  # freed by backward: torch's RuntimeError
        for have, k in _entry_names(node):
            if have == name:
                return SavedTensor(node, k) if raw else _value(node, k)
    raise AttributeError(f"'{node.name()}' object has no attribute '{attr}'")


def _value(node, k):
    s = node._saved[k]
    t = node._unpack(s)
    if s.arg is not None and s.vc is None and s.unpack_hook is None \
            and t.ndim == 0:
        # a Python number the op received and saved as it was: torch gives the number back
        return t.item()
    return t


class SavedTensor:
    """One saved value of a graph node (``grad_fn._raw_saved_<name>``): its hooks can be set
    once with ``register_hooks``."""

    def __init__(self, node, index):
        self._node, self._index = node, index

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack the saved value now with ``pack_hook(tensor)`` and keep only what it returns;
        ``unpack_hook(packed)`` rebuilds the tensor whenever the value is used."""
        node = self._node
        saved = node._check_saved()
        s = saved[self._index]
        if s.unpack_hook is not None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor whose hooks have already been set. "
                "Hint: only one pair of hooks is allowed at a time.")
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks: expected two callables (pack_hook, unpack_hook); "
                            f"got {type(pack_hook).__name__} and {type(unpack_hook).__name__}")
        from .function import pack_with
        saved[self._index] = pack_with(pack_hook, unpack_hook, node._unpack(s), s)

    def unpack(self):
        """The saved tensor (through its unpack hook, if one is set)."""
        return _value(self._node, self._index)

    @property
    def data(self):
        return self.unpack()

    def __repr__(self):
        return f"<SavedTensor of {self._node.name()}>"
