"""Grouping and averaging of BBQ scores: per template, per prompt, per breakdown."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Callable, Hashable, Iterable, Mapping, Sequence, TypeVar

import numpy as np

from culturebias.domain.bbq.model import Answer
from culturebias.domain.bbq.summary import PromptStats

K = TypeVar("K", bound=Hashable)
Scores = Mapping[str, float]
ScoreFn = Callable[[Sequence[Answer]], dict[str, float]]


def group_by(answers: Iterable[Answer], key: Callable[[Answer], K]) -> dict[K, list[Answer]]:
    groups: dict[K, list[Answer]] = defaultdict(list)
    for answer in answers:
        groups[key(answer)].append(answer)
    return dict(groups)


def per_template(answers: Sequence[Answer], score: ScoreFn) -> dict[str, dict[str, float]]:
    """Scores of each template (KoBBQ: category and template number, all versions together)."""
    return {template: score(group) for template, group in sorted(group_by(answers, lambda a: a.item.template_id).items())}


def nan_mean(values: Iterable[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return float(np.mean(finite)) if finite else math.nan


def template_average(answers: Sequence[Answer], score: ScoreFn, metrics: Sequence[str]) -> dict[str, float]:
    """The "all-samples" aggregate: the mean over templates of per-template scores.

    A template whose score is undefined for a metric (e.g. every answer was
    out-of-choice) is left out of that metric's mean.
    """
    templates = per_template(answers, score)
    return {metric: nan_mean(scores[metric] for scores in templates.values()) for metric in metrics}


def over_prompts(per_prompt: Mapping[str, Scores], metrics: Sequence[str], ddof: int = 1) -> dict[str, PromptStats]:
    """Mean and standard deviation of each metric over prompts (undefined prompts left out)."""
    out: dict[str, PromptStats] = {}
    for metric in metrics:
        values = {prompt: float(scores[metric]) for prompt, scores in per_prompt.items()}
        finite = [v for v in values.values() if not math.isnan(v)]
        out[metric] = PromptStats(
            mean=float(np.mean(finite)) if finite else math.nan,
            std=float(np.std(finite, ddof=ddof)) if len(finite) > ddof else math.nan,
            n_prompts=len(finite),
            per_prompt={prompt: value for prompt, value in values.items()},
        )
    return out
