"""Legacy forms the corpus's older programs use (torch 0.3/0.4 idioms in
L1aoXingyu/pytorch-beginner and Atcold's notebooks), against torch 2.13:

- ``torch.Tensor(x.size())`` makes a tensor *of that shape* (ember read the Size as data and
  made a 1-D tensor of the sizes, silently); ``torch.Tensor()`` is empty (0,), not 0-d;
  ``torch.Tensor(2.5)`` and ``torch.Tensor(True)`` are TypeErrors ("data must be a sequence").
- CUDA requests on a machine without CUDA: ``x.cuda()``, ``x.to("cuda")``,
  ``zeros(..., device="cuda")``, ``module.cuda()`` raise AssertionError ("Torch not compiled with
  CUDA enabled"), not RuntimeError; ``torch.cuda.FloatTensor(...)`` is a TypeError (ember had no
  such name: AttributeError); ``x.type("torch.cuda.FloatTensor")`` is a RuntimeError (ember
  silently gave a CPU float tensor).
"""
import numpy as np
import pytest

import ember


def _torch():
    return pytest.importorskip("torch")


_SHAPE_FORMS = {
    "empty": lambda lib: lib.Tensor(),
    "size": lambda lib: lib.Tensor(lib.ones(2, 3).size()),
    "shape": lambda lib: lib.Tensor(lib.ones(4).shape),
    "size0d": lambda lib: lib.Tensor(lib.Size([])),
    "sizes": lambda lib: lib.Tensor(2, 3),
    "data_tuple": lambda lib: lib.Tensor((2, 3)),
    "data_list": lambda lib: lib.Tensor([[1, 2]]),
    "data_empty": lambda lib: lib.Tensor([]),
    "float_size": lambda lib: lib.FloatTensor(lib.ones(2, 3).size()),
    "long_size": lambda lib: lib.LongTensor(lib.Size([3])),
}


@pytest.mark.parity
@pytest.mark.parametrize("form", sorted(_SHAPE_FORMS))
def test_legacy_constructor_shapes_match_torch(form):
    torch = _torch()
    want = _SHAPE_FORMS[form](torch)
    got = _SHAPE_FORMS[form](ember)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    if form.startswith("data"):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parity
@pytest.mark.parametrize("value, match", [(2.5, "data must be a sequence"),
                                          (True, "data must be a sequence"),
                                          ("ab", "invalid data type 'str'")])
def test_legacy_constructor_scalars_raise_like_torch(value, match):
    torch = _torch()
    with pytest.raises(TypeError, match=match):
        torch.Tensor(value)
    with pytest.raises(TypeError, match=match):
        ember.Tensor(value)


_CUDA_MOVES = {
    "cuda()": lambda lib: lib.ones(2).cuda(),
    "to('cuda')": lambda lib: lib.ones(2).to("cuda"),
    "to('cuda:1')": lambda lib: lib.ones(2).to("cuda:1"),
    "zeros(device)": lambda lib: lib.zeros(2, device="cuda"),
    "tensor(device)": lambda lib: lib.tensor([1.0], device="cuda"),
    "module.cuda()": lambda lib: lib.nn.Linear(2, 2).cuda(),
    "module.to('cuda')": lambda lib: lib.nn.Linear(2, 2).to("cuda"),
}


@pytest.mark.parity
@pytest.mark.parametrize("form", sorted(_CUDA_MOVES))
def test_cuda_moves_raise_assertion_error_like_torch(form):
    torch = _torch()
    if torch.cuda.is_available():
        pytest.skip("the oracle has CUDA here; the test is about a CPU-only build")
    with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
        _CUDA_MOVES[form](torch)
    with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
        _CUDA_MOVES[form](ember)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["FloatTensor", "LongTensor", "ByteTensor", "DoubleTensor"])
def test_cuda_legacy_types_like_torch(name):
    torch = _torch()
    if torch.cuda.is_available():
        pytest.skip("the oracle has CUDA here; the test is about a CPU-only build")
    for lib in (torch, ember):
        cls = getattr(lib.cuda, name)
        with pytest.raises(TypeError, match=f"cuda.{name} not available"):
            cls(3)
        with pytest.raises(TypeError, match="not available"):
            cls(lib.ones(2).size())
        assert not isinstance(lib.ones(2), cls)
        with pytest.raises(RuntimeError):
            lib.ones(2).type(cls)
        with pytest.raises(RuntimeError):
            lib.ones(2).type(f"{lib.__name__}.cuda.{name}")
    assert ember.ones(2).type("ember.FloatTensor").dtype is ember.float32


@pytest.mark.parity
def test_cuda_requests_torch_answers_with_runtime_error():
    # torch raises RuntimeError on these paths; ember's one error type is both kinds
    torch = _torch()
    if torch.cuda.is_available():
        pytest.skip("the oracle has CUDA here; the test is about a CPU-only build")
    for lib in (torch, ember):
        with pytest.raises(RuntimeError):
            lib.sparse_coo_tensor([[0]], [1.0], (2,), device="cuda")
        with pytest.raises(RuntimeError):
            lib.FloatTensor([1.0], device="cuda")
    with pytest.raises(RuntimeError, match="CUDA"):
        ember.ones(2).cuda()


@pytest.mark.parity
def test_uint8_mask_index_warns_once_like_torch(monkeypatch):
    import warnings

    from ember.ops import indexing
    monkeypatch.setattr(indexing, "_UINT8_WARNED", [False])
    x = ember.arange(6.0).reshape(2, 3)
    mask = (x > 2).byte()
    with pytest.warns(UserWarning, match="uint8"):
        got = x[mask]
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # once per process, as torch
        x[mask]
    torch = _torch()
    t = torch.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(got.numpy(), t[(t > 2).bool()].numpy())


@pytest.mark.parity
def test_pin_memory_without_accelerator_warns_like_torch():
    torch = _torch()
    if torch.accelerator.is_available():
        pytest.skip("the oracle has an accelerator here")
    for lib in (torch, ember):
        data = lib.utils.data.TensorDataset(lib.ones(4))
        loader = lib.utils.data.DataLoader(data, batch_size=2, pin_memory=True)
        for _ in range(2):   # at every iterator, as torch
            with pytest.warns(UserWarning, match="pin_memory"):
                batches = list(loader)
            assert len(batches) == 2
