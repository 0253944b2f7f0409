"""Whether a reply's prompt log-probabilities belong to the tokens they are listed with.

A server lists, at each prompt position, the token's log-probability and the
model's top choice there (``top_logprobs``). Correctly aligned, the top choice
at position i is the model's guess *for* token i; on a text as predictable as a
counting sequence a trained model guesses most tokens right. A server that
scores each token from the logits one position late (llama-cpp-python's server
for models without a BOS) lists at position i the guess for token i + 1, and
each token's value is what the model gives it right after itself: far below
its own top choice (about -12 nats per token against -0.3 on SmolLM2-135M).

A model with random weights guesses nothing right either way, so the counts
decide only when they are clear; the gap to the top choice then still catches
a value listed at the wrong position, because no aligned token can score above
the best token at its own position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

# A token's value may exceed its position's top choice only by rounding.
ABOVE_TOP_TOLERANCE = 1e-3
# Mean nats per token below the model's own top choice on a counting sequence's continuation: aligned
# trained models stay under 1.5 (SmolLM2-135M 0.3, Gemma-3-270M 0.2), tiny random ones near 5, the
# late-logits bug gives about 12.
IMPLAUSIBLE_GAP = 8.0
# Without top choices: mean log-probability per token of the counting continuation (-16 under the bug).
IMPLAUSIBLE_MEAN = -10.0


@dataclass(frozen=True)
class Alignment:
    positions: int  # positions compared (those with a top choice)
    own: int  # top choice is the token listed there
    next: int  # top choice is the token listed one position later
    previous: int  # top choice is the token listed one position earlier
    above_top: int  # values above their position's top choice
    mean_gap: float | None  # mean nats below the top choice, over ``gap_from`` onwards

    def shifted(self) -> str | None:
        """``"late"`` or ``"early"`` when the top choices clearly sit one position off, else None."""
        if self.positions < 6:
            return None
        for direction, count in (("late", self.next), ("early", self.previous)):
            if count >= self.positions / 2 and count >= 2 * max(1, self.own):
                return direction
        return None


def _best(top: dict[str, float] | None) -> str | None:
    if not top:
        return None
    return max(top.items(), key=lambda item: item[1])[0]


def measure(texts: Sequence[str], values: Sequence[float | None], tops: Sequence[dict[str, float] | None], gap_from: int = 1) -> Alignment:
    positions = own = nxt = previous = above = 0
    gaps: list[float] = []
    for i in range(1, len(texts)):
        best = _best(tops[i])
        value = values[i]
        if best is None or value is None:
            continue
        positions += 1
        own += best == texts[i]
        nxt += i + 1 < len(texts) and best == texts[i + 1]
        previous += best == texts[i - 1]
        top_value = max(tops[i].values())  # type: ignore[union-attr]  # a best token means tops[i] is a dict
        above += value > top_value + ABOVE_TOP_TOLERANCE
        if i >= gap_from:
            gaps.append(top_value - value)
    return Alignment(positions, own, nxt, previous, above, sum(gaps) / len(gaps) if gaps else None)


def mean_value(values: Sequence[float | None], start: int) -> float | None:
    chosen = [v for v in values[start:] if v is not None]
    return sum(chosen) / len(chosen) if chosen else None
