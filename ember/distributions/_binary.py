"""The probs/logits pair shared by the distributions with one success probability."""

from __future__ import annotations

from .utils import lazy_property, logits_to_probs, probs_to_logits


class BinaryProbsLogits:
    """Either ``probs`` or ``logits`` is given (and stored as ``_param``); the other is
    computed on first use."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _expand_param(self, new, batch_shape):
        """Put whichever of probs/logits this instance was given, expanded, onto ``new``."""
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape))
                new._param = new.__dict__[name]
