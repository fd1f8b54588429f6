"""A corpus of hostile checkpoints: each is refused quickly and leaves the process unchanged.

Every payload is a hand-assembled pickle, tried as a plain pickle, inside torch's zip layout and
inside torch's legacy layout. The corpus: gadgets against every allow-listed name (BUILD,
SETITEM, APPEND on the global itself, NEWOBJ/REDUCE with hostile arguments), memo bombs (tuples
and lists of shared halves, 2**40 elements from a few hundred bytes, hashed, passed to
constructors or returned), attribute overwrites, recursive and deeply nested structures, and
code-execution globals. After the corpus, sentinels check that nothing in the process changed:
``Size``, ``collections.Counter``/``OrderedDict``, dtypes, devices and ``ember.Tensor``'s
methods.
"""
from __future__ import annotations

import collections
import io
import pickle
import struct
import time
import tracemalloc
import zipfile

import pytest

import ember
from ember import serialization as S
from ember.serialization import _allowlist

pytestmark = pytest.mark.timeout(120)

MAGIC = 0x1950A86A20F9469CFC6C
PROTO = b"\x80\x02"


# ---------------------------------------------------------------------------------------------
# assembling pickles by hand


def glob(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def text(s: str) -> bytes:
    raw = s.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def num(n: int) -> bytes:
    return b"J" + struct.pack("<i", n)


def put(i: int) -> bytes:
    return b"r" + struct.pack("<I", i)


def get(i: int) -> bytes:
    return b"j" + struct.pack("<I", i)


def wrap_zip(payload: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", payload)
        zf.writestr("archive/byteorder", "little")
        zf.writestr("archive/version", "3\n")
    return buf.getvalue()


def wrap_legacy(payload: bytes) -> bytes:
    sys_info = {"protocol_version": 1001, "little_endian": True,
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    head = b"".join(pickle.dumps(x, protocol=2) for x in (MAGIC, 1001, sys_info))
    return head + payload + pickle.dumps([], protocol=2)


WRAPPERS = {"plain": lambda p: p, "zip": wrap_zip, "legacy": wrap_legacy}


# ---------------------------------------------------------------------------------------------
# the corpus


def _gadgets():
    """(name, payload, must_refuse) against every allow-listed global."""
    out = []
    for module, name in sorted(_allowlist.names()):
        g = glob(module, name)
        tag = f"{module}.{name}"
        out += [
            (f"build-attr:{tag}", PROTO + g + b"}" + text("x") + num(1) + b"sb.", True),
            (f"build-dunder:{tag}", PROTO + g + b"}" + text("__getitem__") + num(0) + b"sb.",
             True),
            (f"build-slots:{tag}", PROTO + g + b"N}" + text("__len__") + num(0) + b"s\x86b.",
             True),
            (f"setitem:{tag}", PROTO + g + text("k") + num(1) + b"s.", True),
            (f"append:{tag}", PROTO + g + num(1) + b"a.", True),
            (f"newobj-size:{tag}", PROTO + g + num(1 << 30) + b"\x85\x81.", False),
            (f"reduce-size:{tag}", PROTO + g + num(1 << 30) + num(1 << 30) + b"\x86R.", False),
            (f"reduce-text:{tag}", PROTO + g + text("os.system") + b"\x85R.", False),
        ]
    return out


def _doubling_tuple(levels: int) -> bytes:
    # t0 = ("a",); t_i = (t_{i-1}, t_{i-1}): 2**levels leaves in a few bytes per level
    body = PROTO + text("a") + b"\x85" + put(0) + b"0"
    for i in range(1, levels + 1):
        body += get(i - 1) + get(i - 1) + b"\x86" + put(i) + b"0"  # memo only: stack empty
    return body


def _doubling_list(levels: int) -> bytes:
    body = PROTO + b"]" + put(0) + text("a") + b"a0"
    for i in range(1, levels + 1):
        body += b"]" + put(i) + get(i - 1) + b"a" + get(i - 1) + b"a0"
    return body


def _nested_lists(depth: int) -> bytes:
    body = PROTO + b"]" + put(0) + b"0"
    for i in range(1, depth + 1):
        body += b"]" + put(i) + get(i - 1) + b"a0"
    return body + get(depth)


def _bombs():
    t40, l40 = _doubling_tuple(40), _doubling_list(40)
    last = get(40)
    return [
        ("hash-bomb-dict-key", t40 + b"}" + last + num(1) + b"s.", True),
        ("hash-bomb-set", t40 + glob("builtins", "set") + last + b"\x85\x85R.", True),
        ("hash-bomb-empty-set", t40 + b"\x8f(" + last + b"\x90.", True),
        ("hash-bomb-frozenset", t40 + b"(" + last + b"\x91.", True),
        ("hash-bomb-counter", t40 + glob("collections", "Counter") + b"}" + last + num(1)
         + b"s\x85R.", True),
        ("hash-bomb-odict", t40 + glob("collections", "OrderedDict") + b"]" + last + num(1)
         + b"\x86a\x85R.", True),
        ("str-of-memo-bomb", l40 + glob("builtins", "str") + last + b"\x85R.", True),
        ("returned-tuple-bomb", t40 + last + b".", True),
        ("returned-list-bomb", l40 + last + b".", True),
        ("bomb-into-size", t40 + glob("torch", "Size") + last + b"\x85R.", True),
        ("bomb-into-device", l40 + glob("torch", "device") + last + b"\x85R.", True),
        ("bomb-into-bytearray", l40 + glob("builtins", "bytearray") + last + b"\x85R.", True),
        ("bomb-in-persistent-id", t40 + last + b"Q.", True),
        ("bytearray-allocation", PROTO + glob("builtins", "bytearray") + num(1 << 30)
         + b"\x85R.", True),
        ("long-allocation", PROTO + b"\x8b" + struct.pack("<i", 1 << 30) + b".", True),
    ]


def _structures():
    odict = glob("collections", "OrderedDict") + b")R" + put(0)
    return [
        ("list-contains-itself", PROTO + b"]" + put(0) + get(0) + b"a.", True),
        ("dict-contains-itself", PROTO + b"}" + put(0) + text("k") + get(0) + b"s.", True),
        ("odict-metadata-is-itself", PROTO + odict + b"}" + text("_metadata") + get(0)
         + b"sb.", True),
        ("nested-lists-5000", _nested_lists(5000) + b".", True),
        ("nested-tuples-100000", PROTO + b"N" + b"\x85" * 100_000 + b".", True),
        ("nested-marks", PROTO + b"(" * 5000 + b"N.", True),
        ("odict-set-class", PROTO + odict + b"}" + text("__class__") + glob("collections",
                                                                             "Counter")
         + b"sb.", True),
        ("odict-shadow-method", PROTO + odict + b"}" + text("keys") + num(0) + b"sb.", True),
        ("odict-set-dict", PROTO + odict + b"}" + text("__dict__") + b"}sb.", True),
        ("device-build", PROTO + glob("torch", "device") + text("cpu") + b"\x85R}"
         + text("type") + text("cuda") + b"sb.", True),
        ("size-build", PROTO + glob("torch", "Size") + num(3) + b"\x85\x85R}" + text("x")
         + num(1) + b"sb.", True),
        ("set-appends", PROTO + glob("builtins", "set") + b"]\x85R(" + num(1) + b"e.", True),
        ("ext-registry", PROTO + b"\x82\x01.", True),
        ("inst-opcode", b"(i" + b"os\nsystem\n" + b".", True),
        ("obj-opcode", PROTO + b"(" + glob("os", "system") + text("true") + b"o.", True),
        ("out-of-band-buffer", b"\x80\x05\x97.", True),
        ("stack-global-system", b"\x80\x04" + text("os") + text("system") + b"\x93"
         + text("true") + b"\x85R.", True),
        ("builtins-eval", PROTO + glob("builtins", "eval") + text("1") + b"\x85R.", True),
        ("builtins-getattr", PROTO + glob("builtins", "getattr") + glob("torch", "Size")
         + text("__len__") + b"\x86R.", True),
        ("copyreg-reconstructor", PROTO + glob("copy_reg", "_reconstructor") + glob(
            "collections", "Counter") + glob("builtins", "dict") + b"N\x87R.", True),
        ("rebuild-from-type-setattr", PROTO + glob("torch._tensor", "_rebuild_from_type_v2")
         + glob("torch._utils", "_rebuild_parameter") + glob("torch", "Tensor") + b")}"
         + text("shape") + num(0) + b"s\x87R.", True),
        ("trailing-bytes", PROTO + num(1) + b"." + b"garbage", True),
        ("unknown-magic-then-data", PROTO + b"\x8a\x01\x07." + PROTO + b"N.", True),
    ]


CORPUS = _gadgets() + _bombs() + _structures()


def _sentinels():
    return {
        "size": (ember.zeros(5, 7).shape[0], len(ember.Size([1, 2, 3])), ember.Size([2])[0]),
        "counter": collections.Counter("aab")["a"],
        "odict": list(collections.OrderedDict(a=1).keys()),
        "dtype": (ember.float32.itemsize, ember.int64.is_floating_point, repr(ember.float16)),
        "device": str(ember.device("cpu")),
        "tensor": {k: id(v) for k, v in vars(ember.Tensor).items()},
        "param": {k: id(v) for k, v in vars(ember.nn.Parameter).items()},
        "counter_cls": {k: id(v) for k, v in vars(collections.Counter).items()},
        "size_cls": {k: id(v) for k, v in vars(ember.Size).items()},
        "sum": ember.ones(3).sum().item(),
    }


@pytest.fixture(scope="module")
def sentinels():
    before = _sentinels()
    yield before
    assert _sentinels() == before, "a hostile file changed the process"


_DATA_TYPES = (type(None), bool, int, float, complex, str, bytes, bytearray, tuple, list, dict,
               set, collections.OrderedDict, collections.Counter, ember.Size, ember.device,
               ember.dtype)


def _try(name, payload, must_refuse, wrapper):
    """Load one hostile file: refused (or, where allowed, plain data), fast, small."""
    data = WRAPPERS[wrapper](payload)
    # CPU time of this process: the work the file caused, whatever else the machine runs
    start = time.process_time()
    try:
        out = ember.load(io.BytesIO(data))
    except S.SerializationError:
        pass
    else:
        assert not must_refuse, f"{name} ({wrapper}) loaded as {type(out).__name__}"
        assert type(out) in _DATA_TYPES, f"{name} ({wrapper}) built a {type(out).__name__}"
    elapsed = time.process_time() - start
    assert elapsed < 1.0, f"{name} ({wrapper}) took {elapsed:.2f} s of CPU time"


@pytest.fixture
def no_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield
    assert list(tmp_path.iterdir()) == [], "loading created files"


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_gadgets_against_every_allowed_name_are_refused(wrapper, sentinels, no_files):
    for name, payload, must_refuse in _gadgets():
        _try(name, payload, must_refuse, wrapper)


BOUNDED = _bombs() + _structures()


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("name,payload,must_refuse", BOUNDED, ids=[c[0] for c in BOUNDED])
def test_bombs_and_structures_are_refused_quickly(name, payload, must_refuse, wrapper,
                                                  sentinels, no_files):
    _try(name, payload, must_refuse, wrapper)
    tracemalloc.start()
    try:
        with pytest.raises(S.SerializationError):
            ember.load(io.BytesIO(WRAPPERS[wrapper](payload)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < (64 << 20), f"{name} allocated {peak >> 20} MiB"


def test_corpus_covers_every_allowed_name():
    named = {c[0].split(":", 1)[1] for c in CORPUS if c[0].startswith("build-attr:")}
    assert named == {f"{m}.{n}" for m, n in _allowlist.names()}


def test_refusals_are_one_exception_type():
    for name, payload, must_refuse in CORPUS:
        if not must_refuse:
            continue
        with pytest.raises(Exception) as info:
            ember.load(io.BytesIO(payload))
        assert isinstance(info.value, S.SerializationError), (name, type(info.value))
        assert isinstance(info.value, RuntimeError) and isinstance(info.value,
                                                                   pickle.UnpicklingError)


def _tensor_pickle(stride: int, offset: int = 0) -> bytes:
    storage = (b"(" + text("storage") + glob("torch", "FloatStorage") + text("0") + text("cpu")
               + num(4) + b"tQ")
    return (PROTO + glob("torch._utils", "_rebuild_tensor_v2") + b"(" + storage + num(offset)
            + num(4) + b"\x85" + num(stride) + b"\x85" + b"\x89"
            + glob("collections", "OrderedDict") + b")R" + b"tR.")


def _torch_zip(pkl: bytes, data: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("model/data.pkl", pkl)
        zf.writestr("model/data/0", data)
    return buf.getvalue()


def test_negative_strides_are_refused():
    data = struct.pack("<4f", 0, 1, 2, 3)
    assert ember.load(io.BytesIO(_torch_zip(_tensor_pickle(1), data))).tolist() == [0, 1, 2, 3]
    with pytest.raises(S.SerializationError, match="negative"):
        ember.load(io.BytesIO(_torch_zip(_tensor_pickle(-1, offset=3), data)))
    with pytest.raises(S.SerializationError, match="reads elements up to"):
        ember.load(io.BytesIO(_torch_zip(_tensor_pickle(2), data)))


@pytest.mark.parametrize("name,reason", [
    ("hash-bomb-dict-key", "more work than its size allows"),
    ("hash-bomb-set", "more work than its size allows"),
    ("returned-tuple-bomb", "more work than its size allows"),
    ("returned-list-bomb", "expands to more than"),
    ("str-of-memo-bomb", "refused to load the global 'builtins.str'"),
    ("list-contains-itself", "contains itself"),
    ("odict-metadata-is-itself", "contains itself"),
    ("nested-lists-5000", "deeper than 200"),
    ("nested-tuples-100000", "deeper than 200"),
    ("odict-shadow-method", "sets attribute 'keys'"),
    ("build-dunder:torch.Size", "sets the state of"),
    ("setitem:torch.float32", "only dicts it built"),
    ("trailing-bytes", "more bytes"),
])
def test_refusals_say_which_bound(name, reason):
    payload = next(p for n, p, _ in CORPUS if n == name)
    with pytest.raises(S.SerializationError, match=reason):
        ember.load(io.BytesIO(payload))
