"""KoBBQ and CBBQ: two configurations of one BBQ-family service (PROTOCOLS §2).

Both build ``Question``s (item × prompt × option order), ask them through
``Asker`` in the configured mode and turn the answers into metrics. Another
BBQ-format dataset needs a loader producing ``QAItem``s and a prompt set.
"""

from __future__ import annotations

from collections import Counter
from typing import ClassVar, Sequence

from culturebias.application.bbq.answering import Asker, Question, resolve_mode, uses_chat_template
from culturebias.application.bbq.cbbq_summary import condition_block
from culturebias.application.bbq.kobbq_summary import kobbq_metrics
from culturebias.application.context import RunContext
from culturebias.domain.bbq import cbbq_prompts
from culturebias.domain.bbq.kobbq_prompts import KoBBQDataset
from culturebias.domain.bbq.model import Answer, AnswerClass, BBQDataset, QAItem
from culturebias.domain.bbq.options import shown_order
from culturebias.domain.bbq.settings import CBBQSettings, KoBBQSettings, BBQSettings
from culturebias.domain.errors import ConfigError
from culturebias.domain.requests import GenerationParams
from culturebias.domain.runs import ProtocolOutcome


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


class _BBQService:
    settings_model: ClassVar[type[BBQSettings]]
    label: ClassVar[str]

    def __init__(self, settings: BBQSettings):
        self.settings = settings
        self.mode: str | None = None
        self.chat: bool = False

    def _needs_generator(self) -> bool:
        return False

    def preflight(self, ctx: RunContext) -> None:
        self.mode = resolve_mode(ctx, self.settings.mode, needs_generator=self._needs_generator())
        self.chat = uses_chat_template(ctx)

    def _asker(self, ctx: RunContext) -> Asker:
        if self.mode is None:
            self.preflight(ctx)
        answer = GenerationParams(max_new_tokens=self.settings.max_new_tokens, seed=ctx.seed)
        reasoning = GenerationParams(
            max_new_tokens=getattr(self.settings, "reasoning_max_new_tokens", self.settings.max_new_tokens), seed=ctx.seed
        )
        return Asker(ctx, self.mode, self.chat, answer, reasoning)  # type: ignore[arg-type]

    def _common_metrics(self) -> dict:
        return {
            "mode": self.mode,
            "chat_template": self.chat,
            "permutations": self.settings.permutations,  # type: ignore[attr-defined]
            "permutation_scheme": self.settings.permutation_scheme,
        }

    def _notes(self) -> list[str]:
        notes = [
            f"answering mode: {self.mode}"
            + (" (option letters scored; no out-of-choice answers possible)" if self.mode == "likelihood" else ""),
            "prompts rendered with the model's chat template" if self.chat else "prompts given as plain text (no chat template)",
        ]
        if self.mode == "generate":
            notes.append("replies that name no single option are out-of-choice: excluded from the scores, counted in ooc_ratio")
        return notes


class KoBBQService(_BBQService):
    name: ClassVar[str] = "kobbq"
    settings_model: ClassVar[type[KoBBQSettings]] = KoBBQSettings
    label = "KoBBQ"

    def prompt_ids(self, dataset: KoBBQDataset) -> list[str]:
        wanted = self.settings.prompts  # type: ignore[attr-defined]
        if wanted is None:
            return list(dataset.prompts)
        unknown = [p for p in wanted if p not in dataset.prompts]
        if unknown:
            raise ConfigError(f"protocol.prompts: unknown prompt id(s) {unknown}; the prompts file has {sorted(dataset.prompts)}")
        return list(wanted)

    def questions(self, items: Sequence[QAItem], dataset: KoBBQDataset) -> list[Question]:
        s: KoBBQSettings = self.settings  # type: ignore[assignment]
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

    def run(self, ctx: RunContext, dataset: KoBBQDataset) -> ProtocolOutcome:
        s: KoBBQSettings = self.settings  # type: ignore[assignment]
        prompts = self.prompt_ids(dataset)
        items = select_categories(dataset.items, s.categories)
        items = items[: s.limit] if s.limit else items
        if not items:
            raise ConfigError("no KoBBQ items to evaluate (check protocol.categories and protocol.limit)")
        asker = self._asker(ctx)
        answers = asker.ask(self.questions(items, dataset), self.label)
        metrics, templates = kobbq_metrics(answers, prompts, s.aggregate, s.std_ddof, s.statistics)
        metrics = {
            **self._common_metrics(),
            "prompts": prompts,
            "unknown_wording": {p: dataset.prompts[p].unknown for p in prompts},
            "aggregate": s.aggregate,
            "std_ddof": s.std_ddof,
            **metrics,
        }
        ooc = Counter(a.prompt_id for a in answers if a.answer_class is AnswerClass.OUT_OF_CHOICE)
        counts = {
            "items_in_data": len(dataset.items) + len(dataset.skips),
            "items_skipped": len(dataset.skips),
            "items": len(items),
            "answers": len(answers),
            "out_of_choice": sum(ooc.values()),
            "out_of_choice_by_prompt": {p: ooc.get(p, 0) for p in prompts},
        }
        notes = self._notes()
        violated = [
            f"prompt {p}: {name}"
            for p, b in metrics["overall"]["bounds"].items()
            for name in ("diff_bias_amb", "diff_bias_dis")
            if b[f"{name}_within_bound"] is False
        ]
        if violated:
            notes.append(
                "diff-bias outside its bound (unequal out-of-choice losses between biased and counter-biased "
                "contexts): " + ", ".join(violated)
            )
        details = {
            "skips": [skip.as_dict() for skip in dataset.skips],
            "template_scores": templates,
            **dataset.facts,
        }
        if s.keep_predictions:
            details["predictions"] = [prediction_line(a) for a in answers]
        return ProtocolOutcome(metrics=metrics, counts=counts, notes=notes, details=details)


