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
import codecs
import collections
import struct
from typing import Any

from ._allowlist import ClassToken, Ctor, resolve_missing
from ._errors import SerializationError, bad, refused

MAX_DEPTH = 200          # container nesting of a loaded object (checkpoints nest < 10)
_MARK = object()
_DICTS = (dict, collections.OrderedDict, collections.Counter)
_CONTAINERS = (list, tuple, set, frozenset, dict, collections.OrderedDict, collections.Counter)


def work_budget(nbytes: int) -> int:
    return 1_000_000 + 64 * nbytes


class Dummy:
    """Stands for every global in a dry run (the first pass over a legacy file's pickle)."""

    def __repr__(self):
        return "<dry-run object>"


_DUMMY = Dummy()


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
        data, dispatch = self.data, _DISPATCH
        try:
            while True:
                if self.pos >= len(data):
                    raise bad(f"pickle data is truncated at byte {self.pos}")
                op = data[self.pos]
                self.pos += 1
                handler = dispatch.get(op)
                if handler is None:
                    raise bad(f"invalid pickle opcode {bytes([op])!r} at byte {self.pos - 1}")
                if handler is _stop:
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
                return _DUMMY
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
        if func is _DUMMY:
            return _DUMMY
        raise refused(f"the file calls {_describe(func)}, which is not an allow-listed "
                      "data constructor")

    def newobj(self, cls, args, kwargs):
        if id(cls) in self._trusted_ids and isinstance(cls, type):
            return cls.__new__(cls, *args, **kwargs)
        if cls is _DUMMY:
            return _DUMMY
        if isinstance(cls, Ctor) and not kwargs:  # NEWOBJ on a container type: same as a call
            return self.call(cls, args)
        raise refused(f"the file creates an instance of {_describe(cls)} with NEWOBJ, which "
                      "loading data never needs")

    def build(self, inst, state) -> None:
        if type(inst) is collections.OrderedDict:  # a state dict's _metadata
            from ._allowlist import apply_state
            apply_state(inst, state, trusted=False)
        elif self._trusted_types and type(inst) in self._trusted_types:
            _default_build(inst, state)
        elif inst is not _DUMMY:
            raise refused(f"the file sets the state of {_describe(inst)} (pickle BUILD); "
                          "weights_only=True allows that only on an OrderedDict the file "
                          "built and on classes added with add_safe_globals")

    def decode(self, raw: bytes):
        if self.encoding == "bytes":
            return raw
        return raw.decode(self.encoding, self.errors)


def _describe(obj) -> str:
    if isinstance(obj, (Ctor, ClassToken)):
        return repr(obj)
    if isinstance(obj, type):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    return f"a {type(obj).__module__}.{type(obj).__qualname__} object"


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


# ---------------------------------------------------------------------------------------------
# opcodes (the pickle format's, protocols 0-5)

def _stop(u):  # handled in load()
    raise AssertionError


def _proto(u):
    version = u._read(1)[0]
    if version > 5:
        raise bad(f"unsupported pickle protocol {version}")


def _frame(u):
    n = u._unpack("<Q", 8)
    if n > len(u.data) - u.pos:
        raise bad(f"pickle frame of {n} bytes runs past the end of the data")


def _persid(u):
    pid = u._readline().decode("ascii")
    u.stack.append(_load_persistent(u, pid))


def _binpersid(u):
    u.stack.append(_load_persistent(u, u._pop()))


def _load_persistent(u, pid):
    if u.persistent_load is None:
        raise bad("the pickle refers to tensor storage, but this file holds no storages "
                  "(a plain pickle is not a checkpoint archive)")
    u.charge(1)
    return u.persistent_load(pid)


def _int(u):
    line = u._readline()
    if line == b"00":
        u.stack.append(False)
    elif line == b"01":
        u.stack.append(True)
    else:
        u.stack.append(int(line))


def _long(u):
    line = u._readline()
    if line.endswith(b"L"):
        line = line[:-1]
    u.stack.append(int(line))


def _long4(u):
    n = u._unpack("<i", 4)
    if n < 0:
        raise bad("LONG4 with a negative length")
    u.stack.append(int.from_bytes(u._read(n), "little", signed=True))


