"""ember.optim: optimization algorithms and learning-rate schedulers (``torch.optim``'s API).

Every optimizer updates each parameter with one fused numba kernel (``_kernels.py``) working
in place on the parameter, its gradient and its state buffers.
"""
from __future__ import annotations

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adafactor import Adafactor
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from ._stateless import swap_in_optimizer_params_and_state
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam",
           "lr_scheduler", "swa_utils", "swap_in_optimizer_params_and_state"]


def __getattr__(name):
    # swa_utils builds on ember.nn, which is imported after ember.optim
    if name == "swa_utils":
        import importlib
        return importlib.import_module(".swa_utils", __name__)
    raise AttributeError(f"module 'ember.optim' has no attribute {name!r}")
