"""Where a served text's continuation starts, found three ways (``model.boundary_source``).

- ``tokenize``: the server's own token ids of the context and of the whole text
  (``token_ids.py``). Under the straddle rule the continuation starts at the
  first id where the two differ (a token that straddles the boundary is the first
  one the context tokenises differently); under the authors' rule, after as many
  tokens as the context has alone. Nothing depends on the token texts.
- ``offsets``: the reply's ``text_offset`` values (``echo_logprobs.py``), which
  must add up to the prompt text.
- ``context-echo``: the server's echo of the context alone; the same comparison
  as ``tokenize`` over the listed token texts (equal tokens give equal texts,
  even where the server drops characters from them).

``listed_offset`` is how many more tokens a reply lists than the tokenizer
counts for its prompt: -1 where the server leaves out the BOS it counts
(llama-cpp-python), 0 where it lists what it counts (vLLM lists its BOS too).
The truth probe finds it on ASCII texts, whose token texts can be trusted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Literal, Sequence

BoundarySource = Literal["tokenize", "offsets", "context-echo"]
BoundarySetting = Literal["auto", "tokenize", "offsets", "context-echo"]


@dataclass(frozen=True)
class BoundaryPlan:
    source: BoundarySource
    route: str | None = None  # the tokenize route's path, for ``tokenize``
    listed_offset: int = 0

    def describe(self) -> str:
        """For the provenance of every score: how its boundary was placed."""
        if self.source == "tokenize":
            return f"tokenize:/{self.route}"
        return self.source


def common_prefix(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def continuation_start(context: Sequence[Hashable], whole: Sequence[Hashable], rule: str) -> int:
    """Index (in ``whole``) of the first continuation token: straddle rule or the authors' count."""
    if rule == "authors":
        return min(len(context), len(whole))
    return common_prefix(context, whole)
