"""CBBQ's protocol service: the shared BBQ service with CBBQ's conditions, bias scores and breakdowns (PROTOCOLS §2)."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar, Sequence

from culturebias.application.bbq.answering import (
    AnswerPlan,
    Asker,
    Question,
)
from culturebias.application.bbq.reasoning import reasoning_block
from culturebias.application.bbq.service import (
    BBQService,
    answering_block,
    invalid_reply_notes,
    plan_notes,
    prediction_line,
    select_categories,
)
from culturebias.application.context import RunContext
from culturebias.application.sampling import sampled_items
from culturebias.domain.bbq.answer_order import shown_order
from culturebias.domain.cbbq.intervals import attach_cbbq_condition
from culturebias.domain.bbq.validity import bbq_validity
from culturebias.domain.cbbq.headlines import VALIDITY_GUARDS
from culturebias.domain.validity import validity_notes
from culturebias.domain.bbq.model import AnswerClass, BBQDataset, QAItem
from culturebias.domain.cbbq.options import CBBQOptions
from culturebias.domain.cbbq.summary import BiasedAnswerDerivation, CBBQCounts, CBBQDetails, CBBQMetrics, Weights
from culturebias.domain.cbbq import prompts as cbbq_prompts
from culturebias.domain.cbbq.aggregate import condition_block
from culturebias.domain.cbbq.strata import STRATA as CBBQ_STRATA
from culturebias.domain.stratified import sample_notes
from culturebias.domain.cbbq.breakdown import weights_source
from culturebias.domain.cbbq.wording import chosen_wording, wording_block
from culturebias.domain.cbbq.explanations import explanation_of
from culturebias.domain.cbbq.released_prompt import PromptSet, prompt_source
from culturebias.domain.cbbq.table4 import Table4Row, table4_rows
from culturebias.domain.errors import ConfigError
from culturebias.domain.sampling import Decoding
from culturebias.domain.summary import ProtocolOutcome, run_limit


class CBBQService(BBQService[CBBQOptions]):
    options_model: ClassVar[type[CBBQOptions]] = CBBQOptions
    label = "CBBQ"

    def _needs_generator(self) -> bool:
        return any(c in self.options.condition for c in ("q_if_cot", *cbbq_prompts.EXPLAINING))

    def _asker(self, ctx: RunContext, plan: AnswerPlan) -> Asker:
        """As BBQ's; a Q+Explain reply may run to protocol.explain_max_new_tokens (the others keep max_new_tokens)."""
        asker = super()._asker(ctx, plan)
        if any(c in cbbq_prompts.EXPLAINING for c in self.options.condition):
            asker.explain_params = ctx.generation_params(self.options.explain_max_new_tokens)
        return asker

    def preflight(self, ctx: RunContext) -> AnswerPlan:
        """As BBQ's, and an explaining condition (Q+Explain) needs generated answers: refused before anything runs."""
        explaining = [c for c in self.options.condition if c in cbbq_prompts.EXPLAINING]
        if explaining and self.options.mode in ("likelihood", "masked"):
            raise ConfigError(_explain_needs_generate(list(explaining), f"protocol.mode={self.options.mode}"))
        plan = super().preflight(ctx)
        if explaining and plan.mode != "generate":
            raise ConfigError(_explain_needs_generate(explaining, f"this run would answer in {plan.mode} mode, {plan.reason}"))
        return plan

    def _reasoning_tokens(self) -> int:
        return self.options.reasoning_max_new_tokens

    def _reasoning_decoding(self) -> Decoding:
        return self.options.reasoning_decoding

    def questions(self, items: Sequence[QAItem]) -> list[Question]:
        s = self.options
        wording = chosen_wording(s.if_sentence, s.cot_sentence)
        out = []
        for name in s.condition:
            condition = cbbq_prompts.as_condition(name)
            for item in items:
                for permutation in s.permutations:
                    order = shown_order(len(item.options), permutation, s.permutation_scheme)
                    shown = tuple(item.options[i] for i in order)
                    turns = cbbq_prompts.turns(condition, item.context, item.question, shown, wording, s.prompt_set)
                    explains = condition in cbbq_prompts.EXPLAINING
                    out.append(Question(item, condition, permutation, order, cbbq_prompts.LETTERS, turns, explains))
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
        items, drawn_sample = sampled_items(items, s, ctx.seed, CBBQ_STRATA)
        unresolved = [i for i in items if i.biased_index is None]
        if not items:
            raise ConfigError("no CBBQ items to evaluate (check protocol.categories and protocol.limit)")
        # Every item is asked: accuracy counts them all, S_amb leaves the unresolved ones out (PROTOCOLS §2).
        answers = self._asker(ctx, plan).ask(self.questions(items), self.label)
        blocks = {
            c: condition_block([a for a in answers if a.prompt_id == c], s.w1, s.w2, s.overall) for c in s.condition
        }
        for c, block in blocks.items():
            attach_cbbq_condition(
                block, [a for a in answers if a.prompt_id == c], s.w1, s.w2, s.overall,
                seed=ctx.seed, resamples=ctx.bootstrap_resamples,
            )
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
            wording=wording_block(s.if_sentence, s.cot_sentence) if _asks_sentences(conditions, s.prompt_set) else None,
            prompt_set=s.prompt_set,
            prompt_source=prompt_source(s.prompt_set, s.condition),
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
            table4=_table4(dataset.facts.get("instances_by_category")),
            explained_answers=sum(
                bool(explanation_of(a.raw)) for a in answers if a.prompt_id in cbbq_prompts.EXPLAINING and not a.invalid
            ),
        )
        notes = sample_notes(drawn_sample) + plan_notes(plan) + invalid_reply_notes(answers) + [
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
        headline_answers = [a for a in answers if a.prompt_id == s.condition[0]]  # the headline's condition
        validity = bbq_validity(headline_answers, s.permutation_scheme, VALIDITY_GUARDS, s.validity)
        return ProtocolOutcome[CBBQMetrics, CBBQCounts, CBBQDetails](
            metrics=metrics, counts=counts, notes=notes + validity_notes(validity), details=details, validity=validity,
            limit=run_limit(s), drawn_sample=drawn_sample,
        )


def _asks_sentences(conditions: list[cbbq_prompts.Condition], prompt_set: PromptSet) -> bool:
    """Whether the run asks culturebias's IF or CoT sentence (the released prompt has the authors' own)."""
    return prompt_set == "culturebias" and any(c in ("q_if", "q_if_cot") for c in conditions)


def _table4(found: object) -> list[Table4Row] | None:
    """The data's per-category instances beside the paper's Table 4; None where the loader did not count them."""
    if not isinstance(found, dict):
        return None
    return table4_rows({str(k): int(v) for k, v in found.items()})


def _explain_needs_generate(conditions: Sequence[str], why: str) -> str:
    return (
        f"protocol.condition {conditions} asks the model to explain its answer: it needs the answers generated "
        f"({why}); set protocol.mode=generate"
    )
