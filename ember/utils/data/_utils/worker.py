"""``torch.utils.data._utils.worker``: worker information, by torch's names."""
from .._worker import ExceptionWrapper, WorkerInfo, get_worker_info  # noqa: F401
