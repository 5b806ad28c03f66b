"""Splitting one ingestion job over N processes (N machines) without coordination.

Shard ``I`` of ``N`` (1-based) takes the inputs whose stable hash of their key (the resolved
path of the file, which is also what a manifest line names) falls in it: the first 8 bytes of
SHA-256 of the key as UTF-8, modulo ``N``. Every process computes the same split from the same
input list, so ``kgrag ingest --shard 1/N`` ... ``--shard N/N`` together ingest each file
exactly once. The processes must see the files under the same paths (a shared mount), since a
document's id is derived from its path.
"""

from __future__ import annotations

import hashlib
import re

from pydantic import Field, model_validator

from kgrag.core import Frozen

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class Shard(Frozen):
    """Shard ``index`` (1-based) of ``count``."""

    index: int = Field(ge=1)
    count: int = Field(ge=1)

    @model_validator(mode="after")
    def _index_in_range(self) -> Shard:
        if self.index > self.count:
            raise ValueError(f"shard {self.index} of {self.count} does not exist")
        return self

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"I/N"`` with ``1 <= I <= N``; anything else raises ValueError saying why."""
        m = _SPEC.match(text)
        if not m:
            raise ValueError(f"{text!r} is not I/N (for example 1/2)")
        index, count = int(m.group(1)), int(m.group(2))
        if count < 1:
            raise ValueError(f"{text!r}: the number of shards must be at least 1")
        if not 1 <= index <= count:
            raise ValueError(f"{text!r}: the shard must be between 1 and {count}")
        return cls(index=index, count=count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, key: str) -> bool:
        """Whether the input with this key (its resolved path) belongs to this shard."""
        return shard_of(key, self.count) == self.index


def shard_of(key: str, count: int) -> int:
    """The 1-based shard of ``count`` that ``key`` falls in (the same on every machine)."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1
