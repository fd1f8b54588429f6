"""No network in the compat runner. A GET of a URL whose file name the run's data generator
wrote into COMPAT_SERVE_DIR (e.g. cora.tgz) is answered from that local file; every other
request raises ConnectionError."""
from __future__ import annotations

import io
import os
from pathlib import Path
from urllib.parse import urlparse


class RequestException(OSError):
    pass


class ConnectionError(RequestException):
    pass


class HTTPError(RequestException):
    pass


class Response:
    """The part of requests.Response programs use to save a download."""

    def __init__(self, url: str, data: bytes):
        self.url = url
        self.status_code = 200
        self.ok = True
        self.content = data
        self.raw = io.BytesIO(data)
        self.headers = {"content-length": str(len(data))}

    @property
    def text(self) -> str:
        return self.content.decode()

    def json(self):
        import json

        return json.loads(self.content)

    def raise_for_status(self) -> None:
        pass

    def iter_content(self, chunk_size=1, decode_unicode=False):
        step = chunk_size or len(self.content) or 1
        for k in range(0, len(self.content), step):
            yield self.content[k:k + step]

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def get(url, *args, **kwargs):
    served = os.environ.get("COMPAT_SERVE_DIR")
    if served:
        local = Path(served) / Path(urlparse(url).path).name
        if local.is_file():
            return Response(url, local.read_bytes())
    raise ConnectionError(f"compat runner is offline; refused GET {url}")


post = head = get
