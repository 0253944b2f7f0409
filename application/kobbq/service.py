"""KoBBQ's protocol service: the shared BBQ service with KoBBQ's prompts, metrics and tests (PROTOCOLS §2)."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar, Sequence

from culturebias.application.bbq.answering import (
    AnswerPlan,
    Question,
)
from culturebias.application.bbq.reference import reference_items, split_reference
from culturebias.application.bbq.service import (
    BBQService,
    reply_fact,
    answering_block,
    invalid_reply_notes,
    plan_notes,
    prediction_line,
    select_categories,
)
from culturebias.application.context import RunContext
from culturebias.application.sampling import sampled_items
from culturebias.domain.bbq.answer_order import shown_order
from culturebias.domain.kobbq.intervals import attach_kobbq_all
from culturebias.domain.bbq.validity import bbq_validity
from culturebias.domain.kobbq.headlines import VALIDITY_GUARDS
from culturebias.domain.validity import validity_notes
from culturebias.domain.bbq.model import AnswerClass, QAItem
from culturebias.domain.kobbq.options import KoBBQOptions
from culturebias.domain.kobbq.summary import KoBBQCounts, KoBBQDetails, KoBBQMetrics
from culturebias.domain.errors import ConfigError
from culturebias.domain.kobbq.aggregate import aggregate_kobbq
from culturebias.domain.kobbq.prompts import KoBBQDataset
from culturebias.domain.kobbq.strata import STRATA as KOBBQ_STRATA
from culturebias.domain.stratified import sample_notes
from culturebias.domain.summary import ProtocolOutcome, run_limit


class KoBBQService(BBQService[KoBBQOptions]):
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
        items, drawn_sample = sampled_items(items, s, ctx.seed, KOBBQ_STRATA)
        if not items:
            raise ConfigError("no KoBBQ items to evaluate (check protocol.categories and protocol.limit)")
        reference = reference_items(dataset, s)  # asked alongside, for the rank-sum tests only
        asked = self._asker(ctx, plan).ask(self.questions(items + reference, dataset), self.label)
        answers, reference_answers = split_reference(asked, reference)
        scores = aggregate_kobbq(
            answers, prompts, s.aggregate, s.std_ddof, s.statistics, reference_answers,
            reply_fact(dataset.facts, "reference_file") or "the reference", s.evaluator,
        )
        attach_kobbq_all(
            scores, answers, prompts, s.aggregate, seed=ctx.seed, resamples=ctx.bootstrap_resamples,
            evaluator=s.evaluator,
        )
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
            evaluator=s.evaluator,
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
        notes = sample_notes(drawn_sample) + plan_notes(plan) + invalid_reply_notes(answers)
        if reference:
            notes.append(
                f"{len(reference)} reference item(s) ({reply_fact(dataset.facts, 'reference_file')}) asked for the rank-sum "
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
            samples_file=reply_fact(dataset.facts, "samples_file"),
            prompts_file=reply_fact(dataset.facts, "prompts_file"),
            predictions=[prediction_line(a) for a in answers] if s.keep_predictions else None,
        )
        validity = bbq_validity(answers, s.permutation_scheme, VALIDITY_GUARDS, s.validity)
        return ProtocolOutcome[KoBBQMetrics, KoBBQCounts, KoBBQDetails](
            metrics=metrics, counts=counts, notes=notes + validity_notes(validity), details=details, validity=validity,
            limit=run_limit(s), drawn_sample=drawn_sample,
        )
