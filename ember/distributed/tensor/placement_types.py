"""Placements of a DTensor: how a tensor is laid over a device mesh (``Shard(dim)``,
``Replicate()``, ``Partial(reduce_op)``). ember has no DTensor (see ``ember.distributed.tensor``),
but the placements are plain records that programs import and compare, so they are real."""
from __future__ import annotations

__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class Placement:
    """Base class of the placements; the predicates say which kind an instance is. Two
    placements are equal when they are of one class with equal fields."""

    __slots__ = ()

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other):
        return type(other) is type(self) and other._fields() == self._fields()

    def __hash__(self):
        return hash((type(self).__name__,) + self._fields())

    def is_shard(self, dim: int | None = None) -> bool:
        return False

    def is_replicate(self) -> bool:
        return False

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return False


class Shard(Placement):
    """The tensor is split along `dim` into one chunk per mesh rank (as ``tensor.chunk``)."""

    __slots__ = ("dim",)

    def __init__(self, dim: int = 0):
        self.dim = dim

    def is_shard(self, dim: int | None = None) -> bool:
        return dim is None or dim == self.dim

    @staticmethod
    def local_shard_size_and_offset(curr_local_size: int, num_chunks: int,
                                    rank: int) -> tuple[int, int]:
        """(size, offset) of rank's chunk when `curr_local_size` is cut into `num_chunks`
        chunks of ceil(size / num_chunks) (the last ones shorter or empty)."""
        full = -(-curr_local_size // num_chunks)
        offset = min(full * rank, curr_local_size)
        return min(full, curr_local_size - offset), offset

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):
        return f"S({self.dim})"


class Replicate(Placement):
    """Every mesh rank holds the whole tensor."""

    __slots__ = ()

    def is_replicate(self) -> bool:
        return True

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"


class Partial(Placement):
    """Each mesh rank holds a partial value; the tensor is their reduction (`reduce_op`)."""

    __slots__ = ("reduce_op",)

    def __init__(self, reduce_op: str = "sum"):
        self.reduce_op = reduce_op

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return reduce_op is None or reduce_op == self.reduce_op

    def __repr__(self):
        return f"Partial({self.reduce_op})"

    def __str__(self):
        return f"P({self.reduce_op})"


class _StridedShard(Placement):
    """Shards that interleave: one chunk from each of `split_factor` groups along `dim` (how
    FSDP shards a tensor TP sharded first). Private in torch, imported by transformers; as in
    torch it is not a Shard (``is_shard()`` is False)."""

    __slots__ = ("dim", "split_factor")

    def __init__(self, dim: int, *, split_factor: int = 1, sf: int | None = None):
        self.dim = dim
        self.split_factor = split_factor if sf is None else sf

    def __repr__(self):
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"

    def __str__(self):
        return f"_S({self.dim}, {self.split_factor})"
