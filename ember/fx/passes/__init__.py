"""Graph passes: ``shape_prop.ShapeProp`` records each node's shape and dtype."""
from . import shape_prop  # noqa: F401
