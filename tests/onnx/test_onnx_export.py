"""ember.onnx.export: valid models (onnx.checker full check) whose onnxruntime outputs match
ember's, dynamic axes, and errors naming the op without a translation."""
from __future__ import annotations

import io
import math
import os
import sys

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

onnx = pytest.importorskip("onnx", reason="ember.onnx.export needs the optional onnx package")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime runs the exported models")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from examples.models.table1 import WORKLOADS  # noqa: E402


def _export(model, args, names, dynamic_axes=None, **kw):
    buf = io.BytesIO()
    ember.onnx.export(model, args, buf, input_names=names, dynamic_axes=dynamic_axes, **kw)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    return proto, ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])


def _check(model, sess, names, args):
    with ember.no_grad():
        ref = model(*args)
    got = sess.run(None, {n: a.numpy() for n, a in zip(names, args, strict=True)})[0]
    ref = ref.numpy()
    assert got.shape == ref.shape
    # float32 through different kernels: 1e-5 relative to the output's magnitude
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(ref).max()))


def _spec_inputs(name, batches, n):
    inp = batches[0][0]
    inp = inp if isinstance(inp, tuple) else (inp,)
    if name == "gnmt":            # (seq, batch) token ids
        return tuple(t[:5, :n] for t in inp), ["src", "tgt_in"], \
            {"src": {0: "S", 1: "batch"}, "tgt_in": {0: "T", 1: "batch"}}
    if name == "ncf":
        return tuple(t[: 4 * n] for t in inp), ["user", "item"], \
            {"user": {0: "batch"}, "item": {0: "batch"}}
    return tuple(t[:n] for t in inp), ["x"], {"x": {0: "batch"}}


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_spec_model_matches_onnxruntime_with_dynamic_batch(name):
    ember.manual_seed(0)
    model, _, batches, _, _ = WORKLOADS[name](ember)
    model.eval()
    args, names, dyn = _spec_inputs(name, batches, 2)
    proto, sess = _export(model, args, names, dyn)
    assert proto.graph.input[0].type.tensor_type.shape.dim[dyn[names[0]].__iter__().__next__()] \
        .dim_param in ("batch", "S")
    _check(model, sess, names, args)
    other, _, _ = _spec_inputs(name, batches, 3)         # another batch size
    _check(model, sess, names, other)


def test_transformer_encoder_dynamic_batch_and_sequence():
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, batch_first=True)
    enc = nn.TransformerEncoder(layer, 2).eval()
    _, sess = _export(enc, (ember.randn(2, 5, 16),), ["src"], {"src": {0: "batch", 1: "seq"}})
    _check(enc, sess, ["src"], (ember.randn(2, 5, 16),))
    _check(enc, sess, ["src"], (ember.randn(3, 7, 16),))


def test_transformer_encoder_gelu_norm_first_sequence_major():
    layer = nn.TransformerEncoderLayer(16, 4, 32, activation="gelu", norm_first=True)
    enc = nn.TransformerEncoder(layer, 1).eval()
    _, sess = _export(enc, (ember.randn(5, 2, 16),), ["src"], {"src": {0: "seq", 1: "batch"}})
    _check(enc, sess, ["src"], (ember.randn(6, 3, 16),))


