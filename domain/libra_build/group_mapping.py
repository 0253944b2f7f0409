"""Mapping topic clusters to social groups (PROTOCOLS §4 construction step 3): the prompts, the strict
reply parser, the keyword-overlap fallback and the give-up rule for a generator that never answers usefully."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Sequence

from culturebias.domain.libra_build.terms import seed_key, seeds_in
from culturebias.domain.libra_build.topics import GeneratorUse

MAPPING_PROMPT = (
    "Sentences from a local corpus were grouped into topics. One topic:\n"
    "Keywords: {terms}\n"
    "Summary: {summary}\n\n"
    "Which social group is this topic about? Choose one:\n"
    "{choices}\n"
    "Answer with the number only."
)

SUMMARY_PROMPT = (
    "Sentences from one topic of a local corpus follow. Say in one sentence what they are about.\n"
    "Summary so far: {previous}\n"
    "New sentences:\n{sentences}\n"
    "Updated summary:"
)

# "2", "(2)", "2." or "2. Māori" (the name, when given, must be that choice's).
_NUMBER = re.compile(r"\(?(\d+)[).:]?(?:\s+(.+))?", re.DOTALL)


def mapping_choices(groups: Sequence[str]) -> str:
    return "\n".join(["0. none of these", *(f"{i}. {group}" for i, group in enumerate(groups, start=1))])


def mapping_prompt(groups: Sequence[str], terms: Sequence[str], summary: str) -> str:
    return MAPPING_PROMPT.format(terms=", ".join(terms) or "(none)", summary=summary or "(none)", choices=mapping_choices(groups))


@dataclass(frozen=True)
class ParsedMapping:
    group: str | None  # None: "none of these"


def parse_mapping_reply(reply: str, groups: Sequence[str]) -> ParsedMapping | None:
    """The reply as a choice, or None when it is not one: a listed number alone, or a group's name alone
    (or "none"), case-insensitively, with at most a trailing full stop. Anything else is unparseable."""
    text = reply.strip().rstrip(".").strip()
    number = _NUMBER.fullmatch(text)
    if number:
        choice, named = int(number.group(1)), (number.group(2) or "").strip().casefold()
        if choice > len(groups):
            return None
        names = ("none of these", "none") if choice == 0 else (groups[choice - 1].casefold(),)
        if named and named not in names:
            return None
        return ParsedMapping(None if choice == 0 else groups[choice - 1])
    by_name = {group.casefold(): group for group in groups}
    if text.casefold() in by_name:
        return ParsedMapping(by_name[text.casefold()])
    if text.casefold() in ("none", "none of these"):
        return ParsedMapping(None)
    return None


def summary_prompt(previous: str, sentences: Sequence[str]) -> str:
    return SUMMARY_PROMPT.format(previous=previous or "(none yet)", sentences="\n".join(f"- {s.strip()}" for s in sentences))


def parse_summary_reply(reply: str) -> str | None:
    """A usable summary: its first non-empty line, if it holds at least two words."""
    line = next((line.strip() for line in reply.splitlines() if line.strip()), "")
    return line if len(line.split()) >= 2 else None


def keyword_overlap_group(
    member_tokens: Sequence[Sequence[str]], groups: Mapping[str, Sequence[str]], min_share: float
) -> str | None:
    """The group whose keywords occur in the most of the cluster's sentences, if in at least ``min_share`` of
    them; ties go to the group named first. ``member_tokens``: each sentence's case-folded words."""
    if not member_tokens:
        return None
    hits: Counter[str] = Counter()
    keys = {group: [k for k in (seed_key(keyword) for keyword in keywords) if k] for group, keywords in groups.items()}
    for words in member_tokens:
        for group, found in keys.items():
            if seeds_in(words, found):
                hits[group] += 1
    order = list(groups)
    best = min(order, key=lambda g: (-hits[g], order.index(g)), default=None)
    if best is None or hits[best] == 0 or hits[best] / len(member_tokens) < min_share:
        return None
    return best


@dataclass
class GeneratorLedger:
    """Counts the generator's replies; gives up after ``max_failures`` unusable replies in a row."""

    max_failures: int
    asked: int = 0
    parsed: int = 0
    unparseable: int = 0
    not_asked: int = 0
    streak: int = 0
    gave_up: bool = False

    def record(self, usable: bool) -> None:
        self.asked += 1
        if usable:
            self.parsed += 1
            self.streak = 0
        else:
            self.unparseable += 1
            self.streak += 1
            if self.streak >= self.max_failures:
                self.gave_up = True

    def skip(self, count: int = 1) -> None:
        self.not_asked += count

    def use(self) -> GeneratorUse:
        return GeneratorUse(
            asked=self.asked, parsed=self.parsed, unparseable=self.unparseable, not_asked=self.not_asked, gave_up=self.gave_up
        )
