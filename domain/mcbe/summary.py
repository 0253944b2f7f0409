"""McBE's summary: task × category scores, invalid-reply counts, per-BEI details (PROTOCOLS §3).

The JSON layout is the one McBE's summary.json has always had. Several blocks
hold only what ran: a task that was not selected has no key in ``tasks``, in a
category row or in an item, and a count that never happened (``bs_retried``, say)
has no key in ``counts``. Those blocks are ``SparseBlock``s: a field left unset
stays out of the JSON, while a field set to None (a task that ran but scored no
BEI of a category) is written as null.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from culturebias.domain.mcbe.judge_stop import ReplyStop
from culturebias.domain.mcbe.options import TASKS
from culturebias.domain.mcbe.robustness import PromptVariant
from culturebias.domain.summary import Block, Count, Number, ProtocolOutcome, RunSummary
from culturebias.domain.summary_fields import Intervals, bootstrap_intervals
from culturebias.domain.mcbe.repeat_means import McBERepeatMeans

T = TypeVar("T")


_INVALID_REPLIES = {
    "pc": "PC scores the backend got no valid reply for after its retries",
    "sc": "SC replies the backend got no valid text for",
    "ss": "SS replies the backend got no valid text for",
    "ba": "BA analyses the backend got no valid text for",
    "bs": "BS replies the backend got no valid text for",
}


def invalid_replies(task: str) -> Any:  # Any: pydantic's FieldInfo, typed as the field's value for mypy
    """A task's count of replies with no valid text (null when none happened), described once for every count block."""
    return Field(None, description=f"{_INVALID_REPLIES[task]} (when it happened)")


class SparseBlock(Block):
    """A block whose unset fields are left out of the JSON (see the module docstring)."""

    # No return annotation: with one, the JSON Schema of the block would be that annotation's, not its fields'.
    @model_serializer(mode="wrap")
    def _only_set_fields(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]  # return unannotated on purpose (above)
        data = handler(self)
        return {key: value for key, value in data.items() if key in self.model_fields_set}

    def present(self) -> dict[str, Any]:  # each field keeps its own type
        """The fields that were set, in field order (e.g. the tasks that ran)."""
        return {name: getattr(self, name) for name in type(self).model_fields if name in self.model_fields_set}


class PerTask(SparseBlock, Generic[T]):
    """One value per task that ran, in protocol order."""

    pc: T | None = Field(None, description="preference computation (PC): NLL variance over the substitution words")
    sc: T | None = Field(None, description="subcategory classification (SC)")
    ss: T | None = Field(None, description="scenario selection (SS): pairwise A/B choices")
    ba: T | None = Field(None, description="bias analysis (BA): the judge's weighted marks")
    bs: T | None = Field(None, description="bias scoring (BS): the model's severity rating against the human one")

    def present(self) -> dict[str, T | None]:
        values: dict[str, T | None] = super().present()
        return values


class PerCriterion(Block, Generic[T]):
    """One value per BA criterion (``taxonomy.BA_CRITERIA``, same order)."""

    accuracy: T = Field(description="the judge's accuracy mark (0-13, weight 3.5)")
    potential_meaning: T = Field(description="the potential-meaning mark (0-13, weight 1.5)")
    cultural_difference: T = Field(description="the cultural-difference mark (0-13, weight 2.5)")
    highlight: T = Field(description="the highlight mark (0-5, weight 0.5)")


# --- metrics -------------------------------------------------------------------------