class GPTBlock(nn.Module):
    """A GPT-2 block: causal self-attention with a tril mask buffer, then a GELU MLP."""

    def __init__(self, d=16, n_head=4, block_size=8):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.n_head = n_head
        mask = ember.tril(ember.ones(block_size, block_size))
        self.register_buffer("bias", mask.view(1, 1, block_size, block_size))

    def attn(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class SDPABlock(GPTBlock):
    def attn(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(B, T, self.n_head, -1).permute(0, 2, 1, 3) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


@pytest.mark.parametrize("cls", [GPTBlock, SDPABlock])
def test_gpt_block_causal_attention_dynamic_axes(cls):
    block = cls().eval()
    proto, sess = _export(block, (ember.randn(2, 6, 16),), ["x"],
                          {"x": {0: "batch", 1: "seq"}}, output_names=["y"])
    dims = [d.dim_param or d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", "seq", 16]
    _check(block, sess, ["x"], (ember.randn(2, 6, 16),))
    _check(block, sess, ["x"], (ember.randn(3, 8, 16),))   # longer sequence, other batch


def test_static_export_has_no_shape_computation():
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 2))
    proto, sess = _export(m, (ember.randn(2, 3, 6, 6),), ["x"])
    assert "Shape" not in [n.op_type for n in proto.graph.node]
    _check(m, sess, ["x"], (ember.randn(2, 3, 6, 6),))


@pytest.mark.parametrize("opset", [17, 18, 20])
def test_opset_versions_reductions_and_views(opset):
    class M(nn.Module):
        def forward(self, x):
            y = x.mean(dim=-1, keepdim=True) + x.amax(dim=1, keepdim=True)
            return (x - y).sum(dim=(1, 2)) / x.size(0)

    m = M()
    proto, sess = _export(m, (ember.randn(3, 4, 5),), ["x"], {"x": [0]}, opset_version=opset)
    assert proto.opset_import[0].version == opset
    _check(m, sess, ["x"], (ember.randn(4, 4, 5),))


def test_lstm_gru_batch_first_and_multiple_outputs():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True)
            self.gru = nn.GRU(12, 5)

        def forward(self, x):
            y, (h, c) = self.lstm(x)
            z, hz = self.gru(y.transpose(0, 1))
            return z, h, hz

    m = M().eval()
    args = (ember.randn(2, 3, 4),)
    buf = io.BytesIO()
    ember.onnx.export(m, args, buf, input_names=["x"], output_names=["z", "h", "hz"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"}})
    onnx.checker.check_model(onnx.load_from_string(buf.getvalue()), full_check=True)
    sess = ort.InferenceSession(buf.getvalue())
    x = ember.randn(3, 5, 4)
    with ember.no_grad():
        ref = m(x)
    for got, want in zip(sess.run(None, {"x": x.numpy()}), ref, strict=True):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-6)


def test_unsupported_op_names_op_and_location():
    class Inner(nn.Module):
        def forward(self, x):
            return ember.linalg.eigvals(x).real       # complex results: no ONNX form

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            return self.inner(x) + 1

    with pytest.raises(ember.onnx.UnsupportedOperatorError,
                       match=r"no ONNX translation for ember\.linalg\.eigvals; used by node "
                             r"'eigvals' "
                             r"in inner \(Inner\), at test_onnx_export\.py:\d+"):
        ember.onnx.export(Outer(), (ember.randn(3, 3),), io.BytesIO())


def test_layer_without_translation_is_traced_and_its_op_named():
    m = nn.Sequential(nn.Conv2d(4, 4, 1), nn.ChannelShuffle(2))
    with pytest.raises(RuntimeError, match=r"no ONNX translation for ember\.[a-z_.]*"
                                           r"channel_shuffle; used by node 'channel_shuffle' in 1 "
                                           r"\(ChannelShuffle\)"):
        ember.onnx.export(m, (ember.randn(1, 4, 2, 2),), io.BytesIO())


def test_data_dependent_control_flow_is_an_export_error():
    class M(nn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x

    with pytest.raises(ember.onnx.OnnxExporterError, match="control flow"):
        ember.onnx.export(M(), (ember.randn(2),), io.BytesIO())


def test_export_to_path_returns_program_and_restores_training(tmp_path):
    m = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    m.train()
    path = tmp_path / "m.onnx"
    prog = ember.onnx.export(m, ember.randn(2, 3), str(path))
    assert m.training and path.exists()
    assert isinstance(prog, ember.onnx.ONNXProgram)
    assert [n.op_type for n in prog.model_proto.graph.node] == ["Gemm", "Identity", "Identity"]
    assert ember.onnx.export(m, ember.randn(2, 3), str(path), dynamo=False) is None
    assert not ember.onnx.is_in_onnx_export()


def test_bad_opset_raises():
    with pytest.raises(ValueError, match="unsupported opset_version; got 9"):
        ember.onnx.export(nn.ReLU(), (ember.randn(2),), io.BytesIO(), opset_version=9)


class TinyGPT(nn.Module):
    """Token + position embeddings (arange over the dynamic length), two blocks, LM head."""

    def __init__(self, vocab=50, d=16, block_size=8):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(block_size, d)
        self.h = nn.ModuleList([GPTBlock(d, 4, block_size) for _ in range(2)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        b, t = idx.size()
        x = self.wte(idx) + self.wpe(ember.arange(0, t, dtype=ember.long))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def test_tiny_gpt_token_ids_dynamic_batch_and_length():
    m = TinyGPT().eval()
    idx = ember.randint(0, 50, (2, 6))
    _, sess = _export(m, (idx,), ["idx"], {"idx": {0: "batch", 1: "seq"}})
    _check(m, sess, ["idx"], (idx,))
    _check(m, sess, ["idx"], (ember.randint(0, 50, (3, 8)),))
