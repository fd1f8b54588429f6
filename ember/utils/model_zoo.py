"""``ember.utils.model_zoo``: the older home of ``load_url`` (``torch.utils.model_zoo``), which
model libraries still import to fetch pretrained weights (EfficientNet-PyTorch, pretrainedmodels).
It is ``ember.hub.load_state_dict_from_url`` under its old name."""
from __future__ import annotations

from ..hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]
