"""ember.cuda, ember.accelerator and ember.backends on a machine without CUDA, compared with
PyTorch's CPU-only build."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember


def test_cuda_queries_answer_truthfully():
    assert ember.cuda.is_available() is False
    assert ember.cuda.device_count() == 0
    assert ember.cuda.is_initialized() is False
    assert ember.cuda.is_bf16_supported() is False
    assert ember.cuda.memory_allocated() == 0
    assert ember.cuda.max_memory_allocated() == 0
    assert ember.cuda.memory_reserved() == 0
    assert ember.cuda.empty_cache() is None
    assert ember.cuda.reset_peak_memory_stats() is None


def test_cuda_seeding_leaves_cpu_generator_untouched():
    ember.manual_seed(123)
    expected = ember.randn(5).numpy().copy()
    ember.manual_seed(123)
    ember.cuda.manual_seed(5)
    ember.cuda.manual_seed_all(7)
    ember.cuda.seed()
    ember.cuda.seed_all()
    np.testing.assert_array_equal(ember.randn(5).numpy(), expected)
    with pytest.raises(ValueError):
        ember.cuda.manual_seed("not a seed")


@pytest.mark.parametrize("name", ["current_device", "get_device_name", "synchronize",
                                  "get_device_capability", "get_device_properties", "init",
                                  "current_stream", "mem_get_info"])
def test_cuda_device_functions_raise_like_torch(name):
    with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
        getattr(ember.cuda, name)()


def test_cuda_device_context_raises_on_enter():
    ctx = ember.cuda.device(0)
    with pytest.raises(RuntimeError, match="CUDA"):
        with ctx:
            pass


def test_cuda_device_constructs_but_moves_raise():
    d = ember.device("cuda")
    assert d.type == "cuda" and str(ember.device("cuda:1")) == "cuda:1"
    t = ember.ones(2)
    with pytest.raises(AssertionError, match="no CUDA device is available"):
        t.to("cuda")
    with pytest.raises(AssertionError, match="no CUDA device is available"):
        t.to(d)
    with pytest.raises(AssertionError, match="no CUDA device is available"):
        t.cuda()
    with pytest.raises(AssertionError, match="no CUDA device is available"):
        ember.zeros(2, device="cuda")


def test_module_to_cuda_raises():
    from ember.nn.modules.module import Module
    from ember.nn.parameter import Parameter
    m = Module()
    m.register_parameter("w", Parameter(ember.ones(2)))
    with pytest.raises(AssertionError, match="no CUDA device is available"):
        m.to("cuda")
    with pytest.raises(AssertionError, match="no CUDA device is available"):
        m.cuda()


def test_cuda_amp_aliases_are_deprecated_and_disabled():
    with pytest.warns(FutureWarning, match="deprecated"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            scaler = ember.cuda.amp.GradScaler()
    assert not scaler.is_enabled()
    loss = ember.ones(1)
    assert scaler.scale(loss) is loss
    with pytest.warns(FutureWarning, match="deprecated"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ctx = ember.cuda.amp.autocast()
    with ctx:
        assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype is ember.float32


@pytest.mark.parity
def test_cuda_amp_aliases_match_torch_without_cuda():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.cuda.amp.GradScaler()
        ours = ember.cuda.amp.GradScaler()
    assert ours.is_enabled() == ref.is_enabled()
    assert ours.get_scale() == ref.get_scale()


@pytest.mark.parity
def test_cuda_answers_match_torch_cpu_build():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    if torch.cuda.is_available():
        pytest.skip("the oracle has CUDA; this compares against a CPU-only build")
    for name in ("is_available", "device_count", "is_bf16_supported", "memory_allocated",
                 "max_memory_allocated", "is_initialized"):
        assert getattr(ember.cuda, name)() == getattr(torch.cuda, name)(), name
    for name in ("current_device", "get_device_name", "synchronize"):
        with pytest.raises(AssertionError):
            getattr(torch.cuda, name)()
        with pytest.raises(AssertionError):
            getattr(ember.cuda, name)()
    # private state that reversible networks read (NOTE [Private CUDA state])
    assert ember.cuda._initialized is torch.cuda._initialized is False
    assert ember.cuda._is_in_bad_fork() is torch.cuda._is_in_bad_fork() is False


def test_accelerator_absent():
    assert ember.accelerator.is_available() is False
    assert ember.accelerator.current_accelerator() is None
    assert ember.accelerator.device_count() == 0
    with pytest.raises(RuntimeError, match="none is available"):
        ember.accelerator.current_device_index()
    with pytest.raises(RuntimeError, match="none is available"):
        ember.accelerator.synchronize()


def test_backends_flags_settable_and_restored():
    cudnn = ember.backends.cudnn
    assert (cudnn.benchmark, cudnn.deterministic, cudnn.enabled, cudnn.allow_tf32) == \
        (False, False, True, True)
    assert cudnn.is_available() is False and cudnn.version() is None
    cudnn.benchmark = True
    cudnn.deterministic = True
    try:
        assert cudnn.benchmark is True and cudnn.deterministic is True
        with cudnn.flags(enabled=False):
            assert cudnn.enabled is False
        assert cudnn.enabled is True
        with pytest.raises(TypeError, match="bool"):
            cudnn.benchmark = 1
    finally:
        cudnn.benchmark = False
        cudnn.deterministic = False
    assert ember.backends.mps.is_available() is False
    assert ember.backends.mps.is_built() is False
    assert ember.backends.cuda.is_built() is False


def test_matmul_precision_tied_to_allow_tf32():
    matmul = ember.backends.cuda.matmul
    assert ember.get_float32_matmul_precision() == "highest"
    assert matmul.allow_tf32 is False
    try:
        ember.set_float32_matmul_precision("high")
        assert matmul.allow_tf32 is True
        matmul.allow_tf32 = False
        assert ember.get_float32_matmul_precision() == "highest"
        matmul.allow_tf32 = True
        assert ember.get_float32_matmul_precision() == "high"
        with pytest.warns(UserWarning, match="no effect"):
            ember.set_float32_matmul_precision("fastest")
        assert ember.get_float32_matmul_precision() == "high"
    finally:
        ember.set_float32_matmul_precision("highest")
    assert matmul.allow_bf16_reduced_precision_reduction is True
    with pytest.raises(AttributeError, match="Unknown attribute"):
        matmul.not_a_flag = 1
    with pytest.raises(AttributeError, match="Unknown attribute"):
        matmul.not_a_flag


@pytest.mark.parity
def test_backend_defaults_match_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    tc, ec = torch.backends.cudnn, ember.backends.cudnn
    for flag in ("benchmark", "deterministic", "enabled", "allow_tf32"):
        assert getattr(ec, flag) == getattr(tc, flag), flag
    tm, em = torch.backends.cuda.matmul, ember.backends.cuda.matmul
    for flag in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                 "allow_bf16_reduced_precision_reduction"):
        assert getattr(em, flag) == getattr(tm, flag), flag
    assert ember.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    assert ember.backends.mps.is_available() == torch.backends.mps.is_available()
