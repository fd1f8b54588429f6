"""Stand-in for wandb (not installed here, and it would reach the network): ``wandb.init``
returns a run whose ``config.update`` and ``log`` keep what they are given in memory, and
``wandb.Histogram`` / ``wandb.Image`` only hold their data. Enough for training scripts that
log to Weights & Biases as a side effect (milesial/Pytorch-UNet's train.py)."""


class _Config(dict):
    def update(self, values=None, allow_val_change=False, **kw):
        super().update(values or {}, **kw)


class Run:
    def __init__(self, project=None, config=None, **kw):
        self.project = project
        self.config = _Config(config or {})
        self.history = []

    def log(self, data, step=None, commit=None):
        self.history.append(dict(data))

    def finish(self):
        pass


run = None
config = _Config()


def init(project=None, config=None, **kw):
    global run
    run = Run(project=project, config=config, **kw)
    return run


def log(data, step=None, commit=None):
    if run is None:
        raise RuntimeError("wandb stand-in: call wandb.init() before wandb.log()")
    run.log(data, step=step, commit=commit)


def finish():
    pass


class Histogram:
    def __init__(self, sequence=None, np_histogram=None, num_bins=64):
        self.sequence = sequence


class Image:
    def __init__(self, data_or_path, mode=None, caption=None):
        self.data = data_or_path
        self.caption = caption
