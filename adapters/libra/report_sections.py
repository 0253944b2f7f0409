"""LIBRA report sections read from the typed summary: the methods the run used, and StereoSet's iCAT column."""

from __future__ import annotations

from culturebias.adapters.reports.markdown import table
from culturebias.domain.libra.stereoset_summary import StereoSetScores
from culturebias.domain.libra.summary import LibraMetrics

LIKELIHOOD = {
    "causal": "causal log p(ω + U_right | U_left)",
    "masked_sum": "masked-LM pseudo-log-likelihood summed over ω + U_right",
    "masked_stereoset_mean": "masked-LM mean log P(t | U) over the modified span (StereoSet)",
}
LIKELIHOOD_AXIS = {
    "causal": "sum of log-probabilities",
    "masked_sum": "sum of pseudo-log-probabilities",
    "masked_stereoset_mean": "mean log-probability over the modified span",
}
COMPARISON = {
    "judge": "the judge's verdict (the paper's P2 verification)",
    "embedding": "embedding cosine (this project's alternative to the paper's judge)",
    "masked_choice": "a masked LM ranks the official definition against other glossary definitions "
    "(protocol.masked_meaning=choice; a recognition test, the score is the official one's margin)",
}
STEREOSET_HEADERS = ("lms", "ss", "iCAT", "items", "target terms")


def method_lines(metrics: LibraMetrics) -> str:
    """How L(S) was computed, how meanings were compared, and why bbs is not applicable where it is not."""
    lines = []
    if metrics.likelihood is not None:
        lines.append(f"- L(S): {LIKELIHOOD[metrics.likelihood]}")
    if metrics.comparison is not None:
        lines.append(f"- meaning comparison: {COMPARISON[metrics.comparison]}")
    if metrics.bbs_not_applicable is not None:
        lines.append(f"- bbs and EiCAT: not applicable, because {metrics.bbs_not_applicable}")
    return "\n".join(lines) + "\n\n" if lines else ""


def _row(name: str, scores: StereoSetScores) -> list[object]:
    return [name, scores.lms, scores.ss, scores.icat, scores.items, scores.targets]


def stereoset_section(metrics: LibraMetrics) -> str:
    block = metrics.stereoset
    if block is None:
        return ""
    rows = [_row("overall", block.overall)]
    rows += [_row(split, scores) for split, scores in block.by_split.items()]
    rows += [
        _row(f"{split}: {bias}", scores) for split, by_bias in block.by_bias_type.items() for bias, scores in by_bias.items()
    ]
    return (
        "## StereoSet (the paper's iCAT column)\n\n"
        f"From `{block.file}`, scored with the same L(S); lms, ss and iCAT as StereoSet's evaluation computes them "
        "(per target term, then averaged).\n\n" + table(("", *STEREOSET_HEADERS), rows, digits=2)
    )
