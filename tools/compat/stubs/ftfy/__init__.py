"""Stand-in for ftfy (not installed here), which CLIP's tokenizer calls on every text: its
fix_text repairs mojibake and odd Unicode; the corpus's captions are plain ASCII, which it
returns unchanged, so the stand-in returns the text as given."""


def fix_text(text, *args, **kwargs):
    return text