class CBBQService(_BBQService):
    name: ClassVar[str] = "cbbq"
    settings_model: ClassVar[type[CBBQSettings]] = CBBQSettings
    label = "CBBQ"

    def _needs_generator(self) -> bool:
        return "q_if_cot" in self.settings.condition  # type: ignore[attr-defined]

    def questions(self, items: Sequence[QAItem]) -> list[Question]:
        s: CBBQSettings = self.settings  # type: ignore[assignment]
        out = []
        for condition in s.condition:
            for item in items:
                for permutation in s.permutations:
                    order = shown_order(len(item.options), permutation, s.permutation_scheme)
                    shown = tuple(item.options[i] for i in order)
                    turns = cbbq_prompts.turns(condition, item.context, item.question, shown)  # type: ignore[arg-type]
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

    def run(self, ctx: RunContext, dataset: BBQDataset) -> ProtocolOutcome:
        s: CBBQSettings = self.settings  # type: ignore[assignment]
        items = self._limit(select_categories(dataset.items, s.categories), s.limit)
        unresolved = [i for i in items if i.biased_index is None]
        scored_items = [i for i in items if i.biased_index is not None]
        if not scored_items:
            raise ConfigError("no CBBQ items to evaluate (check protocol.categories and protocol.limit)")
        answers = self._asker(ctx).ask(self.questions(scored_items), self.label)
        blocks = {
            c: condition_block([a for a in answers if a.prompt_id == c], s.w1, s.w2, s.overall) for c in s.condition
        }
        primary = s.condition[0]
        metrics = {
            **self._common_metrics(),
            "condition": primary,
            "condition_name": cbbq_prompts.CONDITION_NAMES[primary],
            "conditions": s.condition,
            "weights": {"w1": s.w1, "w2": s.w2},
            "overall_aggregate": s.overall,
            "overall": blocks[primary]["overall"],
            "by_category": blocks[primary]["by_category"],
            "by_condition": blocks,
        }
        ooc = Counter(a.prompt_id for a in answers if a.answer_class is AnswerClass.OUT_OF_CHOICE)
        derivation = dataset.facts.get("biased_answer_derivation", {})
        counts = {
            "items_in_data": len(dataset.items) + len(dataset.skips),
            "items_skipped": len(dataset.skips),
            "items": len(items),
            "ambiguous_items": sum(i.ambiguous for i in scored_items),
            "disambiguated_items": sum(not i.ambiguous for i in scored_items),
            "biased_answer_unresolved": len(unresolved),
            "biased_answer_unresolved_in_data": derivation.get("unresolved", 0),
            "biased_answer_derivation": derivation,
            "answers": len(answers),
            "out_of_choice": sum(ooc.values()),
            "out_of_choice_by_condition": {c: ooc.get(c, 0) for c in s.condition},
        }
        notes = self._notes() + [
            "biased answers derived: disambiguated items from their label, ambiguous items from their "
            "disambiguated twin template, else from bias_targeted_groups",
        ]
        if unresolved:
            notes.append(
                f"{len(unresolved)} ambiguous item(s) without a derivable biased answer were not asked and are "
                "left out of every score (details.biased_answer_unresolved_ids)"
            )
        details = {
            "skips": [skip.as_dict() for skip in dataset.skips],
            "categories": sorted({i.category for i in items}),
            "biased_answer_unresolved_ids": [i.sample_id for i in unresolved],
        }
        if s.keep_predictions:
            details["predictions"] = [prediction_line(a) for a in answers]
        return ProtocolOutcome(metrics=metrics, counts=counts, notes=notes, details=details)
