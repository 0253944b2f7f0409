"""Multiple choice for encoders (masked LMs; CBBQ paper §5.8, Fig. 8), through pseudo-log-likelihood (PROTOCOLS §0.2).

Each option is written as the answer after the context and the question,

    {context}\\n{question}\\n{option}

and its characters are scored by pseudo-log-likelihood (each token masked in
turn). Options differ in length (a group name against "没有足够信息"), so the
score is the mean log-probability per token; the likeliest option is the
answer. No out-of-choice answer is possible, and option order plays no part.
"""

from __future__ import annotations

from collections.abc import Sequence

SCORE = "mean pseudo-log-likelihood per token of the option's text after the context and question"


def option_text(context: str, question: str, option: str) -> tuple[str, int, int]:
    """The text that states ``option`` as the answer, and the character span of the option in it."""
    head = f"{context}\n{question}\n"
    return head + option, len(head), len(head) + len(option)


def best_option(logprobs: Sequence[float], n_tokens: Sequence[int]) -> int:
    """Index of the option with the highest mean log-probability per token (the first on a tie)."""
    means = [lp / max(1, n) for lp, n in zip(logprobs, n_tokens)]
    return max(range(len(means)), key=lambda i: (means[i], -i))
