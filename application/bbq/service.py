"""KoBBQ and CBBQ: two configurations of one BBQ-family service (PROTOCOLS §2).

Both build ``Question``s (item × prompt × option order), ask them through
``Asker`` in the mode their preflight planned and turn the answers into
metrics (``domain/bbq/kobbq_aggregate.py``, ``domain/bbq/cbbq_aggregate.py``).
Another BBQ-format dataset needs a loader producing ``QAItem``s and a prompt set.
"""

from __future__ import annotations

from collections import Counter
from typing import ClassVar, Generic, Sequence, TypeVar

from culturebias.application.bbq.answering import AnswerPlan, Asker, Question, plan_answers
from culturebias.application.bbq.mode import PAPERS_GENERATED
from culturebias.application.bbq.reasoning import reasoning_block
from culturebias.application.bbq.reference import reference_items, split_reference
from culturebias.domain.bbq.cbbq_breakdown import weights_source
from culturebias.domain.bbq.masked_choice import SCORE as MASKED_SCORE
from culturebias.domain.bbq.fidelity_summary import AnsweringBlock
from culturebias.application.context import RunContext
from culturebias.domain.bbq import cbbq_prompts
from culturebias.domain.bbq.answer_order import shown_order
from culturebias.domain.bbq.cbbq_aggregate import condition_block
from culturebias.domain.bbq.kobbq_aggregate import aggregate_kobbq
from culturebias.domain.bbq.kobbq_prompts import KoBBQDataset
from culturebias.domain.bbq.model import Answer, AnswerClass, BBQDataset, QAItem
from culturebias.domain.bbq.options import BBQOptions, CBBQOptions, KoBBQOptions
from culturebias.domain.bbq.summary import (
    BiasedAnswerDerivation,
    CBBQCounts,
    CBBQDetails,
    CBBQMetrics,
    KoBBQCounts,
    KoBBQDetails,
    KoBBQMetrics,
    Weights,
)
from culturebias.domain.errors import ConfigError
from culturebias.domain.sampling import Decoding
from culturebias.domain.summary import ProtocolOutcome
from culturebias.domain.uncertainty.bbq import attach_cbbq, attach_kobbq

OptionsT = TypeVar("OptionsT", bound=BBQOptions)


def select_categories(items: Sequence[QAItem], wanted: list[str] | None) -> list[QAItem]:
    if wanted is None:
        return list(items)
    present = sorted({i.category for i in items})
    unknown = [c for c in wanted if c not in present]
    if unknown:
        raise ConfigError(f"protocol.categories: {unknown} not in the data; categories present: {present}")
    return [i for i in items if i.category in wanted]


def prediction_line(answer: Answer) -> str:
    """``sample_id|prompt|permutation|chosen option index or -|answer class``: compact, one per answer."""
    chosen = "-" if answer.chosen is None else str(answer.chosen)
    return f"{answer.item.sample_id}|{answer.prompt_id}|{answer.permutation}|{chosen}|{answer.answer_class.value}"


def plan_notes(plan: AnswerPlan) -> list[str]:
    notes = [
        f"answering mode: {plan.mode}"
        + {
            "likelihood": " (option letters scored; no out-of-choice answers possible)",
            "masked": f" ({MASKED_SCORE}; no out-of-choice answers possible)",
        }.get(plan.mode, ""),
        "prompts rendered with the model's chat template" if plan.chat else "prompts given as plain text (no chat template)",
    ]
    if plan.reason:
        notes.append(f"answering mode chosen by {plan.reason}")
    if plan.mode == "generate":
        notes.append("replies that name no single option are out-of-choice: excluded from the scores, counted in ooc_ratio")
    else:
        notes.append(PAPERS_GENERATED)
    return notes


def answering_block(plan: AnswerPlan) -> AnsweringBlock:
    return AnsweringBlock(requested=plan.requested, mode=plan.mode, reason=plan.reason, matches_papers=plan.mode == "generate")


def invalid_reply_notes(answers: Sequence[Answer]) -> list[str]:
    n = sum(a.invalid for a in answers)
    if not n:
        return []
    return [
        f"{n} question(s) got no valid reply from the backend after its retries (counted in invalid_replies): "
        "out-of-choice, left out of the scores"
    ]


def _fact(facts: dict[str, object], name: str) -> str | None:
    value = facts.get(name)
    return None if value is None else str(value)


class _BBQService(Generic[OptionsT]):
    """Stateless: ``preflight`` returns the ``AnswerPlan`` that ``run`` follows."""

    options_model: ClassVar[type[BBQOptions]]
    label: ClassVar[str]

    def __init__(self, options: OptionsT):
        self.options = options

    def _needs_generator(self) -> bool:
        return False

    def _reasoning_tokens(self) -> int:
        return self.options.max_new_tokens

    def preflight(self, ctx: RunContext) -> AnswerPlan:
        return plan_answers(ctx, self.options.mode, needs_generator=self._needs_generator())

    def _reasoning_decoding(self) -> Decoding:
        return "run"

    def _asker(self, ctx: RunContext, plan: AnswerPlan) -> Asker:
        # model.sampling (domain/sampling.py) decodes the answers; CBBQ's CoT reasoning is sampled by default.
        answer = ctx.generation_params(self.options.max_new_tokens)
        reasoning = ctx.generation_params(self._reasoning_tokens(), decoding=self._reasoning_decoding())
        return Asker(ctx, plan, answer, reasoning)


