"""torch.utils submodules that libraries import at module level resolve in ember (the corpus's
EfficientNet-PyTorch imports `torch.utils.model_zoo`, ptflops `torch.utils._python_dispatch`):
a missing one fails the whole import before any model runs."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import ember

# each imported at module level by a library people install (model zoos' load_url, DLPack
# interop, dispatch-mode based counters, checkpointing, pytree utilities, tensorboard logging)
_IMPORTED_BY_LIBRARIES = ["model_zoo", "dlpack", "_python_dispatch", "_pytree", "checkpoint",
                          "hooks", "data", "tensorboard", "cpp_extension", "flop_counter",
                          "benchmark"]


@pytest.mark.parametrize("name", _IMPORTED_BY_LIBRARIES)
def test_utils_submodule_imports(name):
    module = importlib.import_module(f"ember.utils.{name}")
    assert module.__name__ == f"ember.utils.{name}"


def test_model_zoo_load_url_reads_a_saved_state_dict(tmp_path):
    from ember.utils import model_zoo
    state = {"weight": ember.arange(6.0).reshape(2, 3)}
    ember.save(state, tmp_path / "weights.pt")
    loaded = model_zoo.load_url((tmp_path / "weights.pt").as_uri(),
                                model_dir=str(tmp_path / "cache"), progress=False)
    np.testing.assert_array_equal(loaded["weight"].numpy(), state["weight"].numpy())
    assert (tmp_path / "cache" / "weights.pt").exists()   # cached under model_dir


def test_dlpack_round_trip_shares_memory():
    from ember.utils.dlpack import DLDeviceType, from_dlpack, to_dlpack
    t = ember.zeros(4)
    back = from_dlpack(to_dlpack(t))
    t[1] = 5.0
    assert back[1].item() == 5.0
    assert t.__dlpack_device__()[0] == DLDeviceType.kDLCPU


def test_dispatch_mode_subclasses_but_refuses_to_enter():
    from ember.utils._python_dispatch import TorchDispatchMode, is_traceable_wrapper_subclass

    class Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    mode = Counter()
    with pytest.raises(NotImplementedError, match="Counter: ember has no aten operator dispatch"):
        with mode:
            pass
    assert not is_traceable_wrapper_subclass(ember.ones(2))


@pytest.mark.parity
@pytest.mark.parametrize("name", _IMPORTED_BY_LIBRARIES)
def test_utils_submodule_exists_in_torch(name):
    pytest.importorskip("torch")
    importlib.import_module(f"torch.utils.{name}")


@pytest.mark.parity
def test_dlpack_device_codes_match_torch():
    torch = pytest.importorskip("torch")
    from ember.utils.dlpack import DLDeviceType
    theirs = {k: int(v) for k, v in torch.utils.dlpack.DLDeviceType.__members__.items()}
    assert {k: int(v) for k, v in DLDeviceType.__members__.items()} == theirs
