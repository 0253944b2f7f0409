"""Where a served text's continuation starts, found three ways (``model.boundary_source``).

- ``tokenize``: the server's own token ids of the context and of the whole text
  (``token_ids.py``). Where the whole text's ids begin with the context's, the
  continuation starts right after them, under either rule, whatever the token
  texts say. Where they do not (the context's last tokens merge with the
  continuation's first), the authors' rule still counts the context's ids; the
  straddle rule needs to know where each token ends, so the reply's offsets place
  it when they add up, and otherwise the first differing id does (the straddling
  token and any context token re-split with it count as continuation: counted
  and logged as approximate).
- ``offsets``: the reply's ``text_offset`` values (``echo_logprobs.py``), which
  must add up to the prompt text.
- ``context-echo``: the server's echo of the context alone; the same comparison
  as ``tokenize`` over the listed token texts (equal tokens give equal texts,
  even where the server drops characters from them).

``listed_offset`` is how many more tokens a reply lists than the tokenizer
counts for its prompt: -1 where the server leaves out the BOS it counts
(llama-cpp-python), 0 where it lists what it counts (vLLM lists its BOS too).
The truth probe finds it on ASCII texts, whose token texts can be trusted.
``usage_offset`` is how many more prompt tokens a reply's ``usage`` counts than
the tokenizer (0 on both servers; None where the server gives no usage): a
reply counting another number computed another prompt (cut short) and is not
used. ``exact_texts``: the server's token texts spelled every probe text
exactly, so where texts must show that a reply covers its prompt (a context
echo, or a tokenize route without usage), they must spell it exactly, with no
split character allowed to be missing.
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
    usage_offset: int | None = None  # for ``tokenize``
    exact_texts: bool = False

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


def continuation_start(context: Sequence[Hashable], whole: Sequence[Hashable], rule: str) -> tuple[int, bool]:
    """(index in ``whole`` of the first continuation token, whether it is exact).

    Exact under the authors' rule, and under the straddle rule where ``whole`` begins with
    ``context``; else the first differing token, which may start inside the context.
    """
    if rule == "authors":
        return min(len(context), len(whole)), True
    shared = common_prefix(context, whole)
    return shared, shared == len(context)
