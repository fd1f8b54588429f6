"""Start-up hook of torch runs (stubs/ is on PYTHONPATH): shift the program's seeds by
COMPAT_SEED (see compat_seedshift). Ember runs use shim/sitecustomize.py, which does the same."""
import compat_seedshift

compat_seedshift.install()
