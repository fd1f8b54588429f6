"""SummaryWriter writes real TensorBoard event files: read back with tensorboard's own reader
(an optional dependency, as for PyTorch) and compared with what torch's SummaryWriter writes."""
from __future__ import annotations

import io
import os
import struct

import numpy as np
import pytest

import ember
from ember.utils.tensorboard import SummaryWriter
from ember.utils.tensorboard._record import crc32c, masked_crc32c, tfrecord


def _accumulator(path):
    ea_mod = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator",
        reason="the tensorboard package (optional dependency) is not installed")
    ea = ea_mod.EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0,
                                                           "images": 0, "tensors": 0})
    ea.Reload()
    return ea


def test_crc32c_known_vector_and_record_framing():
    assert crc32c(b"123456789") == 0xE3069283  # the standard CRC-32C check value
    assert crc32c(b"") == 0
    rec = tfrecord(b"abc")
    assert struct.unpack("<Q", rec[:8])[0] == 3
    assert struct.unpack("<I", rec[8:12])[0] == masked_crc32c(rec[:8])
    assert rec[12:15] == b"abc"
    assert struct.unpack("<I", rec[15:])[0] == masked_crc32c(b"abc")


def test_scalars_read_back_with_same_tags_steps_values(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(5):
            w.add_scalar("loss/train", 1.0 / (step + 1), global_step=step)
        w.add_scalar("acc", ember.tensor(0.75), global_step=10)
        w.add_scalar("np", np.float32(2.5), global_step=3, walltime=1234.5)
    files = [f for f in os.listdir(tmp_path) if "tfevents" in f]
    assert len(files) == 1
    ea = _accumulator(tmp_path)
    assert sorted(ea.Tags()["scalars"]) == ["acc", "loss/train", "np"]
    events = ea.Scalars("loss/train")
    assert [e.step for e in events] == list(range(5))
    np.testing.assert_allclose([e.value for e in events], [1.0 / (s + 1) for s in range(5)],
                               rtol=1e-7)
    assert ea.Scalars("acc")[0].value == 0.75 and ea.Scalars("acc")[0].step == 10
    assert ea.Scalars("np")[0].wall_time == 1234.5


def test_scalar_new_style_and_errors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("ns", 3.0, 1, new_style=True)
        w.add_scalar("nd", 1 / 3, 2, new_style=True, double_precision=True)
        with pytest.raises(ValueError, match="1-element"):
            w.add_scalar("bad", ember.ones(2), 0)
    ea = _accumulator(tmp_path)
    t = ea.Tensors("ns")[0]
    assert t.step == 1 and list(t.tensor_proto.float_val) == [3.0]
    assert ea.SummaryMetadata("ns").plugin_data.plugin_name == "scalars"
    assert list(ea.Tensors("nd")[0].tensor_proto.double_val) == [1 / 3]


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalars("loss", {"train": 1.0, "val": 2.0}, 5)
        w.add_scalars("loss", {"train": 0.5, "val": 1.5}, 6)
    for tag, values in (("train", [1.0, 0.5]), ("val", [2.0, 1.5])):
        ea = _accumulator(tmp_path / f"loss_{tag}")
        assert ea.Tags()["scalars"] == ["loss"]
        assert [e.step for e in ea.Scalars("loss")] == [5, 6]
        assert [e.value for e in ea.Scalars("loss")] == values


def test_histogram_values(tmp_path, rng):
    x = rng.standard_normal(1000)
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("w", ember.tensor(x), 7)
        w.add_histogram("auto", x, 8, bins="auto")
        w.add_histogram("ten", x, 9, bins=10)
    ea = _accumulator(tmp_path)
    h = ea.Histograms("w")[0]
    assert h.step == 7
    hv = h.histogram_value
    assert hv.num == 1000 and hv.min == x.min() and hv.max == x.max()
    np.testing.assert_allclose([hv.sum, hv.sum_squares], [x.sum(), x.dot(x)], rtol=1e-12)
    assert sum(hv.bucket) == 1000 and len(hv.bucket) == len(hv.bucket_limit)
    counts, edges = np.histogram(x, bins=10)
    hv = ea.Histograms("ten")[0].histogram_value
    np.testing.assert_allclose(hv.bucket_limit, edges)  # right edges, leading empty bucket
    np.testing.assert_allclose(hv.bucket, [0] + counts.tolist())
    with SummaryWriter(tmp_path / "e") as w, pytest.raises(ValueError, match="no element"):
        w.add_histogram("empty", np.zeros(0), 0)


def test_text(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "hello **world**", 2)
    ea = _accumulator(tmp_path)
    t = ea.Tensors("notes/text_summary")[0]
    assert t.step == 2 and t.tensor_proto.string_val[0].decode() == "hello **world**"
    assert ea.SummaryMetadata("notes/text_summary").plugin_data.plugin_name == "text"


@pytest.mark.parametrize("layout", ["CHW", "HWC", "HW"])
def test_image_roundtrip_png(tmp_path, rng, layout):
    image_mod = pytest.importorskip("PIL.Image", reason="PIL is needed to decode the PNG")
    chw = rng.random((3, 5, 7)).astype(np.float32)
    img = {"CHW": chw, "HWC": chw.transpose(1, 2, 0), "HW": chw[0]}[layout]
    with SummaryWriter(tmp_path) as w:
        w.add_image("img", ember.tensor(img), 3, dataformats=layout)
        w.add_image("u8", (chw * 255).astype(np.uint8), 4)
    ea = _accumulator(tmp_path)
    ev = ea.Images("img")[0]
    assert (ev.step, ev.width, ev.height) == (3, 7, 5)
    decoded = np.asarray(image_mod.open(io.BytesIO(ev.encoded_image_string)).convert("RGB"))
    expected = (chw.transpose(1, 2, 0) * 255).clip(0, 255).astype(np.uint8)
    if layout == "HW":
        expected = np.repeat(expected[..., :1], 3, axis=2)
    np.testing.assert_array_equal(decoded, expected)
    u8 = ea.Images("u8")[0]
    decoded = np.asarray(image_mod.open(io.BytesIO(u8.encoded_image_string)))
    np.testing.assert_array_equal(decoded, (chw * 255).astype(np.uint8).transpose(1, 2, 0))


def test_add_images_grid_and_bad_layout(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_images("batch", np.zeros((10, 1, 4, 6), np.float32), 0)
        with pytest.raises(ValueError, match="dataformats"):
            w.add_image("bad", np.zeros((3, 4, 5)), 0, dataformats="CHWX")
        with pytest.raises(ValueError, match="channels"):
            w.add_image("bad", np.zeros((2, 4, 5)), 0)
    ev = _accumulator(tmp_path).Images("batch")[0]
    assert (ev.width, ev.height) == (6 * 8, 4 * 2)  # 8 per row, 2 rows


def test_hparams(tmp_path):
    plugin_data_pb2 = pytest.importorskip("tensorboard.plugins.hparams.plugin_data_pb2",
                                          reason="tensorboard not installed")
    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"lr": 0.1, "bs": 32, "opt": "sgd", "nesterov": True, "skip": None},
                      {"acc": 0.9}, hparam_domain_discrete={"opt": ["sgd", "adam"]},
                      run_name="trial")
    ea = _accumulator(tmp_path / "trial")
    assert ea.Scalars("acc")[0].value == pytest.approx(0.9)
    content = ea.PluginTagToContent("hparams")
    exp = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/experiment"])
    infos = {h.name: h for h in exp.experiment.hparam_infos}
    assert set(infos) == {"lr", "bs", "opt", "nesterov"}
    assert [v.string_value for v in infos["opt"].domain_discrete.values] == ["sgd", "adam"]
    assert exp.experiment.metric_infos[0].name.tag == "acc"
    ssi = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"])
    hp = ssi.session_start_info.hparams
    assert hp["lr"].number_value == 0.1 and hp["bs"].number_value == 32
    assert hp["opt"].string_value == "sgd" and hp["nesterov"].bool_value is True
    sei = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_end_info"])
    assert sei.session_end_info.status == 1  # STATUS_SUCCESS
    with SummaryWriter(tmp_path / "x") as w, pytest.raises(TypeError, match="dictionar"):
        w.add_hparams([("lr", 0.1)], {})


