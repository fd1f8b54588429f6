"""Stand-in for `timm.models.registry.register_model`: records a model function by name and
returns it unchanged."""
MODELS = {}


def register_model(fn):
    MODELS[fn.__name__] = fn
    return fn
