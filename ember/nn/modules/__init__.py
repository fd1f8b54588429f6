"""Layer classes of ``ember.nn`` (import them from ``ember.nn``)."""
from . import (activation, batchnorm, container, distance, dropout, flatten, instancenorm,
               linear, loss, module, normalization, sparse)
from .activation import *  # noqa: F403
from .batchnorm import *  # noqa: F403
from .container import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .instancenorm import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import Module  # noqa: F401
from .normalization import *  # noqa: F403
from .sparse import *  # noqa: F403
from . import (adaptive, attention, channelshuffle, conv, fold, padding, pixelshuffle, pooling, rnn,
               transformer, upsampling)

# every class a layer file lists in its __all__
__all__ = sorted({name for m in (adaptive, activation, batchnorm, container, distance, dropout,
                                 flatten, instancenorm, linear, loss, module, normalization, sparse,
                                 attention, channelshuffle, conv, fold, padding, pixelshuffle,
                                 pooling, rnn, transformer, upsampling)
                  for name in getattr(m, "__all__", ())})

from .conv import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .attention import *  # noqa: F403
from .adaptive import *  # noqa: F403
from .transformer import *  # noqa: F403
from .padding import *  # noqa: F403
from .upsampling import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .channelshuffle import *  # noqa: F403
from .fold import *  # noqa: F403

from . import linear_cross_entropy_options  # noqa: F401
from .linear_cross_entropy_options import LinearCrossEntropyOptions  # noqa: F401
from . import lazy
from .lazy import *  # noqa: F403

# torch defines each lazy layer beside its eager class (nn.modules.linear.LazyLinear, ...);
# they live in lazy.py here because they subclass those classes
for _name in lazy.__all__:
    _home = {"Linear": linear, "Conv": conv, "BatchNorm": batchnorm,
             "InstanceNorm": instancenorm}
    for _prefix, _module in _home.items():
        if _name.startswith("Lazy" + _prefix):
            setattr(_module, _name, getattr(lazy, _name))
__all__ = sorted(set(__all__) | set(lazy.__all__) | {"LinearCrossEntropyOptions"})
del _name, _home, _prefix, _module
