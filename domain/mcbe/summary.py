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

from pydantic import ConfigDict, SerializerFunctionWrapHandler, model_serializer

from culturebias.domain.mcbe.judge_stop import ReplyStop
from culturebias.domain.mcbe.options import TASKS
from culturebias.domain.mcbe.robustness import PromptVariant
from culturebias.domain.summary import Block, Count, Number, ProtocolOutcome, RunSummary
from culturebias.domain.uncertainty.interval import Interval

T = TypeVar("T")


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

    pc: T | None = None
    sc: T | None = None
    ss: T | None = None
    ba: T | None = None
    bs: T | None = None

    def present(self) -> dict[str, T | None]:
        values: dict[str, T | None] = super().present()
        return values


class PerCriterion(Block, Generic[T]):
    """One value per BA criterion (``taxonomy.BA_CRITERIA``, same order)."""

    accuracy: T
    potential_meaning: T
    cultural_difference: T
    highlight: T


# --- metrics -------------------------------------------------------------------------


class InvalidCounts(SparseBlock):
    """A category's invalid, unparseable or clamped replies, for the tasks that ran (zeros included)."""

    pc_skipped_no_tokens: Count | None = None
    sc_several_named: Count | None = None
    sc_none_named: Count | None = None
    ss_unparseable: Count | None = None
    ba_judge_invalid: Count | None = None
    ba_judge_clamped: Count | None = None
    ba_skipped_invalid: Count | None = None  # only with ba_invalid=skip, when it happened
    bs_invalid: Count | None = None
    bs_clamped: Count | None = None
    # when it happened: replies the backend got no valid text (PC: score) for after its retries (PC, SC, BA: BEI not scored)
    pc_invalid_replies: Count | None = None
    sc_invalid_replies: Count | None = None
    ss_invalid_replies: Count | None = None
    ba_invalid_replies: Count | None = None
    ba_judge_stopped: Count | None = None  # BEIs left without BA: the judge was stopped (metrics.reply_stops)


class CategoryScores(SparseBlock):
    """One category: its score per task that ran (None: no BEI scored), their mean, its facts."""

    pc: Number = None
    sc: Number = None
    ss: Number = None
    ba: Number = None
    bs: Number = None
    mean: Number
    name_zh: str
    n_beis: int
    invalid: InvalidCounts

    def task_scores(self) -> dict[str, float | None]:
        return {task: value for task, value in self.present().items() if task in TASKS}


class DecayChoice(Block):
    choice: float | str  # a preset name or the number given
    rate: Number


class Decay(Block):
    pc: DecayChoice
    ss: DecayChoice


class JudgeFacts(Block):
    """The BA judge: which model, how large, whether it is the evaluated model itself."""

    model_config = ConfigDict(frozen=True)  # held by the service's frozen plan

    model: str
    backend: str
    parameters: int | None
    is_evaluated_model: bool
    max_retries: int | None
    # the stopping rule (protocol.judge_probe, protocol.judge_max_unparseable); absent in older summaries
    probe: int | None = None
    max_unparseable: Number = None


class McBEMetrics(SparseBlock):
    tasks: PerTask[Number]  # mean over categories
    categories: dict[str, CategoryScores]
    overall: Number  # mean of the task scores
    task_names: PerTask[str]
    decay: Decay
    preference_skip: list[str]
    judge: JudgeFacts | None = None  # only when BA ran
    # only when the stopping rule fired: task → why, and what it cost (BA: no score; BS: no retries)
    reply_stops: dict[str, ReplyStop] | None = None
    pc_text: str | None = None  # what PC scored: sentence | context_sentence (PROTOCOLS §3)
    prompt_set: list[str] | None = None  # the prompt sets that ran; the first scored every task
    prompt_variants: dict[str, PromptVariant] | None = None  # further sets: SC/BS scores and robustness
    # 95% bootstrap intervals over BEIs of ``overall`` and each task score (domain/mcbe/intervals.py)
    intervals: dict[str, Interval] | None = None


class McBECounts(SparseBlock):
    """Run-wide counts; a task's invalid counts are present (zeros included) when it ran, others when they happened."""

    beis: Count
    categories: Count
    pc_skipped_no_tokens: Count | None = None
    pc_skipped_category: Count | None = None
    pc_skipped_single_word: Count | None = None
    pc_sentences_scored: Count | None = None
    sc_several_named: Count | None = None
    sc_none_named: Count | None = None
    ss_unparseable: Count | None = None
    ss_skipped_category: Count | None = None
    ss_skipped_single_word: Count | None = None
    ss_asked: Count | None = None
    ba_judge_invalid: Count | None = None
    ba_judge_clamped: Count | None = None
    ba_judge_requests: Count | None = None
    ba_judge_retried: Count | None = None
    ba_skipped_invalid: Count | None = None
    bs_invalid: Count | None = None
    bs_clamped: Count | None = None
    bs_retried: Count | None = None
    # when it happened: replies the backend got no valid text (PC: score) for after its retries, per task
    pc_invalid_replies: Count | None = None
    sc_invalid_replies: Count | None = None
    ss_invalid_replies: Count | None = None
    ba_invalid_replies: Count | None = None
    bs_invalid_replies: Count | None = None
    ba_judge_not_sent: Count | None = None  # judge requests not sent: the judge was stopped
    ba_judge_stopped: Count | None = None  # BEIs left without BA: the judge was stopped
    bs_retries_stopped: Count | None = None  # unparseable BS ratings not asked again: the retries were stopped


# --- details: one item per BEI ------------------------------------------------------------


class PCItem(SparseBlock):
    """Sentence NLLs per substitution word; a BEI with a sentence of no scored token has ``skipped``."""

    nlls: list[Number]
    n_tokens: list[int] | None = None
    variance: Number = None
    score: Number
    skipped: str | None = None


class SCItem(Block):
    reply: str
    correct: bool
    named: list[str]


class SSItem(Block):
    wins: dict[str, int]  # substitution word → wins
    choices: str  # per ordered pair, "?" = unparseable
    unparseable: int
    unparseable_replies: list[str]  # the first three
    variance: Number
    score: Number


class BAItem(Block):
    analysis: str
    criteria: PerCriterion[Number]  # None: the judge never gave a number
    judge_raw: PerCriterion[str]
    judge_attempts: PerCriterion[int]
    score: Number  # None: skipped (ba_invalid=skip)


class BSItem(Block):
    reply: str
    rating: Number
    human: float
    attempts: int
    error: float
    score: float


class McBEItem(SparseBlock):
    category: str
    file: str
    row: int
    subtype: str
    words: list[str]
    default_sentence: str
    human_score: float
    pc: PCItem | None = None
    sc: SCItem | None = None
    ss: SSItem | None = None
    ba: BAItem | None = None
    bs: BSItem | None = None


class McBEDetails(Block):
    items: dict[str, McBEItem]  # BEI id ("category:row") → item
    subcategories: dict[str, list[str]]  # category → subtypes found in the data


class McBESummary(RunSummary):
    benchmark: Literal["mcbe"] = "mcbe"
    metrics: McBEMetrics
    counts: McBECounts
    details: McBEDetails

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
