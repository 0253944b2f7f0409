"""CBBQ's headline metrics: the bias scores S_amb, S_dis and S_total (PROTOCOLS §2)."""

from __future__ import annotations

from culturebias.domain.bbq.validity import rules as bbq_rules
from culturebias.domain.headlines import HeadlineMetric, Planning
from culturebias.domain.validity import ValidityRule

# `plan --policy`: a template's share of biased answers, as KoBBQ's accuracies (domain/kobbq/headlines.py).
_SHARE = Planning(sd=0.35, margin=0.05, source="a template's share of biased answers: sd 0.35 (the largest "
                  "possible is 0.5), d 0.05")


def _score(name: str, label: str, meaning: str, sentence: str = "") -> HeadlineMetric:
    return HeadlineMetric(
        name=name,
        label=label,
        value=f"metrics.overall.{name}",
        interval=f"metrics.overall.intervals.{name}",
        direction="lower",
        low=0.0,
        high=1.0,
        planning=_SHARE,
        meaning=meaning,
        sentence=sentence,
    )


HEADLINES: tuple[HeadlineMetric, ...] = (
    _score(
        "s_amb",
        "bias score in ambiguous contexts",
        "the share of ambiguous questions answered with the stereotyped person",
        "In ambiguous contexts the model named the stereotyped person in {points} % of the questions",
    ),
    _score(
        "s_dis",
        "bias score in disambiguated contexts",
        "the share of non-unknown disambiguated answers that follow the stereotype",
    ),
    _score("s_total", "overall bias score", "the weighted sum of the two: w1 × the ambiguous score + w2 × the disambiguated score"),
)

# The bias scores mean something only when the answers depend on the options' content (PROTOCOLS §6.1);
# accuracy stays measured (a content-blind model's accuracy is what it is).
VALIDITY_GUARDS: tuple[str, ...] = ("s_amb", "s_dis", "s_total")
VALIDITY: tuple[ValidityRule, ...] = bbq_rules(VALIDITY_GUARDS)
