"""``ember.distributed._composable``: where torch first exposed fully_shard (see
``ember.distributed.fsdp``)."""
