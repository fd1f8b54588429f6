"""``t.data`` shares t's storage but has a version counter of its own (``t.detach()`` shares
both): an in-place write through ``.data`` is invisible to the saved-tensor version check, as in
torch. torchdiffeq's Runge-Kutta step relies on it (``scratch.data[index] = value`` inside an
autograd.Function, "to sneak past the version checker"); ember shared the counter, so its
Function check and the backward's saved-tensor check refused the program."""
import numpy as np
import pytest

import ember


def _versions(lib):
    a = lib.zeros(3)
    d = a.data
    d[0] = 1.0
    out = [a._version, d._version, a.tolist()]
    e = a.detach()
    e[1] = 2.0
    out += [a._version, e._version]
    a.add_(1)
    out += [d._version, e._version, a.data._version, a.data.data_ptr() == a.data_ptr()]
    return out


def _backward_after_data_write(lib):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = w * 2
    z = y * y
    y.data.mul_(3)  # the saved y changes; torch does not notice (and neither may ember)
    z.sum().backward()
    return w.grad.tolist()


class _Assign:
    """torchdiffeq's pattern: write into a buffer inside forward, through .data."""

    @staticmethod
    def make(lib):
        class Assign(lib.autograd.Function):
            @staticmethod
            def forward(ctx, scratch, value, index):
                ctx.index = index
                scratch.data[index] = value
                return scratch

            @staticmethod
            def backward(ctx, grad):
                return grad, grad[ctx.index], None

        return Assign


def _function_write(lib):
    scratch = lib.zeros(3, 2, dtype=lib.float64)
    v = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    out = _Assign.make(lib).apply(scratch, v * 3, 1)
    (out * lib.arange(6.0, dtype=lib.float64).reshape(3, 2)).sum().backward()
    return [out.tolist(), v.grad.tolist(), scratch._version]


def test_data_has_its_own_version_counter():
    a_ver, d_ver, values, a_ver2, e_ver, d_ver2, e_ver2, fresh, shared = _versions(ember)
    assert (a_ver, d_ver, values) == (0, 1, [1.0, 0.0, 0.0])
    assert (a_ver2, e_ver) == (1, 1)  # detach() shares the counter
    assert (d_ver2, e_ver2, fresh, shared) == (1, 2, 0, True)


def test_write_through_data_is_not_a_version_error():
    # y*y saved y (2, 4, 6); .data.mul_(3) makes it (6, 12, 18): d(sum y^2)/dw = 2*y*2
    np.testing.assert_allclose(_backward_after_data_write(ember), [24.0, 48.0, 72.0])


def test_function_writing_through_data_needs_no_mark_dirty():
    out, grad, version = _function_write(ember)
    assert out == [[0.0, 0.0], [3.0, 6.0], [0.0, 0.0]]
    assert grad == [6.0, 9.0] and version == 0


def test_in_place_write_without_data_is_still_refused():
    w = ember.tensor([1.0, 2.0], requires_grad=True)
    y = w * 2
    z = y * y
    y.mul_(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_data_setter_and_parameter_data():
    p = ember.nn.Parameter(ember.ones(2))
    d = p.data
    d.add_(1)  # an optimizer step written the old way
    assert p.tolist() == [2.0, 2.0] and p._version == 0 and not d.requires_grad
    p.data = ember.zeros(2)
    assert p.tolist() == [0.0, 0.0] and p.requires_grad and isinstance(p, ember.nn.Parameter)


@pytest.mark.parity
def test_matches_torch():
    torch = pytest.importorskip("torch")
    assert _versions(ember) == _versions(torch)
    assert _backward_after_data_write(ember) == _backward_after_data_write(torch)
    assert _function_write(ember) == _function_write(torch)
