"""``ember.nn``: modules, layers, losses and their functional forms (paper, section 4.1)."""
from . import parameter  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from . import modules  # noqa: F401
from .modules import *  # noqa: F403
from .modules import Module  # noqa: F401
from . import functional, init, utils  # noqa: F401


def factory_kwargs(kwargs):
    """The tensor-factory keyword arguments (``device``, ``dtype``, ``memory_format``) of
    ``kwargs``, merged with those in its optional ``factory_kwargs`` entry, for a module that
    forwards them to its parameters' constructors.

    Raises TypeError for any other key, or for a key given both ways.

    Example:
        >>> import ember
        >>> ember.nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"dtype": ember.float64}})
        {'device': 'cpu', 'dtype': ember.float64}
    """
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unexpected = set(kwargs) - simple - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"factory_kwargs: unexpected kwargs {unexpected}; expected only "
                        f"{sorted(simple)} and 'factory_kwargs'.")
    merged = {k: v for k, v in kwargs.items() if k in simple}
    for key, value in (kwargs.get("factory_kwargs") or {}).items():
        if key in merged:
            raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
        merged[key] = value
    return merged
