"""Stand-in for sentencepiece (not installed here). llama2.c's data module only imports it (the
corpus's training runs read pretokenized shards); gpt-fast's generate.py loads
``tokenizer.model``: a file that data.py's generators write as ``compat-byte-tokenizer`` is a
byte-level tokenizer (id = byte + 3; 0 unk, 1 bos, 2 eos), any other model file is refused."""

_MAGIC = "compat-byte-tokenizer"


class SentencePieceProcessor:
    def __init__(self, model_file=None, **kwargs):
        path = model_file or kwargs.get("model_path")
        try:
            with open(path) as f:
                ok = f.read(len(_MAGIC)) == _MAGIC
        except (OSError, TypeError, UnicodeDecodeError):
            ok = False
        if not ok:
            raise RuntimeError("sentencepiece stand-in: only the compat runner's byte-level "
                               f"tokenizer files can be loaded; got {path!r}")

    def EncodeAsIds(self, text):
        return [b + 3 for b in text.encode("utf-8")]

    encode = EncodeAsIds

    def DecodeIds(self, ids):
        return bytes(i - 3 for i in ids if 3 <= i < 259).decode("utf-8", errors="replace")

    decode = DecodeIds

    def bos_id(self):
        return 1

    def eos_id(self):
        return 2

    def vocab_size(self):
        return 259
