"""Layer classes of ``ember.nn`` (import them from ``ember.nn``)."""
from . import (activation, batchnorm, container, distance, dropout, flatten, instancenorm,
               linear, loss, module, normalization, sparse)
from .activation import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .module import Module  # noqa: F401
from .normalization import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from . import attention, conv, fold, padding, pixelshuffle, pooling, rnn, transformer, upsampling

# every class a layer file lists in its __all__ (the other engineer's files included)
__all__ = sorted({name for m in (activation, batchnorm, container, distance, dropout, flatten,
                                 instancenorm, linear, loss, module, normalization, sparse,
                                 attention, conv, fold, padding, pixelshuffle, pooling, rnn,
                                 transformer, upsampling)
                  for name in getattr(m, "__all__", ())})

from .conv import *  # noqa: E402,F401,F403
from .pooling import *  # noqa: E402,F401,F403
from .rnn import *  # noqa: E402,F401,F403
from .attention import *  # noqa: E402,F401,F403
from .transformer import *  # noqa: E402,F401,F403
from .padding import *  # noqa: E402,F401,F403
from .upsampling import *  # noqa: E402,F401,F403
from .pixelshuffle import *  # noqa: E402,F401,F403
from .fold import *  # noqa: E402,F401,F403
