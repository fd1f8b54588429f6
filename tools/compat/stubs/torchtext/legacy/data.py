"""Legacy Field, Dataset, Example and BucketIterator: a Field tokenizes and lowercases, builds a
vocabulary (specials first: <unk>, <pad>, then init/eos tokens; words by falling frequency, then
alphabetically, at least min_freq times) and pads a batch into one tensor (with the lengths
beside it for include_lengths=True, what pack_padded_sequence takes); BucketIterator batches
examples of similar source length, in a fixed order (no shuffling), each batch sorted by
sort_key, longest first, for sort_within_batch=True."""
import collections

import torch


class Vocab:
    def __init__(self, counter, specials, min_freq):
        self.itos = list(specials)
        words = sorted((w for w, c in counter.items() if c >= min_freq and w not in specials),
                       key=lambda w: (-counter[w], w))
        self.itos += words
        self.stoi = collections.defaultdict(int, {w: i for i, w in enumerate(self.itos)})
        self.freqs = counter

    def __len__(self):
        return len(self.itos)


class Field:
    def __init__(self, tokenize=str.split, init_token=None, eos_token=None, lower=False,
                 batch_first=False, pad_token="<pad>", unk_token="<unk>", include_lengths=False,
                 **kwargs):
        self.tokenize, self.lower, self.batch_first = tokenize, lower, batch_first
        self.include_lengths = include_lengths
        self.init_token, self.eos_token = init_token, eos_token
        self.pad_token, self.unk_token = pad_token, unk_token
        self.vocab = None

    def preprocess(self, text):
        tokens = self.tokenize(text)
        return [t.lower() for t in tokens] if self.lower else tokens

    def build_vocab(self, *datasets, min_freq=1, **kwargs):
        counter = collections.Counter()
        for ds in datasets:
            for name, field in ds.fields.items():
                if field is self:
                    for ex in ds.examples:
                        counter.update(getattr(ex, name))
        specials = [self.unk_token, self.pad_token] + [
            t for t in (self.init_token, self.eos_token) if t is not None]
        self.vocab = Vocab(counter, specials, min_freq)

    def process(self, batch, device=None):
        seqs = [([self.init_token] if self.init_token else []) + list(x) +
                ([self.eos_token] if self.eos_token else []) for x in batch]
        width = max(len(s) for s in seqs)
        ids = [[self.vocab.stoi[w] for w in s] + [self.vocab.stoi[self.pad_token]] *
               (width - len(s)) for s in seqs]
        t = torch.tensor(ids, dtype=torch.long, device=device)
        t = t if self.batch_first else t.t().contiguous()
        if self.include_lengths:
            return t, torch.tensor([len(s) for s in seqs], dtype=torch.long, device=device)
        return t


class Example:
    pass


class Dataset:
    def __init__(self, examples, fields):
        self.examples, self.fields = examples, dict(fields)

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        return self.examples[i]


class Batch:
    def __init__(self, examples, dataset, device):
        self.batch_size = len(examples)
        for name, field in dataset.fields.items():
            setattr(self, name, field.process([getattr(e, name) for e in examples], device))


class BucketIterator:
    def __init__(self, dataset, batch_size, device=None, sort_within_batch=False, sort_key=None,
                 **kwargs):
        self.dataset, self.batch_size, self.device = dataset, batch_size, device
        first = next(iter(dataset.fields))
        order = sorted(range(len(dataset)), key=lambda i: len(getattr(dataset[i], first)))
        self.batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
        if sort_within_batch:
            key = sort_key or (lambda ex: len(getattr(ex, first)))
            self.batches = [sorted(b, key=lambda i: key(dataset[i]), reverse=True)
                            for b in self.batches]

    def __len__(self):
        return len(self.batches)

    def __iter__(self):
        for idx in self.batches:
            yield Batch([self.dataset[i] for i in idx], self.dataset, self.device)

    @classmethod
    def splits(cls, datasets, batch_size=None, device=None, **kwargs):
        return tuple(cls(d, batch_size, device, **kwargs) for d in datasets)
