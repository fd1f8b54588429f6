"""Gap classes Pyro (1.9) found under the alias: names it reads at import time
(``torch.serialization.MAP_LOCATION``, ``torch._C._get_tracing_state``), the top-level module
name its ``patch_dependency`` asserts, and ``register_kl`` on a class that is not a
Distribution subclass (Pyro's own Distribution base is a mixin). Each is checked against torch
2.13."""
from __future__ import annotations

import typing

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def test_serialization_annotation_aliases_as_torch():
    for name in ("MAP_LOCATION", "FileLike"):
        got, want = getattr(ember.serialization, name), getattr(torch.serialization, name)
        # the same shape of alias: a union whose members name the same kinds
        assert len(typing.get_args(got)) == len(typing.get_args(want)), name
    assert ember.UntypedStorage in typing.get_args(ember.serialization.STORAGE)
    assert str in typing.get_args(ember.serialization.MAP_LOCATION)
    assert type(None) in typing.get_args(ember.serialization.MAP_LOCATION)
    for name in ("SHORT_SIZE", "INT_SIZE", "LONG_SIZE", "IS_WINDOWS"):
        assert getattr(ember.serialization, name) == getattr(torch.serialization, name), name


def test_get_tracing_state_is_none_outside_a_trace_and_set_inside():
    assert ember._C._get_tracing_state() is None
    assert torch._C._get_tracing_state() is None
    for lib in (ember, torch):
        seen = []

        def f(x, lib=lib, seen=seen):
            seen.append(lib._C._get_tracing_state())
            return x * 2

        lib.jit.trace(f, (lib.ones(2),))
        # torch's checker runs the function again untraced: one call at least saw the state
        assert any(s is not None for s in seen), lib.__name__
        assert lib._C._get_tracing_state() is None


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_register_kl_accepts_a_mixin_base_and_dispatches_through_the_mro(lib):
    D = lib.distributions

    class Base:  # not a Distribution: a library's mixin, as Pyro's Distribution
        pass

    class MyNormal(D.Normal, Base):
        pass

    @D.kl.register_kl(MyNormal, Base)
    def _kl(p, q):
        return lib.tensor(123.0)

    got = D.kl_divergence(MyNormal(0.0, 1.0), MyNormal(1.0, 1.0))
    assert float(got) == 123.0
    # a plain Normal pair still takes the built-in rule (0.5 for unit scales one apart)
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 1.0))) == 0.5


def test_register_kl_refuses_what_is_not_a_class():
    with pytest.raises(TypeError, match="class"):
        torch.distributions.kl.register_kl(1, torch.distributions.Normal)
    with pytest.raises(TypeError, match="register_kl: expected type_p to be a class"):
        ember.distributions.kl.register_kl(1, ember.distributions.Normal)
    with pytest.raises(TypeError, match="register_kl: expected type_q to be a class"):
        ember.distributions.kl.register_kl(ember.distributions.Normal, "Normal")


def test_cdata_names_the_tensor_object_as_torch():
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.ones(3))
        same = [q for q in lib.nn.Linear(2, 2).parameters()]
        assert p._cdata == p._cdata and isinstance(p._cdata, int)
        assert p._cdata != p.data._cdata            # .data is a new tensor over the same data
        assert p._cdata != p.view(3)._cdata
        assert same[0]._cdata != same[1]._cdata


def _traced_program(lib):
    """What Pyro's einsum does inside torch.jit.trace: isinstance checks on the operands,
    ndimension(), a custom autograd Function."""
    class SafeLog(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=1e-30).log()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g / x.clamp(min=1e-30)

    def f(x, y):
        assert isinstance(x, lib.Tensor) and lib.is_tensor(y)
        assert x.ndimension() == 2
        return SafeLog.apply(x * y).sum(1)

    return f


def test_jit_trace_passes_tensors_that_pass_isinstance_and_custom_functions():
    x, y = np.random.default_rng(0).uniform(0.5, 2.0, (2, 3, 4)).astype(np.float32)
    outs = {}
    for lib in (ember, torch):
        f = _traced_program(lib)
        traced = lib.jit.trace(f, (lib.ones(3, 4), lib.ones(3, 4)))
        outs[lib.__name__] = traced(lib.tensor(x), lib.tensor(y)).numpy()
    np.testing.assert_allclose(outs["ember"], outs["torch"], rtol=1e-6)
    np.testing.assert_allclose(outs["ember"], np.log(x * y).sum(1), rtol=1e-6)
    # type() stays the proxy's own class while tracing; ember's fx symbolic_trace is unchanged
    seen = []
    ember.jit.trace(lambda t: seen.append(type(t)) or t * 2, (ember.ones(2),))
    assert seen and seen[0] is not ember.Tensor
