"""``--shard I/N``: the split of one input list over N processes (kgrag.ingest.shards)."""

from __future__ import annotations

import pytest

from kgrag.ingest.shards import Shard, shard_of


@pytest.mark.parametrize("text", ["0/2", "3/2", "1/0", "x", "", "1/", "-1/2", "1.5/2", "1/2/3"])
def test_bad_shards_are_refused_saying_why(text: str) -> None:
    with pytest.raises(ValueError) as e:
        Shard.parse(text)
    assert repr(text) in str(e.value)


def test_a_shard_parses_and_prints_as_written() -> None:
    assert Shard.parse(" 2 / 3 ") == Shard(index=2, count=3)
    assert str(Shard.parse("1/1")) == "1/1"


def test_every_key_falls_in_exactly_one_shard_and_the_split_is_stable() -> None:
    keys = [f"/data/corpus/report_{i:03d}.txt" for i in range(400)]
    shards = [Shard(index=i, count=3) for i in (1, 2, 3)]
    owners = [[s.index for s in shards if s.owns(k)] for k in keys]
    assert all(len(o) == 1 for o in owners)
    sizes = [sum(1 for o in owners if o == [i]) for i in (1, 2, 3)]
    assert min(sizes) > 100, sizes  # roughly even
    # SHA-256 based, so the same on every machine and Python run (no PYTHONHASHSEED)
    assert shard_of("/data/corpus/report_000.txt", 2) == shard_of("/data/corpus/report_000.txt", 2)
    assert [shard_of(f"k{i}", 2) for i in range(8)] == [1, 1, 1, 1, 2, 1, 2, 2]  # pinned
    assert Shard(index=1, count=1).owns("anything")
