"""``ember.hub``: torch.hub's cache directory, checkpoint downloads and local hub entry points.

`load_state_dict_from_url` downloads a checkpoint once into `<hub dir>/checkpoints/` and loads it
with `ember.load` (torch's checkpoint format); `load(dir, model, source="local")` imports
`hubconf.py` from a directory and calls its entry point. The hub directory is, in order: the
one `set_dir` chose, `$TORCH_HOME/hub`, `$XDG_CACHE_HOME/torch/hub`, `~/.cache/torch/hub` (torch's
locations, so checkpoints torch already downloaded are found).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import urllib.parse
import urllib.request

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url",
           "set_dir"]

_hub_dir: str | None = None
_HASH_IN_NAME = re.compile(r"-([a-f0-9]*)\.")   # name-<sha256 prefix>.ext
HASH_REGEX = _HASH_IN_NAME   # torch.hub's name for it (timm imports it)
urlparse = urllib.parse.urlparse   # torch.hub has it in its namespace too (timm imports it)


def _get_torch_home() -> str:
    """$TORCH_HOME, else $XDG_CACHE_HOME/torch (~/.cache/torch)."""
    if os.getenv("TORCH_HOME"):
        return os.path.expanduser(os.environ["TORCH_HOME"])
    cache = os.getenv("XDG_CACHE_HOME", os.path.join("~", ".cache"))
    return os.path.join(os.path.expanduser(cache), "torch")


def get_dir() -> str:
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d) -> None:
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Download `url` to `dst` through a temporary file in the same directory, renamed into
    place only when complete (and, with `hash_prefix`, only if its SHA-256 starts with it)."""
    dst = os.path.expanduser(os.fspath(dst))
    folder = os.path.dirname(os.path.abspath(dst))
    os.makedirs(folder, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url) as src:
            while chunk := src.read(1 << 20):
                out.write(chunk)
                digest.update(chunk)
        if hash_prefix is not None and not digest.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f"download_url_to_file: invalid hash value for {url}; got "
                               f"{digest.hexdigest()}, expected a SHA-256 starting with "
                               f"{hash_prefix!r}")
        shutil.move(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None, weights_only: bool = False):
    """The object saved at `url`, downloaded once into `model_dir` (default
    `<hub dir>/checkpoints`) and read with `ember.load`."""
    from .serialization import load as _load
    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    name = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        sys.stderr.write(f'Downloading: "{url}" to {cached}\n')
        match = _HASH_IN_NAME.search(name) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    return _load(cached, map_location=map_location, weights_only=weights_only)


def _hubconf(repo_or_dir: str, source: str, name: str):
    if source != "local":
        raise RuntimeError(f"ember.hub.{name}: only source='local' (a directory holding "
                           f"hubconf.py) is supported; got source={source!r}. Clone the "
                           f"repository and pass its path with source='local'.")
    path = os.path.join(os.path.expanduser(repo_or_dir), "hubconf.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"ember.hub.{name}: no hubconf.py in {repo_or_dir!r}")
    spec = importlib.util.spec_from_file_location("hubconf", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(os.path.dirname(path))
    return module


def _entries(module) -> dict:
    return {k: v for k, v in vars(module).items()
            if callable(v) and not k.startswith("_") and not isinstance(v, type(sys))}


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True,
         source="local"):
    """The entry points of `github`'s hubconf.py (a local directory here)."""
    return sorted(_entries(_hubconf(github, source, "list")))


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None,
         source="local"):
    """The docstring of entry point `model`."""
    return _entry(_hubconf(github, source, "help"), model, "help").__doc__


def _entry(module, model, name):
    entries = _entries(module)
    if model not in entries:
        raise RuntimeError(f"ember.hub.{name}: cannot find callable {model!r} in hubconf; "
                           f"got entry points {sorted(entries)}")
    return entries[model]


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Call entry point `model` of `repo_or_dir`'s hubconf.py with `args` and `kwargs`."""
    return _entry(_hubconf(repo_or_dir, source, "load"), model, "load")(*args, **kwargs)
