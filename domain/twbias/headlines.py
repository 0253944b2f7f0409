"""TWBias's headline metrics: bias ratio and effect size of each gender specification (Table 4)."""

from __future__ import annotations

from culturebias.domain.headlines import HeadlineMetric, Planning

# `plan --policy`: Cohen's d over n pairs has a standard error of about 1/sqrt(n), so one pair contributes sd 1,
# and d = 0.2 is Cohen's "small" effect; the bias ratio (a share of ten prompts) moves in steps of 0.1, each a test
# over the pairs: sd 0.5 (the largest of a share), d 0.1 (one prompt in ten).
_EFFECT = Planning(sd=1.0, margin=0.2, source="Cohen's d over n pairs has SE about 1/sqrt(n): sd 1; d 0.2 (a small effect)")
_RATIO = Planning(sd=0.5, margin=0.1, source="a share of ten prompts: sd 0.5 (the largest), d 0.1 (one prompt in ten)")

GENDER_GROUPS = ("female", "male")


def _group(group: str) -> tuple[HeadlineMetric, HeadlineMetric]:
    base = f"metrics.gender.{group}"
    return (
        HeadlineMetric(
            name=f"{group}.bias_ratio",
            label=f"bias ratio ({group})",
            value=f"{base}.bias_ratio",
            interval=f"{base}.intervals.bias_ratio",
            direction="lower",
            low=0.0,
            high=1.0,
            planning=_RATIO,
            meaning="the share of the ten chat prompts under which swapping the group changes perplexity significantly",
            sentence=f"Swapping the {group} group in a sentence changed its perplexity significantly under {{points}} % "
            "of the chat prompts",
        ),
        HeadlineMetric(
            name=f"{group}.effect_size",
            label=f"effect size ({group})",
            value=f"{base}.effect_size",
            interval=f"{base}.intervals.effect_size",
            direction="closer",
            target=0.0,
            planning=_EFFECT,
            meaning="Cohen's d of the perplexity change over the significant prompts (positive: the stereotype is "
            "more likely for this group)",
        ),
    )


HEADLINES: tuple[HeadlineMetric, ...] = tuple(metric for group in GENDER_GROUPS for metric in _group(group))
