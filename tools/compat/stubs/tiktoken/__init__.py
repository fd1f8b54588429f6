"""Offline stand-in for tiktoken.

`get_encoding("gpt2")` (whose merge table tiktoken downloads) is byte-level: the vocabulary size
of GPT-2, 50257, with `<|endoftext|>` as id 50256 and byte b as id b. `Encoding(name=...,
mergeable_ranks=..., special_tokens=..., explicit_n_vocab=...)`, as whisper's tokenizer builds
it from the ranks file it ships, encodes with that table (the longest token at each position)
and its special tokens' ids, and decodes any of the table's tokens."""
from __future__ import annotations

_EOT = "<|endoftext|>"


class Encoding:
    def __init__(self, name="gpt2", *, pat_str=None, mergeable_ranks=None, special_tokens=None,
                 explicit_n_vocab=None):
        self.name = name
        self._special = dict(special_tokens) if special_tokens is not None else {_EOT: 50256}
        self._special_text = {i: s for s, i in self._special.items()}
        ranks = mergeable_ranks or {}
        self._ranks = {tok: i for tok, i in ranks.items() if len(tok) > 0}
        self._longest = max(map(len, self._ranks), default=1)
        self._byte_id = [ranks.get(bytes([b]), b) for b in range(256)]
        self._id_bytes = {i: tok for tok, i in ranks.items()}
        self._id_bytes.update({i: bytes([b]) for b, i in enumerate(self._byte_id)})
        self.n_vocab = explicit_n_vocab or max([50256, *self._special.values()]) + 1
        self.max_token_value = self.n_vocab - 1
        self.eot_token = self._special.get(_EOT)

    @property
    def special_tokens_set(self):
        return set(self._special)

    def encode_single_token(self, piece):
        if isinstance(piece, str) and piece in self._special:
            return self._special[piece]
        raw = piece.encode("utf-8") if isinstance(piece, str) else bytes(piece)
        if len(raw) != 1:
            raise KeyError(f"not a single token of this byte-level stand-in: {piece!r}")
        return self._byte_id[raw[0]]

    def encode_ordinary(self, text):
        """One token per byte, or with a ranks table the longest token of the table at each
        position (greedy, not BPE's merge order, but words come out as one token as there)."""
        raw = text.encode("utf-8")
        if not self._ranks:
            return [self._byte_id[b] for b in raw]
        ids, at = [], 0
        while at < len(raw):
            for n in range(min(self._longest, len(raw) - at), 0, -1):
                if raw[at:at + n] in self._ranks:
                    ids.append(self._ranks[raw[at:at + n]])
                    at += n
                    break
        return ids

    def encode(self, text, allowed_special=(), disallowed_special=()):
        """Bytes, with `<|endoftext|>` (and any special allowed by name, or all with "all")
        read as its token."""
        allowed = self.special_tokens_set if allowed_special == "all" else \
            set(allowed_special) | {_EOT}
        ids, rest = [], text
        while rest:
            hits = [(rest.find(s), s) for s in allowed if s in self._special and s in rest]
            if not hits:
                ids.extend(self.encode_ordinary(rest))
                break
            at, special = min(hits)
            ids.extend(self.encode_ordinary(rest[:at]))
            ids.append(self._special[special])
            rest = rest[at + len(special):]
        return ids

    def decode_bytes(self, ids):
        out = bytearray()
        for i in ids:
            i = int(i)
            if i in self._special_text:
                out.extend(self._special_text[i].encode())
            else:
                out.extend(self._id_bytes.get(i, bytes([i % 256])))
        return bytes(out)

    def decode(self, ids, errors="replace"):
        return self.decode_bytes(ids).decode("utf-8", errors=errors)


def get_encoding(name):
    return Encoding()


def encoding_for_model(name):
    return Encoding()
