"""Differentiable ops by family; importing this package registers them all."""
from . import registry  # noqa: F401
from . import elementwise, unary, reduce, movement, indexing, creation, random  # noqa: F401
from . import products  # noqa: F401
from . import operators  # noqa: F401  (needs the functions above)
from . import sorting, shape  # noqa: F401
from . import numeric, special  # noqa: E402,F401
from . import linalg  # noqa: F401  (last: its legacy names ember.norm, ember.det win)