def _string(u):
    raw = u._readline().rstrip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[:1] in (b'"', b"'"):
        raw = raw[1:-1]
    else:
        raise bad("the STRING opcode argument must be quoted")
    u.stack.append(u.decode(codecs.escape_decode(raw)[0]))


def _binstring(u):
    n = u._unpack("<i", 4)
    u.stack.append(u.decode(u._read(n)))


def _unicode(u):
    u.stack.append(str(u._readline(), "raw-unicode-escape"))


def _binunicode(u, fmt, size):
    n = u._unpack(fmt, size)
    u.stack.append(str(u._read(n), "utf-8", "surrogatepass"))


def _binbytes(u, fmt, size, cls=bytes):
    n = u._unpack(fmt, size)
    u.stack.append(cls(u._read(n)))


def _tuple_n(u, n):
    if len(u.stack) < n:
        raise bad(f"pickle stack underflow at byte {u.pos}")
    items = u.stack[len(u.stack) - n:] if n else []
    del u.stack[len(u.stack) - n:]
    u.stack.append(u.make_tuple(items))


def _tuple(u):
    items = u._pop_mark()  # before touching u.stack: popping the mark replaces it
    u.stack.append(u.make_tuple(items))


def _list(u):
    items = u._pop_mark()
    u.stack.append(items)


def _dict(u):
    items = u._pop_mark()
    if len(items) % 2:
        raise bad("DICT needs key/value pairs")
    d = {}
    for i in range(0, len(items), 2):
        d[u.hashed(items[i])] = items[i + 1]
    u.stack.append(d)


def _frozenset(u):
    items = u._pop_mark()
    for x in items:
        u.hashed(x)
    u.stack.append(u.track(frozenset(items), items))


def _append(u):
    value = u._pop()
    target = u._top()
    if type(target) is not list:
        raise refused(f"the file appends to {_describe(target)}; only lists it built accept "
                      "APPEND")
    target.append(value)


def _appends(u):
    items = u._pop_mark()
    target = u._top()
    if type(target) is not list:
        raise refused(f"the file appends to {_describe(target)}; only lists it built accept "
                      "APPENDS")
    target.extend(items)


def _setitem(u):
    value, key = u._pop(), u._pop()
    _set_items(u, [key, value])


def _setitems(u):
    _set_items(u, u._pop_mark())


def _set_items(u, items):
    target = u._top()
    if type(target) not in _DICTS:
        raise refused(f"the file sets items on {_describe(target)}; only dicts it built "
                      "accept SETITEM")
    if len(items) % 2:
        raise bad("SETITEMS needs key/value pairs")
    for i in range(0, len(items), 2):
        target[u.hashed(items[i])] = items[i + 1]


def _additems(u):
    items = u._pop_mark()
    target = u._top()
    if type(target) is not set:
        raise refused(f"the file adds items to {_describe(target)}; only sets it built accept "
                      "ADDITEMS")
    for x in items:
        target.add(u.hashed(x))


def _global(u):
    module = u._readline().decode("utf-8")
    name = u._readline().decode("utf-8")
    u.stack.append(u.find_global(module, name))


def _stack_global(u):
    name, module = u._pop(), u._pop()
    if type(name) is not str or type(module) is not str:
        raise bad("STACK_GLOBAL needs two strings")
    u.stack.append(u.find_global(module, name))


def _reduce(u):
    args = u._pop()
    func = u._pop()
    u.stack.append(u.call(func, args))


def _newobj(u):
    args = u._pop()
    cls = u._pop()
    if type(args) is not tuple:
        raise bad("NEWOBJ arguments are not a tuple")
    u.stack.append(u.newobj(cls, args, {}))


def _newobj_ex(u):
    kwargs, args, cls = u._pop(), u._pop(), u._pop()
    if type(args) is not tuple or type(kwargs) is not dict:
        raise bad("NEWOBJ_EX arguments are not a tuple and a dict")
    u.stack.append(u.newobj(cls, args, kwargs))


def _build(u):
    state = u._pop()
    u.build(u._top(), state)


def _refuse_op(what):
    def handler(u):
        raise refused(f"the pickle uses {what}, which loading data never needs")
    return handler