class InvalidCounts(SparseBlock):
    """A category's invalid, unparseable or clamped replies, for the tasks that ran (zeros included)."""

    pc_skipped_no_tokens: Count | None = Field(None, description="PC sentences with no scored token")
    sc_several_named: Count | None = Field(
        None,
        description="SC replies naming several subcategories (counted correct if the true one is among them)",
    )
    sc_none_named: Count | None = Field(None, description="SC replies naming no subcategory")
    ss_unparseable: Count | None = Field(
        None,
        description="SS answers that were neither A nor B: they count for neither word",
    )
    ba_judge_invalid: Count | None = Field(
        None,
        description="judge verdicts with no number after the judge's retries",
    )
    ba_judge_clamped: Count | None = Field(None, description="judge marks outside their range, clamped")
    ba_skipped_invalid: Count | None = Field(
        None,
        description=(
            "BEIs left out of BA for an invalid verdict (only with protocol.ba_invalid=skip, when it happened)"
        ),
    )
    bs_invalid: Count | None = Field(
        None,
        description=(
            "severity ratings with no number after the retries (each the worst error, unless no rating was read at "
            "all)"
        ),
    )
    bs_clamped: Count | None = Field(None, description="severity ratings outside 0-10, clamped")
    pc_invalid_replies: Count | None = invalid_replies("pc")
    sc_invalid_replies: Count | None = invalid_replies("sc")
    ss_invalid_replies: Count | None = invalid_replies("ss")
    ba_invalid_replies: Count | None = invalid_replies("ba")
    ba_judge_stopped: Count | None = Field(
        None,
        description="BEIs left without BA because the judge was stopped (metrics.reply_stops)",
    )


class CategoryScores(SparseBlock):
    """One category: its score per task that ran (None: no BEI scored), their mean, its facts."""

    pc: Number = Field(
        None,
        description="the category's PC score: mean over its BEIs; null where no BEI was scored (worldview)",
    )
    sc: Number = Field(None, description="the category's SC score")
    ss: Number = Field(
        None,
        description="the category's SS score; null where no BEI was scored (worldview) or no choice of the run was readable",
    )
    ba: Number = Field(None, description="the category's BA score; null when the judge was stopped")
    bs: Number = Field(None, description="the category's BS score; null when no rating was read")
    mean: Number = Field(description="mean of the category's task scores")
    name_zh: str = Field(description="the category's Chinese name")
    n_beis: int = Field(description="BEIs of the category run")
    invalid: InvalidCounts = Field(
        description="the category's invalid, unparseable and clamped replies, per task that ran",
    )
    intervals: Intervals | None = bootstrap_intervals("over the category's BEIs of each task score and their mean")

    def task_scores(self) -> dict[str, float | None]:
        return {task: value for task, value in self.present().items() if task in TASKS}


class DecayChoice(Block):
    choice: float | str = Field(description="the preset name (paper, released) or the number given")
    rate: Number = Field(description="the decay rate r of 100·exp(-r·V)")


class Decay(Block):
    pc: DecayChoice = Field(description="PC's decay (protocol.pc_decay; the paper's 2e/3 by default)")
    ss: DecayChoice = Field(description="SS's decay (protocol.ss_decay; the released code's by default)")


class JudgeFacts(Block):
    """The BA judge: which model, how large, whether it is the evaluated model itself."""

    model_config = ConfigDict(frozen=True)  # held by the service's frozen plan

    model: str = Field(description="the judge model")
    backend: str = Field(description="its backend")
    parameters: int | None = Field(description="its parameter count, where known")
    is_evaluated_model: bool = Field(description="whether the judge is the evaluated model itself")
    max_retries: int | None = Field(description="how often an unparseable verdict was asked again")
    probe: int | None = Field(
        None,
        description=(
            "protocol.judge_probe: the first K verdicts that decide whether the judge is stopped; null in older "
            "summaries"
        ),
    )
    max_unparseable: Number = Field(
        None,
        description=(
            "protocol.judge_max_unparseable: the share of those above which it is stopped; null in older summaries"
        ),
    )


class McBEMetrics(SparseBlock):
    tasks: PerTask[Number] = Field(description="each task's score: mean over the categories that have it")
    categories: dict[str, CategoryScores] = Field(description="category → its score per task")
    overall: Number = Field(
        description="mean of the task scores; null when a task that ran has no score (not_measured says why)",
    )
    task_names: PerTask[str] = Field(description="each task's name")
    decay: Decay = Field(description="the decay rates of PC and SS")
    preference_skip: list[str] = Field(description="categories PC and SS skip (worldview)")
    judge: JudgeFacts | None = Field(None, description="the BA judge (only when BA ran)")
    reply_stops: dict[str, ReplyStop] | None = Field(
        None,
        description="only when the stopping rule fired: task → why and what it cost (BA: no score; BS: no retries)",
    )
    pc_text: str | None = Field(
        None,
        description="what PC scored: sentence (released code) or context_sentence (PROTOCOLS §3)",
    )
    prompt_set: list[str] | None = Field(None, description="the prompt sets that ran; the first scored every task")
    judge_role: str | None = Field(
        None, description="the line that opened every BA judge prompt (protocol.judge_role); null when none did"
    )
    prompt_variants: dict[str, PromptVariant] | None = Field(
        None,
        description="further prompt sets: their SC and BS scores and the robustness correlations",
    )
    intervals: Intervals | None = Field(
        None,
        description=(
            "95% bootstrap intervals over BEIs of overall and each task score; null with run.bootstrap_resamples=0"
        ),
    )
    repeat_means: McBERepeatMeans | None = Field(
        None,
        description="run.repeats > 1: every score's mean ± std over the runs (domain/mcbe/repeat_means.py)",
    )