def test_purge_step_hides_later_steps_of_earlier_run(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(10):
            w.add_scalar("x", float(step), step)
    with SummaryWriter(tmp_path, purge_step=5) as w:
        for step in range(5, 8):
            w.add_scalar("x", 100.0 + step, step)
    ea = _accumulator(tmp_path)
    assert [(e.step, e.value) for e in ea.Scalars("x")] == \
        [(s, float(s)) for s in range(5)] + [(s, 100.0 + s) for s in range(5, 8)]


def test_flush_makes_events_visible_before_close(tmp_path):
    w = SummaryWriter(tmp_path, max_queue=1000, flush_secs=3600)
    w.add_scalar("a", 1.0, 0)
    w.flush()
    assert [e.value for e in _accumulator(tmp_path).Scalars("a")] == [1.0]
    w.add_scalar("a", 2.0, 1)
    w.close()
    assert [e.value for e in _accumulator(tmp_path).Scalars("a")] == [1.0, 2.0]
    w.add_scalar("a", 3.0, 2)  # after close a new event file is opened, as in PyTorch
    w.close()
    assert [e.value for e in _accumulator(tmp_path).Scalars("a")] == [1.0, 2.0, 3.0]


def test_default_log_dir_under_runs(tmp_path, monkeypatch):
    import socket
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp1")
    try:
        logdir = w.get_logdir()
        assert logdir.startswith("runs" + os.sep)
        assert logdir.endswith(socket.gethostname() + "_exp1")
        assert os.path.isdir(logdir)
    finally:
        w.close()


@pytest.mark.parity
def test_event_contents_match_torch_summarywriter(tmp_path, rng):
    tb = pytest.importorskip("torch.utils.tensorboard", reason="torch oracle not installed")
    x = rng.standard_normal(500)
    image = rng.random((3, 4, 6)).astype(np.float32)

    def log(w, hp_dict):
        w.add_scalar("loss", 0.25, 1)
        w.add_histogram("h", x, 2)
        w.add_histogram("h_auto", x, 2, bins="auto")
        w.add_text("t", "text", 3)
        w.add_image("img", image, 4)
        w.add_scalars("m", {"a": 1.0, "b": 2.0}, 5)
        w.add_hparams(hp_dict, {"acc": 0.5}, run_name="hp",
                      hparam_domain_discrete={"opt": ["adam", "sgd"], "depth": [2, 4]})

    hp = {"lr": 0.01, "opt": "adam", "depth": 4}
    ours, ref = tmp_path / "ember", tmp_path / "torch"
    with SummaryWriter(ours) as w:
        log(w, hp)
    w = tb.SummaryWriter(str(ref))
    log(w, hp)
    w.close()
    for sub in ("", "m_a", "m_b", "hp"):
        a, b = _accumulator(ours / sub), _accumulator(ref / sub)
        assert a.Tags() == b.Tags(), sub
        for tag in a.Tags()["scalars"]:
            assert [(e.step, e.value) for e in a.Scalars(tag)] == \
                [(e.step, e.value) for e in b.Scalars(tag)]
        for tag in a.Tags()["histograms"]:
            ha, hb = a.Histograms(tag)[0], b.Histograms(tag)[0]
            assert ha.step == hb.step
            np.testing.assert_allclose(ha.histogram_value.bucket_limit,
                                       hb.histogram_value.bucket_limit)
            assert ha.histogram_value.bucket == hb.histogram_value.bucket
            np.testing.assert_allclose(ha.histogram_value.sum_squares,
                                       hb.histogram_value.sum_squares, rtol=1e-6)
        for tag in a.Tags()["images"]:
            ia, ib = a.Images(tag)[0], b.Images(tag)[0]
            assert (ia.width, ia.height, ia.step) == (ib.width, ib.height, ib.step)
        for tag in a.Tags()["tensors"]:
            assert a.Tensors(tag)[0].tensor_proto == b.Tensors(tag)[0].tensor_proto
        if sub == "hp":  # compare parsed messages: map entries have no fixed byte order
            from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
            ca, cb = a.PluginTagToContent("hparams"), b.PluginTagToContent("hparams")
            assert ca.keys() == cb.keys()
            for tag in ca:
                assert HParamsPluginData.FromString(ca[tag]) == \
                    HParamsPluginData.FromString(cb[tag]), tag


def test_event_files_sort_in_open_order_across_uid_digits(tmp_path, monkeypatch):
    # readers order a run's event files by name: an unpadded uid sorted "10" before "9"
    from ember.utils.tensorboard import _record
    monkeypatch.setattr(_record, "_uid", [9])
    w = SummaryWriter(tmp_path)
    w.add_scalar("a", 1.0, 0)
    w.close()
    w.add_scalar("a", 2.0, 1)
    w.close()
    assert [e.value for e in _accumulator(tmp_path).Scalars("a")] == [1.0, 2.0]


def test_summary_module_hparams_written_by_hand_as_lightning_does(tmp_path):
    # Lightning's TensorBoardLogger: hparams(params, metrics) from torch.utils.tensorboard.summary,
    # then writer._get_file_writer().add_summary(...) for each of the three
    plugin_data_pb2 = pytest.importorskip("tensorboard.plugins.hparams.plugin_data_pb2",
                                          reason="tensorboard is needed to read the summaries")
    from ember.utils.tensorboard.summary import hparams
    with SummaryWriter(str(tmp_path)) as w:
        for s in hparams({"hidden": 32, "lr": 0.01}, {"hp_metric": -1}):
            w._get_file_writer().add_summary(s, 0)
    (path,) = [os.path.join(tmp_path, f) for f in os.listdir(tmp_path)]
    content = _accumulator(path).PluginTagToContent("hparams")
    ssi = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"])
    hp = ssi.session_start_info.hparams
    assert hp["hidden"].number_value == 32 and hp["lr"].number_value == 0.01
    exp = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/experiment"])
    assert [m.name.tag for m in exp.experiment.metric_infos] == ["hp_metric"]
