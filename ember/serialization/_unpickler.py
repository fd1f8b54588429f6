"""A pickle interpreter that builds only data: ember's ``weights_only=True`` loader.

NOTE [Restricted unpickler]
Python's ``pickle.Unpickler`` can only be restricted at ``find_class``: once a class is handed
out, BUILD sets attributes on whatever object is on the stack (including the class itself: a
200-byte file could make every ``ember.Size`` report a wrong length), APPEND/SETITEM call any
object's ``append``/``__setitem__``, and REDUCE calls the class. This interpreter runs the pickle
opcodes itself (protocols 0-5) and so decides each operation:

* GLOBAL resolves only through the allow-list (see NOTE [Allow-list]): a ``Ctor`` that REDUCE
  may call with data arguments, a ``ClassToken``, or a plain value such as a dtype.
* BUILD sets plain attributes only on an OrderedDict the file built (a state dict's
  ``_metadata``); APPEND/SETITEM/ADDITEMS work only on the list/dict/set types it built.
  NEWOBJ, BUILD and REDUCE reach real classes only for names the user added with
  ``add_safe_globals`` (their decision, with pickle's ordinary meaning).
* Work is bounded by the file's size: every opcode reads at least one byte, and everything
  whose cost is not constant per opcode is charged to ``budget`` (``1e6 + 64 * len(data)``):
  hashing a key (a tuple of shared tuples is exponentially larger than its pickle), the
  arguments handed to a constructor. When the result is complete, one pass over it refuses
  cycles, nesting deeper than ``MAX_DEPTH`` and a tree (shared parts counted each time they
  are reached) larger than the budget, since ``repr``, ``==`` or ``deepcopy`` would walk it.

Every failure raises ``SerializationError`` (refusals: its subclass ``UnpicklingError``).
"""
from __future__ import annotations

import _compat_pickle
import collections
import struct
from typing import Any

from ._allowlist import Ctor, resolve_missing
from ._errors import SerializationError, bad, refused
from ._opcodes import DISPATCH, DUMMY, describe, stop

MAX_DEPTH = 200          # container nesting of a loaded object (checkpoints nest < 10)
_MARK = object()
_DICTS = (dict, collections.OrderedDict, collections.Counter)
_CONTAINERS = (list, tuple, set, frozenset, dict, collections.OrderedDict, collections.Counter)


def work_budget(nbytes: int) -> int:
    return 1_000_000 + 64 * nbytes


