"""Shared by the ONNX form and functional tests: export a function, check the model with the
ONNX checker, run it in onnxruntime and compare every output with ember's (values and shapes)."""
from __future__ import annotations

import io

import numpy as np
import onnx
import onnxruntime as ort

import ember


def check_roundtrip(fn, args, dynamic_batch=False, run_args=None, atol=1e-5):
    """Export fn(*args) (the first input's dim 0 dynamic if asked), then run it on run_args
    (default: args) in onnxruntime and compare with fn(*run_args)."""
    names = [f"x{i}" for i in range(len(args))]
    axes = {names[0]: {0: "batch"}} if dynamic_batch else None
    buf = io.BytesIO()
    ember.onnx.export(fn, args, buf, input_names=names, dynamic_axes=axes)
    onnx.checker.check_model(onnx.load_from_string(buf.getvalue()), full_check=True)
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    run_args = run_args or args
    with ember.no_grad():
        ref = fn(*run_args)
    ref = ref if isinstance(ref, (tuple, list)) else (ref,)
    got = sess.run(None, {n: a.numpy() for n, a in zip(names, run_args, strict=True)})
    assert len(got) == len(ref)
    for g, r in zip(got, ref, strict=True):
        assert g.shape == tuple(r.shape)
        np.testing.assert_allclose(g, r.numpy(), rtol=1e-5, atol=atol)
