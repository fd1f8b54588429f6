"""``ember.distributed.checkpoint``: sharded (distributed) checkpoints are not implemented in
ember; the names libraries import at import time exist and raise when used
(``ember.save``/``ember.load`` of a state dict per rank is what ember serves)."""