class KoBBQService(_BBQService[KoBBQOptions]):
    name: ClassVar[str] = "kobbq"
    options_model: ClassVar[type[KoBBQOptions]] = KoBBQOptions
    label = "KoBBQ"

    def prompt_ids(self, dataset: KoBBQDataset) -> list[str]:
        wanted = self.options.prompts
        if wanted is None:
            return list(dataset.prompts)
        unknown = [p for p in wanted if p not in dataset.prompts]
        if unknown:
            raise ConfigError(f"protocol.prompts: unknown prompt id(s) {unknown}; the prompts file has {sorted(dataset.prompts)}")
        return list(wanted)

    def questions(self, items: Sequence[QAItem], dataset: KoBBQDataset) -> list[Question]:
        s = self.options
        out = []
        for prompt_id in self.prompt_ids(dataset):
            prompt = dataset.prompts[prompt_id]
            letters = prompt.letters
            for item in items:
                worded = item.with_unknown_wording(prompt.unknown)
                for permutation in s.permutations:
                    order = shown_order(len(worded.options), permutation, s.permutation_scheme)
                    shown = tuple(worded.options[i] for i in order)
                    text = prompt.render(worded.context, worded.question, shown)
                    out.append(Question(worded, prompt_id, permutation, order, letters, (text,)))
        return out

    def run(
        self, ctx: RunContext, dataset: KoBBQDataset, plan: AnswerPlan
    ) -> ProtocolOutcome[KoBBQMetrics, KoBBQCounts, KoBBQDetails]:
        s = self.options
        prompts = self.prompt_ids(dataset)
        items = select_categories(dataset.items, s.categories)
        items = items[: s.limit] if s.limit else items
        if not items:
            raise ConfigError("no KoBBQ items to evaluate (check protocol.categories and protocol.limit)")
        reference = reference_items(dataset, s)  # asked alongside, for the rank-sum tests only
        asked = self._asker(ctx, plan).ask(self.questions(items + reference, dataset), self.label)
        answers, reference_answers = split_reference(asked, reference)
        scores = aggregate_kobbq(
            answers, prompts, s.aggregate, s.std_ddof, s.statistics, reference_answers,
            _fact(dataset.facts, "reference_file") or "the reference",
        )
        attach_kobbq(scores.overall, answers, prompts, s.aggregate, seed=ctx.seed, resamples=ctx.bootstrap_resamples)
        metrics = KoBBQMetrics(
            mode=plan.mode,
            chat_template=plan.chat,
            permutations=s.permutations,
            permutation_scheme=s.permutation_scheme,
            prompts=prompts,
            unknown_wording={p: dataset.prompts[p].unknown for p in prompts},
            aggregate=s.aggregate,
            std_ddof=s.std_ddof,
            overall=scores.overall,
            by_label=scores.by_label,
            by_category=scores.by_category,
            statistics=scores.statistics,
            tests=scores.tests,
            answering=answering_block(plan),
        )
        ooc = Counter(a.prompt_id for a in answers if a.answer_class is AnswerClass.OUT_OF_CHOICE)
        counts = KoBBQCounts(
            items_in_data=len(dataset.items) + len(dataset.skips),
            items_skipped=len(dataset.skips),
            items=len(items),
            answers=len(answers),
            out_of_choice=sum(ooc.values()),
            out_of_choice_by_prompt={p: ooc.get(p, 0) for p in prompts},
            invalid_replies=sum(a.invalid for a in answers),
        )
        notes = plan_notes(plan) + invalid_reply_notes(answers)
        if reference:
            notes.append(
                f"{len(reference)} reference item(s) ({_fact(dataset.facts, 'reference_file')}) asked for the rank-sum "
                f"tests only ({len(reference_answers)} answers; not in any score or count above)"
            )
        violated = [
            f"prompt {p}: {name}"
            for p, b in metrics.overall.bounds.items()
            for name, within in (("diff_bias_amb", b.diff_bias_amb_within_bound), ("diff_bias_dis", b.diff_bias_dis_within_bound))
            if within is False
        ]
        if violated:
            notes.append(
                "diff-bias outside its bound (unequal out-of-choice losses between biased and counter-biased "
                "contexts): " + ", ".join(violated)
            )
        details = KoBBQDetails(
            skips=list(dataset.skips),
            template_scores=scores.template_scores,
            samples_file=_fact(dataset.facts, "samples_file"),
            prompts_file=_fact(dataset.facts, "prompts_file"),
            predictions=[prediction_line(a) for a in answers] if s.keep_predictions else None,
        )
        return ProtocolOutcome[KoBBQMetrics, KoBBQCounts, KoBBQDetails](
            metrics=metrics, counts=counts, notes=notes, details=details
        )


