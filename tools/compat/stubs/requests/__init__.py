"""No network in the compat runner: every request raises ConnectionError."""


class ConnectionError(OSError):
    pass


class RequestException(OSError):
    pass


def get(url, *args, **kwargs):
    raise ConnectionError(f"compat runner is offline; refused GET {url}")


post = head = get