class Unpickler:
    """Run one pickle from ``data[pos:]``; see NOTE [Restricted unpickler].

    ``names``: the allow-list, ``(module, name) -> object``. ``trusted``: the subset the user
    added (ordinary pickle semantics). ``persistent_load(pid)``: tensor storages.
    ``dry``: resolve unknown globals to a placeholder (used only to collect persistent ids).
    """

    def __init__(self, data, *, names, trusted=None, persistent_load=None, encoding="ASCII",
                 errors="strict", dry=False, budget=None):
        self.data = bytes(data) if not isinstance(data, bytes) else data
        self.names, self.trusted = names, trusted or {}
        self._trusted_ids = {id(v) for v in self.trusted.values()}
        self._trusted_types = tuple(v for v in self.trusted.values() if isinstance(v, type))
        self.persistent_load = persistent_load
        self.encoding, self.errors, self.dry = encoding, errors, dry
        self.budget = work_budget(len(self.data)) if budget is None else budget
        self.work = 0
        self._weights: dict[int, tuple[Any, int, int]] = {}  # id -> (tuple, size, depth)

    # -- driver
    def load(self, pos: int = 0):
        """(object, end position) of the pickle starting at ``pos``."""
        self.pos, self.stack, self.metastack, self.memo = pos, [], [], {}
        data, dispatch = self.data, DISPATCH
        try:
            while True:
                if self.pos >= len(data):
                    raise bad(f"pickle data is truncated at byte {self.pos}")
                op = data[self.pos]
                self.pos += 1
                handler = dispatch.get(op)
                if handler is None:
                    raise bad(f"invalid pickle opcode {bytes([op])!r} at byte {self.pos - 1}")
                if handler is stop:
                    result = self._pop()
                    if self.stack or self.metastack:
                        raise bad("pickle data leaves values on its stack")
                    break
                handler(self)
        except SerializationError:
            raise
        except RecursionError:
            raise bad("pickle data is nested too deeply") from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError,
                UnicodeError, struct.error, MemoryError) as e:
            detail = "" if isinstance(e, KeyError) else f": {str(e)[:120]}"  # no key reprs
            raise bad(f"malformed pickle data near byte {self.pos} ({type(e).__name__}"
                      f"{detail})") from None
        check_tree(result, self.budget)
        return result, self.pos

    # -- reading
    def _read(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise bad(f"pickle data is truncated at byte {self.pos} (needs {n} more bytes)")
        chunk = self.data[self.pos:end]
        self.pos = end
        return chunk

    def _readline(self) -> bytes:
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise bad(f"pickle data is truncated at byte {self.pos} (no end of line)")
        line = self.data[self.pos:end]
        self.pos = end + 1
        return line

    def _unpack(self, fmt: str, n: int) -> int:
        return struct.unpack(fmt, self._read(n))[0]

    # -- stack
    def _pop(self):
        if not self.stack:
            raise bad(f"pickle stack underflow at byte {self.pos}")
        return self.stack.pop()

    def _pop_mark(self) -> list:
        if not self.metastack:
            raise bad(f"pickle data has no MARK for the opcode at byte {self.pos - 1}")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _top(self):
        if not self.stack:
            raise bad(f"pickle stack underflow at byte {self.pos}")
        return self.stack[-1]

    # -- accounting (see NOTE [Restricted unpickler])
    def charge(self, n: int) -> None:
        self.work += n
        if self.work > self.budget:
            raise refused(f"the file asks for more work than its size allows (over "
                          f"{self.budget} steps for {len(self.data)} bytes of pickle data); "
                          "it is built to exhaust time or memory")

    def weight(self, obj) -> int:
        entry = self._weights.get(id(obj))
        return entry[1] if entry is not None and entry[0] is obj else 1

    def _depth(self, obj) -> int:
        entry = self._weights.get(id(obj))
        return entry[2] if entry is not None and entry[0] is obj else 0

    def track(self, obj, items):
        """Record the expanded size and nesting of a hashable container (tuple, frozenset):
        hashing or comparing it walks all of it, recursively in C."""
        w = 1 + sum(self.weight(x) for x in items)
        depth = 1 + max((self._depth(x) for x in items), default=0)
        if depth > MAX_DEPTH:
            raise refused(f"the file nests tuples deeper than {MAX_DEPTH} levels")
        if w > self.budget:
            self.charge(w)
        self._weights[id(obj)] = (obj, w, depth)
        return obj

    def make_tuple(self, items) -> tuple:
        t = tuple(items)
        self.charge(len(t))
        return self.track(t, t)

    def hashed(self, key):
        """Charge the cost of hashing ``key`` (tuples are not hash-cached)."""
        self.charge(self.weight(key))
        return key

    def args_cost(self, args) -> int:
        cost = 0
        for a in args:
            cost += self.weight(a)
            if type(a) in (list, set, frozenset):
                cost += sum(self.weight(x) for x in a)
            elif type(a) in _DICTS:
                cost += sum(self.weight(k) + 1 for k in a)
        return cost

    # -- globals and object construction
    def find_global(self, module: str, name: str):
        if (module, name) in _compat_pickle.NAME_MAPPING:  # protocol <= 2 spells Python 2 names
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        obj = self.names.get((module, name), self.trusted.get((module, name)))
        if obj is None:
            if self.dry:
                return DUMMY
            raise refused_global(module, name)
        return resolve_missing(obj)

    def call(self, func, args):
        if type(args) is not tuple:
            raise bad("REDUCE arguments are not a tuple")
        if isinstance(func, Ctor):
            self.charge(self.args_cost(args))
            return func.fn(*args)
        if id(func) in self._trusted_ids:
            return func(*args)
        if func is DUMMY:
            return DUMMY
        raise refused(f"the file calls {describe(func)}, which is not an allow-listed "
                      "data constructor")

    def newobj(self, cls, args, kwargs):
        if id(cls) in self._trusted_ids and isinstance(cls, type):
            return cls.__new__(cls, *args, **kwargs)
        if cls is DUMMY:
            return DUMMY
        if isinstance(cls, Ctor) and not kwargs:  # NEWOBJ on a container type: same as a call
            return self.call(cls, args)
        raise refused(f"the file creates an instance of {describe(cls)} with NEWOBJ, which "
                      "loading data never needs")

    def build(self, inst, state) -> None:
        if type(inst) is collections.OrderedDict:  # a state dict's _metadata
            from ._allowlist import apply_state
            apply_state(inst, state, trusted=False)
        elif self._trusted_types and type(inst) in self._trusted_types:
            _default_build(inst, state)
        elif inst is not DUMMY:
            raise refused(f"the file sets the state of {describe(inst)} (pickle BUILD); "
                          "weights_only=True allows that only on an OrderedDict the file "
                          "built and on classes added with add_safe_globals")

    def decode(self, raw: bytes):
        if self.encoding == "bytes":
            return raw
        return raw.decode(self.encoding, self.errors)


def refused_global(module: str, name: str):
    return refused(
        f"weights_only=True refused to load the global '{module}.{name}' named by the file's "
        "pickle data, since it could run arbitrary code. If you trust the file, allow it with "
        f"ember.serialization.add_safe_globals([{name}]) or `with "
        f"ember.serialization.safe_globals([{name}]): ...`, or load with weights_only=False "
        "(which can execute code from the file).")


def _default_build(inst, state) -> None:
    setstate = getattr(inst, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    slots = None
    if type(state) is tuple and len(state) == 2:
        state, slots = state
    if state:
        inst.__dict__.update(state)
    if slots:
        for k, v in slots.items():
            setattr(inst, k, v)


def check_tree(root, budget: int) -> None:
    """Refuse cycles, nesting deeper than MAX_DEPTH and trees larger than ``budget``.

    Iterative post-order walk; shared containers are visited once (their height and expanded
    size memoised), so the walk itself costs one step per container edge.
    """
    if type(root) not in _CONTAINERS:
        return
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    on_path: set[int] = set()
    keep = []  # keep visited objects alive so their ids stay unique
    stack = [(root, None)]
    while stack:
        obj, children = stack[-1]
        oid = id(obj)
        if children is None:
            if oid in size:
                stack.pop()
                continue
            on_path.add(oid)
            keep.append(obj)
            children = [c for c in _children(obj) if type(c) in _CONTAINERS]
            stack[-1] = (obj, children)
            if len(on_path) > MAX_DEPTH:
                raise refused(f"the loaded object nests containers deeper than {MAX_DEPTH} "
                              "levels")
            for c in children:
                if id(c) in on_path:
                    raise refused("the loaded object contains itself (a reference cycle); "
                                  "checkpoints are trees")
                if id(c) not in size:
                    stack.append((c, None))
            continue
        stack.pop()
        on_path.discard(oid)
        total = 1 + len(_children(obj)) + sum(size[id(c)] - 1 for c in children)
        size[oid] = total
        height[oid] = 1 + max((height[id(c)] for c in children), default=0)
        if total > budget:
            raise refused(f"the loaded object expands to more than {budget} elements "
                          "(shared parts counted each time they are reached)")
        if height[oid] > MAX_DEPTH:
            raise refused(f"the loaded object nests containers deeper than {MAX_DEPTH} levels")


def _children(obj) -> list:
    t = type(obj)
    if t in (list, tuple, set, frozenset):
        return list(obj)
    if t in _DICTS:
        out = list(obj.keys()) + list(obj.values())
        attrs = getattr(obj, "__dict__", None)
        if attrs:
            out.extend(attrs.values())
        return out
    return []