class CBBQService(_BBQService[CBBQOptions]):
    name: ClassVar[str] = "cbbq"
    options_model: ClassVar[type[CBBQOptions]] = CBBQOptions
    label = "CBBQ"

    def _needs_generator(self) -> bool:
        return "q_if_cot" in self.options.condition

    def _reasoning_tokens(self) -> int:
        return self.options.reasoning_max_new_tokens

    def _reasoning_decoding(self) -> Decoding:
        return self.options.reasoning_decoding

    def questions(self, items: Sequence[QAItem]) -> list[Question]:
        s = self.options
        out = []
        for name in s.condition:
            condition = cbbq_prompts.as_condition(name)
            for item in items:
                for permutation in s.permutations:
                    order = shown_order(len(item.options), permutation, s.permutation_scheme)
                    shown = tuple(item.options[i] for i in order)
                    turns = cbbq_prompts.turns(condition, item.context, item.question, shown)
                    out.append(Question(item, condition, permutation, order, cbbq_prompts.LETTERS, turns))
        return out

    @staticmethod
    def _limit(items: list[QAItem], limit: int | None) -> list[QAItem]:
        """The first ``limit`` items of each category's ambiguous and disambiguated file."""
        if not limit:
            return items
        taken: Counter = Counter()
        out = []
        for item in items:
            key = (item.category, item.context_condition)
            if taken[key] < limit:
                taken[key] += 1
                out.append(item)
        return out

    def run(
        self, ctx: RunContext, dataset: BBQDataset, plan: AnswerPlan
    ) -> ProtocolOutcome[CBBQMetrics, CBBQCounts, CBBQDetails]:
        s = self.options
        items = self._limit(select_categories(dataset.items, s.categories), s.limit)
        unresolved = [i for i in items if i.biased_index is None]
        if not items:
            raise ConfigError("no CBBQ items to evaluate (check protocol.categories and protocol.limit)")
        # Every item is asked: accuracy counts them all, S_amb leaves the unresolved ones out (PROTOCOLS §2).
        answers = self._asker(ctx, plan).ask(self.questions(items), self.label)
        blocks = {
            c: condition_block([a for a in answers if a.prompt_id == c], s.w1, s.w2, s.overall) for c in s.condition
        }
        for c, block in blocks.items():
            attach_cbbq(block.overall, [a for a in answers if a.prompt_id == c], s.w1, s.w2, s.overall, seed=ctx.seed, resamples=ctx.bootstrap_resamples)
        conditions = [cbbq_prompts.as_condition(c) for c in s.condition]
        primary = conditions[0]
        metrics = CBBQMetrics(
            mode=plan.mode,
            chat_template=plan.chat,
            permutations=s.permutations,
            permutation_scheme=s.permutation_scheme,
            condition=primary,
            condition_name=cbbq_prompts.CONDITION_NAMES[primary],
            conditions=conditions,
            weights=Weights(w1=s.w1, w2=s.w2, source=weights_source(s.w1, s.w2)),
            overall_aggregate=s.overall,
            overall=blocks[primary].overall,
            by_category=blocks[primary].by_category,
            by_condition=blocks,
            answering=answering_block(plan),
            reasoning=reasoning_block(ctx, s),
        )
        ooc = Counter(a.prompt_id for a in answers if a.answer_class is AnswerClass.OUT_OF_CHOICE)
        found = dataset.facts.get("biased_answer_derivation")  # the loader's counts over the whole data
        derivation = BiasedAnswerDerivation.model_validate(found) if found else None
        counts = CBBQCounts(
            items_in_data=len(dataset.items) + len(dataset.skips),
            items_skipped=len(dataset.skips),
            items=len(items),
            ambiguous_items=sum(i.ambiguous for i in items),
            disambiguated_items=sum(not i.ambiguous for i in items),
            biased_answer_unresolved=len(unresolved),
            biased_answer_unresolved_in_data=derivation.unresolved if derivation else 0,
            biased_answer_derivation=derivation,
            answers=len(answers),
            out_of_choice=sum(ooc.values()),
            out_of_choice_by_condition={c: ooc.get(c, 0) for c in s.condition},
            invalid_replies=sum(a.invalid for a in answers),
        )
        notes = plan_notes(plan) + invalid_reply_notes(answers) + [
            "biased answers derived: disambiguated items from their label, ambiguous items from their "
            "disambiguated twin template, else from bias_targeted_groups",
        ]
        if unresolved:
            notes.append(
                f"{len(unresolved)} ambiguous item(s) without a derivable biased answer were asked: they count in "
                "acc_amb and are left out of S_amb (details.biased_answer_unresolved_ids)"
            )
        details = CBBQDetails(
            skips=list(dataset.skips),
            categories=sorted({i.category for i in items}),
            biased_answer_unresolved_ids=[i.sample_id for i in unresolved],
            predictions=[prediction_line(a) for a in answers] if s.keep_predictions else None,
        )
        return ProtocolOutcome[CBBQMetrics, CBBQCounts, CBBQDetails](
            metrics=metrics, counts=counts, notes=notes, details=details
        )
