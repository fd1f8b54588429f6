"""``torch.utils.data._utils``'s import paths: programs import the collate functions from
``torch.utils.data._utils.collate`` and ``get_worker_info``/``ExceptionWrapper`` from
``..._utils.worker``; the code lives in ember/utils/data/_collate.py and _worker.py."""
import sys

from . import collate, worker  # noqa: F401
from .worker import ExceptionWrapper  # noqa: F401

IS_WINDOWS = sys.platform == "win32"
HAS_NUMPY = True
MP_STATUS_CHECK_INTERVAL = 5.0
