"""ember.optim: optimization algorithms and learning-rate schedulers (``torch.optim``'s API).

Every optimizer updates each parameter with one fused numba kernel (``_kernels.py``) working
in place on the parameter, its gradient and its state buffers.
"""
from __future__ import annotations

from . import lr_scheduler  # noqa: F401
from .adadelta import Adadelta  # noqa: F401
from .adagrad import Adagrad  # noqa: F401
from .adam import Adam  # noqa: F401
from .adamax import Adamax  # noqa: F401
from .adafactor import Adafactor  # noqa: F401
from .adamw import AdamW  # noqa: F401
from .asgd import ASGD  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from .nadam import NAdam  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .radam import RAdam  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .rprop import Rprop  # noqa: F401
from .sgd import SGD  # noqa: F401
from .sparse_adam import SparseAdam  # noqa: F401

__all__ = ["ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS",
           "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam", "lr_scheduler",
           "swa_utils"]


def __getattr__(name):
    # swa_utils builds on ember.nn, which is imported after ember.optim
    if name == "swa_utils":
        import importlib
        return importlib.import_module(".swa_utils", __name__)
    raise AttributeError(f"module 'ember.optim' has no attribute {name!r}")