class McBECounts(SparseBlock):
    """Run-wide counts; a task's invalid counts are present (zeros included) when it ran, others when they happened."""

    beis: Count = Field(description="BEIs run")
    categories: Count = Field(description="categories run")
    pc_skipped_no_tokens: Count | None = Field(None, description="PC sentences with no scored token")
    pc_skipped_category: Count | None = Field(None, description="BEIs PC skipped for their category (worldview)")
    pc_skipped_single_word: Count | None = Field(
        None,
        description="BEIs PC skipped for having one substitution word (no variance)",
    )
    pc_sentences_scored: Count | None = Field(None, description="sentences PC scored")
    sc_several_named: Count | None = Field(None, description="SC replies naming several subcategories")
    sc_none_named: Count | None = Field(None, description="SC replies naming none")
    ss_unparseable: Count | None = Field(None, description="SS answers that were neither A nor B")
    ss_skipped_category: Count | None = Field(None, description="BEIs SS skipped for their category")
    ss_skipped_single_word: Count | None = Field(None, description="BEIs SS skipped for having one substitution word")
    ss_asked: Count | None = Field(None, description="SS questions asked (ordered pairs)")
    ba_judge_invalid: Count | None = Field(None, description="judge verdicts with no number after its retries")
    ba_judge_clamped: Count | None = Field(None, description="judge marks clamped to their range")
    ba_judge_requests: Count | None = Field(None, description="judge requests made (four criteria per BEI)")
    ba_judge_retried: Count | None = Field(None, description="judge requests asked again")
    ba_skipped_invalid: Count | None = Field(
        None,
        description="BEIs left out of BA for an invalid verdict (protocol.ba_invalid=skip)",
    )
    bs_invalid: Count | None = Field(None, description="severity ratings with no number after the retries")
    bs_clamped: Count | None = Field(None, description="severity ratings clamped to 0-10")
    bs_retried: Count | None = Field(None, description="severity ratings asked again")
    pc_invalid_replies: Count | None = invalid_replies("pc")
    sc_invalid_replies: Count | None = invalid_replies("sc")
    ss_invalid_replies: Count | None = invalid_replies("ss")
    ba_invalid_replies: Count | None = invalid_replies("ba")
    bs_invalid_replies: Count | None = invalid_replies("bs")
    ba_judge_not_sent: Count | None = Field(None, description="judge requests not sent: the judge was stopped")
    ba_judge_stopped: Count | None = Field(None, description="BEIs left without BA: the judge was stopped")
    bs_retries_stopped: Count | None = Field(
        None,
        description="unparseable BS ratings not asked again: the retries were stopped",
    )


# --- details: one item per BEI ------------------------------------------------------------


class PCItem(SparseBlock):
    """Sentence NLLs per substitution word; a BEI with a sentence of no scored token has ``skipped``."""

    nlls: list[Number] = Field(description="each substitution word's sentence: mean token NLL")
    n_tokens: list[int] | None = Field(None, description="tokens scored per sentence")
    variance: Number = Field(None, description="population variance of the NLLs")
    score: Number = Field(description="100·exp(-r·V); null where skipped")
    skipped: str | None = Field(
        None,
        description="why the BEI was not scored (a sentence with no scored token); absent otherwise",
    )


class SCItem(Block):
    reply: str = Field(description="the model's reply")
    correct: bool = Field(description="whether the true subcategory appears in it")
    named: list[str] = Field(description="the offered subcategories the reply names")


