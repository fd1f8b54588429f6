"""Import-only stand-in: llama2.c's data module imports sentencepiece for its tokenizer, which
the corpus's training runs never load (they read pretokenized shards)."""


class SentencePieceProcessor:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("sentencepiece stand-in: no tokenizer models in the compat runner")
