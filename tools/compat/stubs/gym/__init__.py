"""Stand-in for gym 0.26 (not installed here) over gymnasium, its maintained continuation, which
kept 0.26's API: reset returns (obs, info) and step returns (obs, reward, terminated,
truncated, info). Programs written for gym < 0.26 (env.seed, four-tuple step) fail here as they
would under gym 0.26 itself. `make` takes 0.26's `autoreset` flag, which gymnasium 1.x dropped
from make and offers as a wrapper instead."""
import sys

import gymnasium
from gymnasium import Env, Space, Wrapper, envs, error, spaces, utils, wrappers  # noqa: F401

for _name in ("spaces", "wrappers", "envs", "error", "utils"):
    sys.modules[f"{__name__}.{_name}"] = getattr(gymnasium, _name)

__version__ = "0.26.2"


def make(id, max_episode_steps=None, autoreset=False, **kwargs):
    env = gymnasium.make(id, max_episode_steps=max_episode_steps, **kwargs)
    if autoreset:
        env = gymnasium.wrappers.Autoreset(env)
    return env
