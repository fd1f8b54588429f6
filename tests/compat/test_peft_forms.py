"""Gap classes Hugging Face PEFT (0.21) found under the alias: BOFT imports
``torch.utils.cpp_extension.load`` to build its CUDA kernel and uses plain tensor code when the
build raises."""
from __future__ import annotations

import importlib

import pytest

from ember.utils import cpp_extension


def test_cpp_extension_is_importable_under_the_torch_path():
    mod = importlib.import_module("ember.utils.cpp_extension")
    assert mod.load is cpp_extension.load
    assert cpp_extension.CUDA_HOME is None and cpp_extension.ROCM_HOME is None


@pytest.mark.parametrize("fn, args", [
    ("load", ("fbd_cuda", ["fbd_cuda.cpp", "fbd_cuda_kernel.cu"])),
    ("load_inline", ("ext", "int f() { return 1; }")),
])
def test_building_an_extension_raises_a_runtime_error_naming_it(fn, args):
    with pytest.raises(RuntimeError, match=rf"cpp_extension\.{fn}: cannot build extension "
                                           rf"'{args[0]}'.*C\+\+/CUDA"):
        getattr(cpp_extension, fn)(*args, verbose=True)

