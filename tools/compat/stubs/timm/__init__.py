"""Offline stand-in for the three timm layers DiT's models.py imports (timm is not installed
here): `timm.models.vision_transformer.PatchEmbed`, `Attention` and `Mlp`, written against the
torch API from timm's documented behaviour (constructor arguments, attribute names), so they
serve both implementations."""
