"""``torchtext.legacy`` stand-in: Field, BucketIterator (data) and Multi30k (datasets), enough
for programs that build vocabularies and padded batches the legacy way."""
from . import data, datasets  # noqa: F401
