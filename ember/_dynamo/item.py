"""``Tensor.item()`` inside a compiled function: a value the step returns, or a graph break.

NOTE [item() as an output]
A training step often ends with ``return loss.item()``. The number is read from a value the graph
computes, so a replay that returned the number seen at capture would be wrong; but the step's
tensor work does not depend on it. While a capture runs, ``item()`` of such a value returns an
``ItemFloat`` (or ``ItemInt``): the same number, as a subclass of ``float`` (``int``) that
remembers which value it was read from. If the function only returns it (alone or inside
tuples, lists, dicts), the replay reads the number again from the replayed value, after the
step. Any other use by Python -- arithmetic, a comparison, ``if``, formatting or printing,
hashing, passing it to an op or to ``scheduler.step(metric)`` -- goes through one of the
overridden special methods, which records a graph break (the call then runs eagerly, or raises
under ``fullgraph=True``). C code that reads a float's value directly (``math.isfinite``,
NumPy, ``ember.tensor(x)``) is not seen: such a read is specialised to the captured number
(docs/DEVIATIONS.md).
"""
from __future__ import annotations

import threading

_READS = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__divmod__",
    "__rdivmod__", "__pow__", "__rpow__", "__neg__", "__pos__", "__abs__", "__eq__", "__ne__",
    "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__int__", "__float__", "__index__",
    "__round__", "__trunc__", "__floor__", "__ceil__", "__format__", "__str__", "__repr__",
    "__hash__", "__getnewargs__", "__and__", "__rand__", "__or__", "__ror__", "__xor__",
    "__rxor__", "__lshift__", "__rlshift__", "__rshift__", "__rrshift__", "__invert__",
    "is_integer", "as_integer_ratio", "hex", "conjugate", "bit_length", "to_bytes",
)


def _touch(v, what):
    """A use of v by Python: a graph break while v's capture runs (once per value)."""
    rec = v.__dict__.get("_rec")
    if rec is None or rec.depth or threading.get_ident() != rec.tid:
        return
    from .capture import current_recorder
    if current_recorder() is not rec:
        return
    v.__dict__["_rec"] = None
    # the graph splits where the number was read (NOTE [Graph breaks that split])
    rec.split(f"data-dependent Python: the number Tensor.item() returned is used by Python "
              f"({what}); returning it from the compiled function keeps the call in one graph "
              "(it is then read after the replay)", (v.__dict__["_slot"],), *read_point(v))


def _reader(base, name):
    orig = getattr(base, name)

    def read(self, *args):
        _touch(self, f"{name.strip('_')}")
        return orig(self, *args)

    read.__name__ = name
    return read


def _make_class(base):
    ns = {name: _reader(base, name) for name in _READS if hasattr(base, name)}
    ns["__doc__"] = (f"A {base.__name__} read by Tensor.item() while a capture runs "
                     "(NOTE [item() as an output]).")
    return type(f"Item{base.__name__.capitalize()}", (base,), ns)


ItemFloat = _make_class(float)
ItemInt = _make_class(int)


def wrap(value, rec, slot):
    """value as an ItemFloat/ItemInt tied to ``slot`` of ``rec``; None for other types."""
    if type(value) is float:
        out = ItemFloat(value)
    elif type(value) is int:
        out = ItemInt(value)
    else:
        return None
    out.__dict__["_rec"] = out.__dict__["_owner"] = rec
    out.__dict__["_slot"] = slot
    out.__dict__["_point"] = (_capture_where(), len(rec.cap.fwd))
    rec.item_reads.append((len(rec.cap.fwd), out.__dict__["_point"][0], slot))
    rec.__dict__.setdefault("item_values", []).append(out)
    return out


def release(rec):
    """Detach rec's item values (one kept by the caller is then an ordinary number and does not
    hold the recorder alive)."""
    for v in rec.__dict__.pop("item_values", ()):
        v.__dict__.clear()


def _capture_where():
    from .capture import _where
    return _where()


def read_point(value):
    """(where, position in the recorded forward) of the item() call that returned value."""
    return value.__dict__.get("_point", (None, None))


def slot_of(value, rec):
    """The slot an item value of ``rec`` was read from, else None."""
    if isinstance(value, (ItemFloat, ItemInt)) and value.__dict__.get("_owner") is rec:
        return value.__dict__["_slot"]
    return None


def plain(value):
    """A plain float/int for an item value (what leaves the capture), else value."""
    if isinstance(value, ItemFloat):
        return float.__float__(value)
    if isinstance(value, ItemInt):
        return int.__int__(value)
    return value
