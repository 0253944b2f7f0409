"""The embedding threshold of LIBRA's knowledge boundary, calibrated on definitions known to be right or wrong.

``protocol.comparison=embedding`` accepts a model's definition of a local word when its
cosine with the glossary's official one is at least ``protocol.similarity_threshold``.
The default comes from ``calibrate_threshold``: the bundled glossary's 42 terms, each
with a correct paraphrase and a plausible wrong meaning written for the purpose
(``tests/fixtures/libra_calibration/definitions.jsonl``), embedded with the default
encoder (all-MiniLM-L6-v2). A definition whose nearest glossary definition is
another term's (``protocol.nearest_margin`` 0) is refused at any threshold: it
enters as None. The threshold is the one with the highest balanced accuracy
(the mean of the shares of correct definitions accepted and of wrong ones refused); a tie
goes to the higher threshold, which accepts fewer wrong definitions, since a wrong
definition counted as known inflates bbs. It is placed midway between the two cosines
that bound it and rounded to two decimals. ``tests/integration/test_libra_calibration.py``
recomputes it, so the default, this module and docs/PROTOCOLS.md stay in step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Calibration:
    threshold: float
    correct_accepted: int  # correct definitions at or above the threshold
    wrong_accepted: int  # wrong definitions at or above it
    n_correct: int
    n_wrong: int

    @property
    def balanced_accuracy(self) -> float:
        return (self.correct_accepted / self.n_correct + 1 - self.wrong_accepted / self.n_wrong) / 2


def accepted(scores: Sequence[float | None], threshold: float) -> int:
    return sum(score is not None and score >= threshold for score in scores)


def calibrate_threshold(correct: Sequence[float | None], wrong: Sequence[float | None]) -> Calibration:
    """The threshold that best separates the cosines of correct definitions from those of wrong ones
    (None: a definition refused whatever the threshold, by the nearest-definition rule)."""
    if not correct or not wrong:
        raise ValueError("calibration needs cosines of both correct and wrong definitions")
    cuts = sorted({s for s in (*correct, *wrong) if s is not None})
    if not cuts:
        raise ValueError("calibration needs at least one definition the nearest-definition rule lets through")
    candidates = [(low + high) / 2 for low, high in zip(cuts, cuts[1:])] + [cuts[0] - 1e-9, cuts[-1] + 1e-9]

    def rank(threshold: float) -> tuple[Fraction, float]:  # exact shares: a tie is a tie
        hit = Fraction(accepted(correct, threshold), len(correct))
        false = Fraction(accepted(wrong, threshold), len(wrong))
        return ((hit + 1 - false) / 2, threshold)

    best = max(candidates, key=rank)
    threshold = round(best, 2)
    return Calibration(threshold, accepted(correct, threshold), accepted(wrong, threshold), len(correct), len(wrong))