def _put(u, idx):
    if idx < 0:
        raise bad("negative memo index")
    u.memo[idx] = u._top()


def _get(u, idx):
    if idx not in u.memo:
        raise bad(f"pickle data refers to memo entry {idx}, which was never stored")
    u.stack.append(u.memo[idx])


def _mark(u):
    u.metastack.append(u.stack)
    u.stack = []


def _pop_op(u):
    if u.stack:
        u.stack.pop()
    else:
        u._pop_mark()


_DISPATCH = {
    ord("("): _mark,
    ord("."): _stop,
    ord("0"): _pop_op,
    ord("1"): lambda u: u._pop_mark(),
    ord("2"): lambda u: u.stack.append(u._top()),
    ord("F"): lambda u: u.stack.append(float(u._readline())),
    ord("I"): _int,
    ord("J"): lambda u: u.stack.append(u._unpack("<i", 4)),
    ord("K"): lambda u: u.stack.append(u._read(1)[0]),
    ord("L"): _long,
    ord("M"): lambda u: u.stack.append(u._unpack("<H", 2)),
    ord("N"): lambda u: u.stack.append(None),
    ord("P"): _persid,
    ord("Q"): _binpersid,
    ord("R"): _reduce,
    ord("S"): _string,
    ord("T"): _binstring,
    ord("U"): lambda u: u.stack.append(u.decode(u._read(u._read(1)[0]))),
    ord("V"): _unicode,
    ord("X"): lambda u: _binunicode(u, "<I", 4),
    ord("a"): _append,
    ord("b"): _build,
    ord("c"): _global,
    ord("d"): _dict,
    ord("}"): lambda u: u.stack.append({}),
    ord("e"): _appends,
    ord("g"): lambda u: _get(u, int(u._readline())),
    ord("h"): lambda u: _get(u, u._read(1)[0]),
    ord("i"): _refuse_op("INST (old-style object creation)"),
    ord("j"): lambda u: _get(u, u._unpack("<I", 4)),
    ord("l"): _list,
    ord("]"): lambda u: u.stack.append([]),
    ord("o"): _refuse_op("OBJ (old-style object creation)"),
    ord("p"): lambda u: _put(u, int(u._readline())),
    ord("q"): lambda u: _put(u, u._read(1)[0]),
    ord("r"): lambda u: _put(u, u._unpack("<I", 4)),
    ord("s"): _setitem,
    ord("t"): _tuple,
    ord(")"): lambda u: u.stack.append(()),
    ord("u"): _setitems,
    ord("G"): lambda u: u.stack.append(struct.unpack(">d", u._read(8))[0]),
    0x80: _proto,
    0x81: _newobj,
    0x82: _refuse_op("the extension registry (EXT1)"),
    0x83: _refuse_op("the extension registry (EXT2)"),
    0x84: _refuse_op("the extension registry (EXT4)"),
    0x85: lambda u: _tuple_n(u, 1),
    0x86: lambda u: _tuple_n(u, 2),
    0x87: lambda u: _tuple_n(u, 3),
    0x88: lambda u: u.stack.append(True),
    0x89: lambda u: u.stack.append(False),
    0x8A: lambda u: u.stack.append(int.from_bytes(u._read(u._read(1)[0]), "little",
                                                  signed=True)),
    0x8B: _long4,
    ord("B"): lambda u: _binbytes(u, "<I", 4),
    ord("C"): lambda u: _binbytes(u, "<B", 1),
    0x8C: lambda u: _binunicode(u, "<B", 1),
    0x8D: lambda u: _binunicode(u, "<Q", 8),
    0x8E: lambda u: _binbytes(u, "<Q", 8),
    0x8F: lambda u: u.stack.append(set()),
    0x90: _additems,
    0x91: _frozenset,
    0x92: _newobj_ex,
    0x93: _stack_global,
    0x94: lambda u: _put(u, len(u.memo)),
    0x95: _frame,
    0x96: lambda u: _binbytes(u, "<Q", 8, bytearray),
    0x97: _refuse_op("out-of-band buffers (NEXT_BUFFER)"),
    0x98: _refuse_op("out-of-band buffers (READONLY_BUFFER)"),
}

