"""Offline stand-in for tiktoken.load: reads a BPE ranks file already on disk (one
"<base64 token> <rank>" per line); there is no download."""
from __future__ import annotations

import base64


def load_tiktoken_bpe(tiktoken_bpe_file, expected_hash=None):
    with open(tiktoken_bpe_file, "rb") as fh:
        lines = fh.read().splitlines()
    return {base64.b64decode(tok): int(rank) for tok, rank in
            (line.split() for line in lines if line)}
