"""ember.utils.benchmark (torch.utils.benchmark): Timer over Python statements, Measurement,
and Compare for tables of measurements. Times are wall clock (timeit.default_timer)."""
from .utils.common import Measurement, TaskSpec
from .utils.compare import Compare
from .utils.timer import Language, Timer

__all__ = ["Compare", "Language", "Measurement", "TaskSpec", "Timer"]
