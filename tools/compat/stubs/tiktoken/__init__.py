"""Offline stand-in for tiktoken's GPT-2 encoding (which downloads its merge table): a byte-level
encoding with the same vocabulary size, 50257, and `<|endoftext|>` as id 50256."""
from __future__ import annotations

_EOT = "<|endoftext|>"


class Encoding:
    name = "gpt2"
    n_vocab = 50257
    eot_token = 50256
    max_token_value = 50256

    def encode(self, text, allowed_special=(), disallowed_special=()):
        ids = []
        for k, piece in enumerate(text.split(_EOT)):
            if k:
                ids.append(self.eot_token)
            ids.extend(piece.encode("utf-8"))
        return ids

    def encode_ordinary(self, text):
        return list(text.encode("utf-8"))

    def decode(self, ids):
        out = bytearray()
        for i in ids:
            out.extend(_EOT.encode() if i == self.eot_token else bytes([i % 256]))
        return out.decode("utf-8", errors="replace")

    def decode_bytes(self, ids):
        return bytes(i % 256 for i in ids)


def get_encoding(name):
    return Encoding()


def encoding_for_model(name):
    return Encoding()
