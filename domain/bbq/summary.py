"""The summary block the KoBBQ and CBBQ aggregates share (their summaries: domain/kobbq/summary.py,
domain/cbbq/summary.py). Every ratio is a ``Number``: an undefined one (empty denominator) is null.
"""

from __future__ import annotations

from pydantic import Field

from culturebias.domain.summary import Block, Count, Number



def answers_unreadable(answers: int, out_of_choice: int, invalid_replies: int) -> str | None:
    """Why no KoBBQ/CBBQ score can be read from a run's answers: none, or every one out of choice (None: some count)."""
    if answers == 0:
        return "no answer was scored"
    if out_of_choice < answers:
        return None
    lost = f", {invalid_replies} of them replies the backend got no valid text for" if invalid_replies else ""
    return (
        f"every answer was out of choice ({out_of_choice} of {answers}{lost}): the model never named an option, "
        "so accuracy and bias are undefined"
    )


class PromptStats(Block):
    """One metric over prompts: mean and std of the defined per-prompt values, and each prompt's value."""

    mean: Number = Field(description="mean over the prompts that define the metric; null when none does")
    std: Number = Field(
        description="standard deviation over those prompts (ddof metrics.std_ddof); null with fewer than two",
    )
    n_prompts: Count = Field(description="prompts that define the metric")
    per_prompt: dict[str, Number] = Field(
        description=(
            "prompt id → the metric under that prompt; null where undefined (e.g. every answer out of choice)"
        ),
    )
