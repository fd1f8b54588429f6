"""``torchtext.data.metrics.bleu_score``: corpus BLEU (Papineni et al. 2002) over token lists.

For each n up to max_n, a candidate's n-gram counts are clipped by the largest count of that
n-gram in any of its references and summed over the corpus; the score is the weighted geometric
mean of the n-gram precisions times the brevity penalty exp(1 - r / c) when the candidates' total
length c is under r, the sum over candidates of the reference length closest to each. Any n
without a single match gives 0, as torchtext's does."""
import collections
import math


def _ngrams(tokens, n):
    return collections.Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def bleu_score(candidate_corpus, references_corpus, max_n=4, weights=(0.25,) * 4):
    if len(weights) != max_n:
        raise ValueError("Length of the weights list must be equal to max_n")
    if len(candidate_corpus) != len(references_corpus):
        raise ValueError("The length of candidate and reference corpus should be the same")
    matched = [0] * max_n
    total = [0] * max_n
    cand_len = ref_len = 0
    for candidate, references in zip(candidate_corpus, references_corpus):
        cand_len += len(candidate)
        ref_len += len(min(references, key=lambda ref: abs(len(ref) - len(candidate))))
        for n in range(1, max_n + 1):
            counts = _ngrams(candidate, n)
            best = collections.Counter()
            for ref in references:
                best |= _ngrams(ref, n)     # the largest count of each n-gram over references
            matched[n - 1] += sum(min(c, best[g]) for g, c in counts.items())
            total[n - 1] += max(len(candidate) - n + 1, 0)
    if min(matched) == 0:
        return 0.0
    log_precision = sum(w * math.log(m / t) for w, m, t in zip(weights, matched, total))
    penalty = 1.0 if cand_len >= ref_len else math.exp(1 - ref_len / max(cand_len, 1))
    return penalty * math.exp(log_precision)
