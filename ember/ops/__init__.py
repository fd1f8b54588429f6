"""Differentiable ops by family; importing this package registers them all."""
from . import registry  # noqa: F401
from . import elementwise, reduce, movement, indexing, creation, random, linalg  # noqa: F401
from . import operators  # noqa: F401  (needs the functions above)
from . import sorting, shape  # noqa: E402,F401
from . import numeric, special  # noqa: E402,F401
