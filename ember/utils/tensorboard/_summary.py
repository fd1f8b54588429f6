"""Builders of serialized ``Summary`` protos for each SummaryWriter.add_* method."""
from __future__ import annotations

import numpy as np

from . import _image
from . import _proto as P


def _scalar_value(value, what):
    arr = _image.to_numpy(value)
    if arr.size != 1:
        raise ValueError(f"{what}: scalar_value must be a number or a 1-element tensor; got "
                         f"shape {list(arr.shape)}")
    return arr.reshape(()).item()


def scalar(tag, value, new_style=False, double_precision=False):
    v = float(_scalar_value(value, "add_scalar"))
    if not new_style:
        return P.summary(P.summary_value(tag, simple_value=v))
    meta = P.summary_metadata("scalars")
    if double_precision:
        tensor = P.tensor_proto(P.DT_DOUBLE, double_val=[v])
    else:
        tensor = P.tensor_proto(P.DT_FLOAT, float_val=[v])
    return P.summary(P.summary_value(tag, metadata=meta, tensor=tensor))


def _tensorflow_bins():
    # TensorFlow's default histogram buckets: +-1e-12 growing by 10% up to 1e20, and 0
    v = 1e-12
    pos = []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-x for x in reversed(pos)] + [0.0] + pos


_TF_BINS = None


def histogram(tag, values, bins="tensorflow", max_bins=None):
    global _TF_BINS
    arr = _image.to_numpy(values).reshape(-1)
    if arr.size == 0:
        raise ValueError("add_histogram: the input has no element")
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    elif arr.dtype.kind == "f" and arr.dtype.itemsize < 4:  # float16 / bfloat16
        arr = arr.astype(np.float32)
    if isinstance(bins, str) and bins == "tensorflow":
        if _TF_BINS is None:
            _TF_BINS = np.array(_tensorflow_bins())
        bins = _TF_BINS
    counts, edges = np.histogram(arr, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        # merge groups of adjacent buckets so that at most max_bins remain
        group = len(counts) // max_bins
        pad = (-len(counts)) % group
        counts = np.pad(counts, (0, pad)).reshape(-1, group).sum(axis=1)
        edges = np.append(edges[:-1:group], edges[-1])
    nonzero = np.flatnonzero(counts)
    if nonzero.size == 0:
        raise ValueError("add_histogram: no value falls inside the bins (NaN or values outside "
                         "the bucket range?)")
    first, last = nonzero[0], nonzero[-1]
    # TensorBoard stores right bucket edges only; a leading empty bucket keeps the left edge
    # of the first occupied bucket (the layout PyTorch writes)
    limits = edges[first:last + 2]
    kept = np.concatenate([[0], counts[first:last + 1]])
    histo = P.histogram(arr.min(), arr.max(), arr.size, arr.sum(), arr.dot(arr),
                        limits.tolist(), kept.astype(np.float64).tolist())
    return P.summary(P.summary_value(tag, histo=histo))


def image(tag, img, dataformats="CHW"):
    hwc = _image.to_uint8(_image.to_hwc(_image.to_numpy(img), dataformats))
    h, w, c = hwc.shape
    encoded = _image.encode_png(hwc)
    return P.summary(P.summary_value(tag, image=P.image(h, w, c, encoded)))


def text(tag, text_string):
    meta = P.summary_metadata("text")
    tensor = P.tensor_proto(P.DT_STRING, (1,), string_val=[text_string.encode("utf-8")])
    return P.summary(P.summary_value(tag + "/text_summary", metadata=meta, tensor=tensor))


def _hparam_type(name, v):
    if isinstance(v, bool):
        return P.HP_BOOL
    if isinstance(v, str):
        return P.HP_STRING
    if isinstance(v, (int, float)):
        return P.HP_FLOAT64
    raise ValueError(f"add_hparams: value of hparam {name!r} should be one of int, float, str, "
                     f"bool, or ember.Tensor; got {type(v).__name__}")


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None):
    """The three hparams-plugin summaries: experiment, session start and session end."""
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("add_hparams: hparam_dict and metric_dict should be dictionaries")
    discrete = hparam_domain_discrete or {}
    if not isinstance(discrete, dict):
        raise TypeError("add_hparams: hparam_domain_discrete should be a dictionary")
    for k, vs in discrete.items():
        if k not in hparam_dict:
            raise ValueError("add_hparams: keys of hparam_domain_discrete should be a subset of "
                             f"the keys of hparam_dict; {k!r} is not an hparam")
        if not isinstance(vs, (list, tuple)) or not all(
                type(x) is type(hparam_dict[k]) for x in vs):
            raise TypeError(f"add_hparams: hparam_domain_discrete[{k!r}] should be a list of "
                            f"values of the same type as hparam_dict[{k!r}]")
    values, infos = {}, []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if not isinstance(v, (bool, str, int, float)):
            arr = _image.to_numpy(v) if hasattr(v, "shape") else None
            if arr is None or arr.size != 1:
                _hparam_type(k, v)  # raises the error
            v = arr.reshape(()).item()
        values[k] = v
        infos.append(P.hparam_info(k, _hparam_type(k, v), discrete.get(k)))
    metrics = [P.metric_info(k) for k in metric_dict]

    def as_summary(tag, content):
        meta = P.summary_metadata("hparams", content)
        return P.summary(P.summary_value(tag, metadata=meta))

    exp = as_summary("_hparams_/experiment",
                     P.hparams_plugin_data(experiment=P.experiment(infos, metrics)))
    ssi = as_summary("_hparams_/session_start_info",
                     P.hparams_plugin_data(session_start_info=P.session_start_info(values)))
    sei = as_summary("_hparams_/session_end_info", P.hparams_plugin_data(
        session_end_info=P.session_end_info(P.STATUS_SUCCESS)))
    return exp, ssi, sei
