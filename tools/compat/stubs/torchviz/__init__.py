"""Offline stand-in for torchviz (not installed here; it needs graphviz): make_dot walks the
autograd graph from the given outputs through grad_fn.next_functions, as the real one does, and
returns a Digraph-like object whose `source` lists the nodes and edges in DOT text. Only the
torch API is used, so the walk itself is a check of the implementation's graph objects."""


class Digraph:
    def __init__(self):
        self.body = []

    def node(self, name, label):
        self.body.append(f'\t{name} [label="{label}"]')

    def edge(self, tail, head):
        self.body.append(f"\t{tail} -> {head}")

    @property
    def source(self):
        return "digraph {\n" + "\n".join(self.body) + "\n}\n"

    def render(self, *args, **kwargs):
        return None

    def _repr_svg_(self):
        return self.source


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50):
    names = {id(v): k for k, v in (params or {}).items()}
    dot, seen = Digraph(), set()

    def shape(t):
        return "(" + ", ".join(str(s) for s in t.shape) + ")"

    def visit(fn):
        if fn is None or id(fn) in seen:
            return
        seen.add(id(fn))
        variable = getattr(fn, "variable", None)
        if variable is not None:   # AccumulateGrad: a leaf
            dot.node(str(id(fn)), f"{names.get(id(variable), '')}\n{shape(variable)}")
        else:
            dot.node(str(id(fn)), type(fn).__name__)
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                dot.edge(str(id(nxt)), str(id(fn)))
                visit(nxt)

    for v in var if isinstance(var, tuple) else (var,):
        dot.node(str(id(v)), f"{names.get(id(v), '')}\n{shape(v)}")
        if v.grad_fn is not None:
            dot.edge(str(id(v.grad_fn)), str(id(v)))
            visit(v.grad_fn)
    return dot
