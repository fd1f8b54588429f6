"""The pickle opcodes (protocols 0-5) as run by ``_unpickler.Unpickler``.

Each handler takes the running unpickler ``u``; see NOTE [Restricted unpickler] for what is
allowed. Handlers never call an object's own methods (``append``, ``__setitem__``,
``__setstate__``) except on the container types the file built itself.
"""
from __future__ import annotations

import codecs
import collections
import struct

from ._allowlist import ClassToken, Ctor
from ._errors import bad, refused

_DICTS = (dict, collections.OrderedDict, collections.Counter)


class Dummy:
    """Stands for every global in a dry run (the first pass over a legacy file's pickle)."""

    def __repr__(self):
        return "<dry-run object>"


DUMMY = Dummy()


def describe(obj) -> str:
    if isinstance(obj, (Ctor, ClassToken)):
        return repr(obj)
    if isinstance(obj, type):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    return f"a {type(obj).__module__}.{type(obj).__qualname__} object"


def stop(u):  # handled in Unpickler.load()
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
    if target is DUMMY:  # a dry run does not build objects outside the allow-list
        return
    if type(target) is not list:
        raise refused(f"the file appends to {describe(target)}; only lists it built accept "
                      "APPEND")
    target.append(value)


def _appends(u):
    items = u._pop_mark()
    target = u._top()
    if target is DUMMY:
        return
    if type(target) is not list:
        raise refused(f"the file appends to {describe(target)}; only lists it built accept "
                      "APPENDS")
    target.extend(items)


def _setitem(u):
    value, key = u._pop(), u._pop()
    _set_items(u, [key, value])


def _setitems(u):
    _set_items(u, u._pop_mark())


def _set_items(u, items):
    target = u._top()
    if target is DUMMY:
        return
    if type(target) not in _DICTS:
        raise refused(f"the file sets items on {describe(target)}; only dicts it built "
                      "accept SETITEM")
    if len(items) % 2:
        raise bad("SETITEMS needs key/value pairs")
    for i in range(0, len(items), 2):
        target[u.hashed(items[i])] = items[i + 1]


def _additems(u):
    items = u._pop_mark()
    target = u._top()
    if target is DUMMY:
        return
    if type(target) is not set:
        raise refused(f"the file adds items to {describe(target)}; only sets it built accept "
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


DISPATCH = {
    ord("("): _mark,
    ord("."): stop,
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

