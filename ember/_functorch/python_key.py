"""``make_fx`` (functorch.make_fx): tracing by running a function on real tensors into an
aten-level graph. ember's FX records Python-level calls only (ember.fx.symbolic_trace), so the
name exists for ``import functorch`` and calling it raises."""


def make_fx(f, decomposition_table=None, tracing_mode="real", _allow_non_fake_inputs=False,
            **kwargs):
    raise NotImplementedError("make_fx: ember has no aten-level tracing by execution; "
                              "ember.fx.symbolic_trace records the Python-level calls instead")
