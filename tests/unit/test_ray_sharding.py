"""How the Ray executor cuts a call into shards: requests sharing a context travel together (prefix reuse on one
replica), small groups are packed, a group larger than a shard is cut at the shard size."""

from __future__ import annotations

import pytest

from culturebias.domain.requests import (
    ChatMessage,
    GenerationParams,
    GenerationRequest,
    LoglikelihoodRequest,
    PseudoLoglikelihoodRequest,
)

pytest.importorskip("ray")

from culturebias.adapters.ray.sharding import plan_shards, shard_key  # noqa: E402


def contexts_of(requests, shards):
    return [{requests[i].context for i in shard.members} for shard in shards]


def test_every_context_lies_in_one_shard_when_its_group_fits():
    requests = [LoglikelihoodRequest(c, s) for s in ("a", "b", "c") for c in ("x", "y", "z", "w")]  # interleaved
    shards = plan_shards(requests, batch_size=6)
    assert sorted(i for shard in shards for i in shard.members) == list(range(len(requests))), "each request once"
    owner = {}
    for shard in shards:
        for i in shard.members:
            assert owner.setdefault(requests[i].context, shard.number) == shard.number, "a context split across shards"
    assert [len(s.members) for s in shards] == [6, 6], "two groups of 3 per shard"
    assert contexts_of(requests, shards) == [{"x", "y"}, {"z", "w"}], "first-seen order"


def test_a_group_larger_than_a_shard_is_cut_at_the_shard_size():
    requests = [LoglikelihoodRequest("shared prompt", str(n)) for n in range(7)] + [LoglikelihoodRequest("other", "x")]
    shards = plan_shards(requests, batch_size=3)
    assert [s.members for s in shards] == [(0, 1, 2), (3, 4, 5), (6,), (7,)]


def test_masked_texts_and_generation_prompts_are_the_shared_part():
    assert shard_key(PseudoLoglikelihoodRequest("text", 0, 2)) == shard_key(PseudoLoglikelihoodRequest("text", 2, 4))
    chat = (ChatMessage("user", "hi"),)
    seeded = [GenerationRequest(messages=chat, params=GenerationParams(temperature=1.0, seed=s)) for s in range(3)]
    assert len({shard_key(r) for r in seeded}) == 1, "samples of one prompt go together"
    assert shard_key(GenerationRequest(prompt="a")) != shard_key(GenerationRequest(prompt="b"))
