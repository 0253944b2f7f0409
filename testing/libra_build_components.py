"""Small deterministic KeywordExpander and TopicClusterer for tests of the LIBRA build (real code, no libraries).

CooccurrenceExpander: a word (3+ letters, not a stop word) that appears in at least ``min_count`` sentences
with a group's seed becomes that group's keyword, scored by the share of those sentences.
FirstWordClusterer: sentences grouped by their longest keyword-free word; a cluster maps to the group
whose keywords its members mention most.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Mapping, Sequence

from culturebias.domain.libra_build.keywords import ExpandedKeyword, SeedGroup
from culturebias.domain.libra_build.topics import TopicCluster, TopicClusters

_WORD = re.compile(r"[A-Za-zĀĒĪŌŪāēīōū]{3,}")
_STOP = frozenset("the and that were was are said with for not have this from they their would about according name".split())


class CooccurrenceExpander:
    def __init__(self, min_count: int = 3, per_group: int = 2):
        self.min_count = min_count
        self.per_group = per_group

    def describe(self) -> str:
        return f"cooccurrence(min_count={self.min_count}, per_group={self.per_group})"

    def expand(self, sentences: Sequence[str], seeds: Sequence[SeedGroup], *, seed: int = 0) -> list[ExpandedKeyword]:
        out: list[ExpandedKeyword] = []
        all_seeds = {k.lower() for g in seeds for k in g.keywords}
        for group in seeds:
            lowered = [k.lower() for k in group.keywords]
            with_seed = [s for s in sentences if any(k in s.lower() for k in lowered)]
            counts = Counter(w.lower() for s in with_seed for w in set(_WORD.findall(s)))
            ranked = sorted(
                ((n, w) for w, n in counts.items() if n >= self.min_count and w not in _STOP and w not in all_seeds),
                key=lambda item: (-item[0], item[1]),
            )
            for n, word in ranked[: self.per_group]:
                out.append(ExpandedKeyword(group=group.group, keyword=word, source="association",
                                           score=n / max(len(with_seed), 1), evidence="co-occurs with the seeds"))
        return out


class FirstWordClusterer:
    def describe(self) -> str:
        return "first-word clusters"

    def cluster(self, sentences: Sequence[str], groups: Mapping[str, Sequence[str]], *, seed: int = 0) -> TopicClusters:
        keys = [(_WORD.findall(s) or [""])[0].lower() for s in sentences]
        names = sorted({k for k, n in Counter(keys).items() if n >= 3})
        ids = {name: i for i, name in enumerate(names)}
        labels = tuple(ids.get(k, -1) for k in keys)
        clusters = []
        for name, cid in ids.items():
            members = tuple(i for i, label in enumerate(labels) if label == cid)
            votes = Counter(
                group for i in members for group, words in groups.items()
                if any(w.lower() in sentences[i].lower() for w in words)
            )
            group = min(votes, key=lambda g: (-votes[g], g)) if votes else None
            clusters.append(TopicCluster(id=cid, members=members, terms=(name,), summary=sentences[members[0]],
                                         group=group, mapped_by="keywords" if group else None))
        coords = tuple((float(label), float(i % 7)) for i, label in enumerate(labels))
        return TopicClusters(labels=labels, clusters=tuple(clusters), method=self.describe(), coordinates=coords)
