"""``ember.nn``: modules, layers, losses and their functional forms (paper, section 4.1)."""
from . import parameter  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from . import modules  # noqa: F401
from .modules import *  # noqa: F403
from .modules import Module  # noqa: F401
from . import functional, init, utils  # noqa: F401
