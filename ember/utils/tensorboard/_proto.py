"""A minimal protocol-buffer wire encoder for the TensorBoard event messages ember writes.

Only encoding is needed. Each message is a function returning its serialized bytes; field
numbers follow TensorFlow's event.proto / summary.proto / tensor.proto and TensorBoard's
hparams plugin protos. Wire format: each field is a varint key ``field << 3 | wire_type``
followed by a varint (type 0), 8 little-endian bytes (type 1), a varint length and bytes
(type 2), or 4 little-endian bytes (type 5). Scalar proto3 fields at their default are omitted,
except inside a oneof, where being set is itself information.
"""
from __future__ import annotations

import struct

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


def varint(n):
    """Base-128 varint; negative int64 values use their 64-bit two's complement (10 bytes)."""
    n = int(n)
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _key(field, wire_type):
    return varint(field << 3 | wire_type)


def f_varint(field, n, *, always=False):
    return _key(field, _VARINT) + varint(n) if (n or always) else b""


def f_double(field, x, *, always=False):
    return _key(field, _I64) + struct.pack("<d", float(x)) if (x or always) else b""


def f_float(field, x, *, always=False):
    return _key(field, _I32) + struct.pack("<f", float(x)) if (x or always) else b""


def f_bytes(field, data, *, always=False):
    """A string (str is UTF-8 encoded), bytes, or an embedded message's serialization."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _key(field, _LEN) + varint(len(data)) + data if (data or always) else b""


def f_packed_doubles(field, xs):
    xs = list(xs)
    if not xs:
        return b""
    return f_bytes(field, struct.pack(f"<{len(xs)}d", *xs))


# ------------------------------------------------------------------- event.proto / summary.proto
# Event: wall_time=1 (double), step=2 (int64), oneof what { file_version=3, summary=5,
#        session_log=7 }
def event(wall_time, step=0, *, file_version=None, summary=None, session_log=None):
    out = f_double(1, wall_time, always=True) + f_varint(2, step)
    if file_version is not None:
        out += f_bytes(3, file_version, always=True)
    if summary is not None:
        out += f_bytes(5, summary, always=True)
    if session_log is not None:
        out += f_bytes(7, session_log, always=True)
    return out


SESSION_START = 1


def session_log(status, msg=""):
    """SessionLog: status=1 (enum; START=1), msg=3."""
    return f_varint(1, status) + f_bytes(3, msg)


def summary(*values):
    """Summary: repeated Value value=1."""
    return b"".join(f_bytes(1, v, always=True) for v in values)


def summary_value(tag, *, metadata=None, simple_value=None, image=None, histo=None,
                  tensor=None):
    """Summary.Value: tag=1, metadata=9, oneof value { simple_value=2 (float), image=4,
    histo=5, tensor=8 }."""
    out = f_bytes(1, tag)
    if metadata is not None:
        out += f_bytes(9, metadata, always=True)
    if simple_value is not None:
        out += f_float(2, simple_value, always=True)
    if image is not None:
        out += f_bytes(4, image, always=True)
    if histo is not None:
        out += f_bytes(5, histo, always=True)
    if tensor is not None:
        out += f_bytes(8, tensor, always=True)
    return out


def summary_metadata(plugin_name, content=b""):
    """SummaryMetadata: plugin_data=1 (PluginData: plugin_name=1, content=2)."""
    return f_bytes(1, f_bytes(1, plugin_name) + f_bytes(2, content), always=True)


def image(height, width, colorspace, encoded):
    """Summary.Image: height=1, width=2, colorspace=3, encoded_image_string=4."""
    return (f_varint(1, height) + f_varint(2, width) + f_varint(3, colorspace)
            + f_bytes(4, encoded))


def histogram(mn, mx, num, total, sum_squares, bucket_limit, bucket):
    """HistogramProto: min=1, max=2, num=3, sum=4, sum_squares=5 (doubles), bucket_limit=6,
    bucket=7 (packed repeated doubles)."""
    return (f_double(1, mn) + f_double(2, mx) + f_double(3, num) + f_double(4, total)
            + f_double(5, sum_squares) + f_packed_doubles(6, bucket_limit)
            + f_packed_doubles(7, bucket))


DT_FLOAT, DT_DOUBLE, DT_STRING = 1, 2, 7


def tensor_proto(dtype, shape=(), *, float_val=None, double_val=None, string_val=None):
    """TensorProto: dtype=1, tensor_shape=2 (TensorShapeProto: repeated Dim dim=2, Dim:
    size=1), float_val=5, double_val=6 (packed), string_val=8 (repeated bytes)."""
    dims = b"".join(f_bytes(2, f_varint(1, n, always=True), always=True) for n in shape)
    out = f_varint(1, dtype) + f_bytes(2, dims)  # a 0-d shape is the empty message
    if float_val is not None:
        out += f_bytes(5, struct.pack(f"<{len(float_val)}f", *float_val))
    if double_val is not None:
        out += f_bytes(6, struct.pack(f"<{len(double_val)}d", *double_val))
    if string_val is not None:
        out += b"".join(f_bytes(8, s, always=True) for s in string_val)
    return out


# ------------------------------------------------------------ TensorBoard hparams plugin protos
# google.protobuf.Value: oneof kind { number_value=2, string_value=3, bool_value=4 };
# ListValue: repeated Value values=1
def pb_value(v):
    if isinstance(v, bool):
        return f_varint(4, int(v), always=True)
    if isinstance(v, str):
        return f_bytes(3, v, always=True)
    return f_double(2, v, always=True)


def pb_list_value(vs):
    return b"".join(f_bytes(1, pb_value(v), always=True) for v in vs)


HP_STRING, HP_BOOL, HP_FLOAT64 = 1, 2, 3


def hparam_info(name, dtype, domain_discrete=None):
    """HParamInfo: name=1, type=4, domain_discrete=5 (ListValue)."""
    out = f_bytes(1, name) + f_varint(4, dtype)
    if domain_discrete is not None:
        out += f_bytes(5, pb_list_value(domain_discrete), always=True)
    return out


def metric_info(tag):
    """MetricInfo: name=1 (MetricName: group=1, tag=2)."""
    return f_bytes(1, f_bytes(2, tag), always=True)


def hparams_plugin_data(*, experiment=None, session_start_info=None, session_end_info=None):
    """HParamsPluginData: version=1 (0: omitted), oneof data { experiment=2,
    session_start_info=3, session_end_info=4 }."""
    if experiment is not None:
        return f_bytes(2, experiment, always=True)
    if session_start_info is not None:
        return f_bytes(3, session_start_info, always=True)
    return f_bytes(4, session_end_info, always=True)


def experiment(hparam_infos, metric_infos):
    """Experiment: hparam_infos=4, metric_infos=5."""
    return (b"".join(f_bytes(4, h, always=True) for h in hparam_infos)
            + b"".join(f_bytes(5, m, always=True) for m in metric_infos))


def session_start_info(hparams):
    """SessionStartInfo: hparams=1, a map<string, Value> (repeated entries key=1, value=2)."""
    return b"".join(f_bytes(1, f_bytes(1, k) + f_bytes(2, pb_value(v), always=True),
                            always=True) for k, v in hparams.items())


STATUS_SUCCESS = 1


def session_end_info(status):
    """SessionEndInfo: status=1."""
    return f_varint(1, status)