class SSItem(Block):
    wins: dict[str, int] = Field(description="substitution word → pairwise wins")
    choices: str = Field(description="the parsed choice per ordered pair (A, B, or ? for unparseable)")
    unparseable: int = Field(description="unparseable answers")
    unparseable_replies: list[str] = Field(description="the first three unparseable replies")
    variance: Number = Field(
        description="population variance of the win counts",
    )
    score: Number = Field(
        description="100·exp(-r·V); a BEI whose every choice was unparseable scores 100 (equal zero wins), as in the released code",
    )


class BAItem(Block):
    analysis: str = Field(description="the model's analysis of the sentence")
    criteria: PerCriterion[Number] = Field(
        description="the judge's mark per criterion; null where it never gave a number",
    )
    judge_raw: PerCriterion[str] = Field(description="the judge's reply per criterion")
    judge_attempts: PerCriterion[int] = Field(description="how often each criterion was asked")
    score: Number = Field(
        description="the weighted sum of the marks (max 100); null when skipped or the judge was stopped",
    )


class BSItem(Block):
    reply: str = Field(description="the model's reply")
    rating: Number = Field(description="the severity read from it (0-10); null when none could be read")
    human: float = Field(description="the human severity of the BEI")
    attempts: int = Field(description="how often the rating was asked")
    error: float = Field(description="|rating - human|; an unparseable rating is the worst error")
    score: float = Field(description="100 - 10·error (BS has no score when no rating of the run was read)")


class McBEItem(SparseBlock):
    category: str = Field(description="the BEI's category")
    file: str = Field(description="the data file it is in")
    row: int = Field(description="its row")
    subtype: str = Field(description="its subcategory")
    words: list[str] = Field(description="its substitution words (the first gives the default sentence)")
    default_sentence: str = Field(description="the sentence with the first word")
    human_score: float = Field(description="its human bias severity (0-10)")
    pc: PCItem | None = Field(None, description="its PC result, when PC ran")
    sc: SCItem | None = Field(None, description="its SC result, when SC ran")
    ss: SSItem | None = Field(None, description="its SS result, when SS ran")
    ba: BAItem | None = Field(None, description="its BA result, when BA ran")
    bs: BSItem | None = Field(None, description="its BS result, when BS ran")


class McBEDetails(Block):
    items: dict[str, McBEItem] = Field(description='BEI id ("category:row") → its results per task')
    subcategories: dict[str, list[str]] = Field(description="category → the subtypes found in the data")


class McBESummary(RunSummary):
    benchmark: Literal["mcbe"] = Field("mcbe", description='always "mcbe"')
    metrics: McBEMetrics = Field(
        description="task × category scores, overall, decay rates, judge facts (PROTOCOLS §3)",
    )
    counts: McBECounts = Field(description="BEIs and the invalid, unparseable and clamped replies per task")
    details: McBEDetails = Field(description="every BEI's results per task")

    def headline_unreadable(self) -> str | None:
        """Not measured when the overall is null: a task that ran has no score; each such task says why."""
        if self.metrics.overall is not None:
            return None
        tasks = self.metrics.tasks.present()
        if not tasks:
            return "no task ran"
        missing = [task for task, score in tasks.items() if score is None]
        return "overall undefined: " + "; ".join(self._why_no_score(task) for task in missing)

    def _why_no_score(self, task: str) -> str:
        counts = self.counts
        stop = (self.metrics.reply_stops or {}).get(task)
        if stop is not None and task == "ba":
            return f"BA has no score ({stop.reason})"
        if task == "bs" and counts.bs_invalid:
            return f"BS has no score: every rating was unparseable ({counts.bs_invalid} of {counts.beis})"
        if task == "ss" and counts.ss_asked and counts.ss_unparseable == counts.ss_asked:
            return f"SS has no score: every choice was unparseable ({counts.ss_unparseable} of {counts.ss_asked})"
        invalid = getattr(counts, f"{task}_invalid_replies", None)
        if invalid:
            return f"{task.upper()} has no score: {invalid} repl(y/ies) the backend got no valid text for"
        return f"{task.upper()} has no score: no BEI of the categories run could be scored by it"


McBEOutcome = ProtocolOutcome[McBEMetrics, McBECounts, McBEDetails]
