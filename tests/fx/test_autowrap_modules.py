"""NOTE [Autowrapped modules]: math is wrapped during symbolic traces only, so numba kernels
compiled while jit.trace runs or while a hand-built Proxy's tracer lives see the real math."""
import math

import numba
import numpy as np
import pytest

import ember
from ember import fx, jit, nn

_FABS = math.fabs


def _fresh_abs_kernel():
    # a kernel numba has never compiled in this process: abs() on float32 lowers through
    # math.fabs at compile time (the failure this guards against)
    @numba.njit
    def k(a):
        t = np.float32(0)
        for v in a:
            t += abs(v)
        return t
    return k


def test_symbolic_trace_records_math_functions():
    def f(x):
        return x * math.sqrt(x.shape[0])

    gm = fx.symbolic_trace(f)
    assert any(n.target is math.sqrt for n in gm.graph.nodes)
    assert math.sqrt.__module__ == "math" and not hasattr(math.sqrt, "__wrapped__")
    x = ember.arange(4.0)
    np.testing.assert_allclose(gm(x).numpy(), x.numpy() * 2.0)


def test_tracer_without_autowrap_modules_leaves_math_alone():
    seen = []

    class M(nn.Module):
        def forward(self, x):
            seen.append(math.fabs is _FABS)
            return x + 1

    fx.Tracer(autowrap_modules=()).trace(M())
    assert seen == [True]


def test_jit_trace_compiles_numba_kernels_with_real_math():
    kernel = _fresh_abs_kernel()
    seen = []

    class M(nn.Module):
        def forward(self, x):
            seen.append(math.fabs is _FABS)
            return x * float(kernel(np.array([-1.5, 2.0], np.float32)))

    traced = jit.trace(M(), (ember.ones(3),))
    assert seen == [True]
    np.testing.assert_allclose(traced(ember.ones(3)).numpy(), np.full(3, 3.5, np.float32))


def test_graph_appending_tracer_keeps_math_unwrapped():
    g = fx.Graph()
    tracer = fx.proxy.GraphAppendingTracer(g)
    x = fx.Proxy(g.placeholder("x"), tracer)
    y = ember.relu(x)  # ember functions still record on hand-built Proxies
    g.output(y.node)
    assert math.fabs is _FABS
    assert _fresh_abs_kernel()(np.array([-2.0, 1.0], np.float32)) == pytest.approx(3.0)
    gm = fx.GraphModule(nn.Module(), g)
    np.testing.assert_allclose(gm(ember.tensor([-1.0, 2.0])).numpy(), [0.0, 2.0])
    del tracer, x, y
