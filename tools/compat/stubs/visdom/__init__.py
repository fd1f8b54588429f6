"""Stand-in for visdom's client (not installed here, and it talks to a plotting server over the
network): ``Visdom`` accepts the server and port it is given, and each plotting call (line,
scatter, heatmap, image, text, ...) keeps its arguments in memory and returns a window name, as
the real client does once the server has drawn. Enough for training scripts that plot as a side
effect (gram-ai/capsule-networks through torchnet's Visdom loggers)."""


class Visdom:
    def __init__(self, server="http://localhost", port=8097, env="main", **kw):
        self.server = server
        self.port = port
        self.env = env
        self.calls = []

    def _plot(self, kind):
        def call(*args, win=None, **kw):
            self.calls.append((kind, args, kw))
            return win or f"window_{len(self.calls)}"
        return call

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._plot(name)

    def win_exists(self, win, env=None):
        return win is not None

    def check_connection(self, timeout_seconds=0):
        return True

    def save(self, envs):
        return "saved"
