"""Adaptive softmax (Grave et al., 2016, "Efficient softmax approximation for GPUs")."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

import ember

from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-softmax over many classes split by frequency into a head and tail clusters.

    Classes below ``cutoffs[0]`` (the shortlist) are scored by the head, which also gives each
    tail cluster one logit; a class in cluster i is scored by log p(cluster i) + its log-softmax
    within the cluster, computed by a two-layer projection of width
    ``in_features // div_value ** (i + 1)``. Sort class indices by decreasing frequency.

    Args:
        in_features: size of each input sample.
        n_classes: number of classes.
        cutoffs: increasing class indices in [1, n_classes - 1] where the clusters start.
        div_value: how much narrower each successive cluster's projection is. Default 4.0.
        head_bias: whether the head's Linear has a bias. Default False.

    Shape: input (N, in_features) or (in_features); target (N) or () of class indices.
    ``forward`` returns a named tuple ``(output, loss)``: the target log-probabilities (N)
    and their negated mean. ``log_prob(input)`` gives all (N, n_classes) log-probabilities,
    ``predict(input)`` the most likely class.

    Example:
        >>> import ember
        >>> asm = AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[3, 6], div_value=2.0)
        >>> out = asm(ember.randn(4, 8), ember.tensor([0, 4, 7, 9]))
        >>> tuple(out.output.shape), tuple(asm.log_prob(ember.randn(4, 8)).shape)
        ((4,), (4, 10))
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of length "
                             "larger than 0")
        ints = all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in cutoffs)
        if not ints or cutoffs != sorted(cutoffs) or len(set(cutoffs)) != len(cutoffs) or \
                min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1:
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of "
                             "unique, positive integers sorted in an increasing order, where "
                             f"each value is between 1 and n_classes-1; got cutoffs={cutoffs} "
                             f"for n_classes={n_classes}.")
        factory = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, size, bias=False, **factory)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def _check(self, input, target):
        if target.ndim == 1:
            if input.ndim != 2:
                raise RuntimeError("AdaptiveLogSoftmaxWithLoss: 1D target tensor expects 2D "
                                   f"input tensors, but found inputs with size "
                                   f"{tuple(input.shape)}")
            if input.shape[0] != target.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   f"dimension; got input {tuple(input.shape)} and target "
                                   f"{tuple(target.shape)}.")
        elif target.ndim == 0:
            if input.ndim != 1:
                raise RuntimeError("AdaptiveLogSoftmaxWithLoss: 0D target tensor expects 1D "
                                   f"input tensors, but found inputs with size "
                                   f"{tuple(input.shape)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported; "
                               f"got target of shape {tuple(target.shape)}.")

    def forward(self, input, target):
        self._check(input, target)
        unbatched = target.ndim == 0
        if unbatched:
            input, target = input.unsqueeze(0), target.unsqueeze(0)
        labels = target.detach().numpy()
        if labels.size and (labels.min() < 0 or labels.max() >= self.n_classes):
            raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: Target values should be in "
                               f"[0, {self.n_classes - 1}], but values in range "
                               f"[{labels.min()}, {labels.max()}] were found.")
        # the head scores the shortlist class itself, or the cluster a tail class is in
        cluster = np.searchsorted(self.cutoffs, labels, side="right")        # 0 = shortlist
        head_column = np.where(cluster == 0, labels, self.shortlist_size + cluster - 1)
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = head_logprob.gather(1, ember.tensor(head_column).unsqueeze(1)).squeeze(1)
        for i in range(1, self.n_clusters + 1):
            rows = np.nonzero(cluster == i)[0]
            if rows.size == 0:
                continue
            row_index = ember.tensor(rows)
            local = ember.tensor(labels[rows] - self.cutoffs[i - 1]).unsqueeze(1)
            cluster_logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, row_index)),
                                            dim=1)
            within = cluster_logprob.gather(1, local).squeeze(1)
            output = output.index_add(0, row_index, within)
        loss = (-output).mean()
        if unbatched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, projection in enumerate(self.tail):
            cluster_logprob = F.log_softmax(projection(input), dim=1)
            column = self.shortlist_size + i
            parts.append(cluster_logprob + head_logprob[:, column:column + 1])
        return ember.cat(parts, dim=1)

    def log_prob(self, input):
        """Log-probabilities of every class: (N, n_classes), or (n_classes) for 1-D input."""
        unbatched = input.ndim == 1
        x = input.unsqueeze(0) if unbatched else input
        out = self._full_log_prob(x, self.head(x))
        return out.squeeze(0) if unbatched else out

    def predict(self, input):
        """The most likely class of each sample: (N), or () for 1-D input. Equal to
        ``log_prob(input).argmax(1)``: a shortlist class that wins in the head beats every
        class of every cluster, so only the other rows need their clusters scored."""
        unbatched = input.ndim == 1
        x = input.unsqueeze(0) if unbatched else input
        head_output = self.head(x)
        best = head_output.argmax(dim=1)
        need_tail = np.nonzero(best.numpy() >= self.shortlist_size)[0]
        if need_tail.size:
            rows = ember.tensor(need_tail)
            sub = x.index_select(0, rows)
            full = self._full_log_prob(sub, head_output.index_select(0, rows))
            best = best.index_copy(0, rows, full.argmax(dim=1))
        return best.squeeze(0) if unbatched else best
