"""TWBias's headline metrics: bias ratio and effect size of each gender specification (Table 4)."""

from __future__ import annotations

from culturebias.domain.headlines import HeadlineMetric

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
            meaning="Cohen's d of the perplexity change over the significant prompts (positive: the stereotype is "
            "more likely for this group)",
        ),
    )


HEADLINES: tuple[HeadlineMetric, ...] = tuple(metric for group in GENDER_GROUPS for metric in _group(group))
