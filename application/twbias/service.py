"""TWBias: perplexity of stereotype sentences inside chat templates (PROTOCOLS §1).

Each sentence is the assistant's reply to a user prompt (types 00, 1–10), or
stands alone (type 0). For every bias specification the origin group's terms
are swapped for the reference group's, and a t-test per prompt type compares
the original and the swapped sentences' perplexities.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar

import numpy as np

from culturebias.application.context import RunContext
from culturebias.application.twbias.plan import RequestIndex, SpecificationPlan, plan_specification
from culturebias.domain.errors import CapabilityError, MissingDataError
from culturebias.domain.requests import ChatMessage
from culturebias.domain.runs import ProtocolOutcome
from culturebias.domain.twbias.categories import sentence_categories
from culturebias.domain.twbias.evaluation import SpecificationResult, evaluate_specification
from culturebias.domain.twbias.metrics import perplexity
from culturebias.domain.twbias.model import Skip, TWBiasDataset
from culturebias.domain.twbias.settings import TWBiasSettings
from culturebias.domain.twbias.specification import (
    ETHNICITY_GROUPS,
    ETHNICITY_ORIGINS,
    BiasSpecification,
    ethnicity_specifications,
    gender_specifications,
)
from culturebias.ports.templating import ChatTemplater


class TWBiasService:
    name: ClassVar[str] = "twbias"
    settings_model: ClassVar[type[TWBiasSettings]] = TWBiasSettings

    def __init__(self, settings: TWBiasSettings):
        self.settings = settings

    # -- before anything is scored --------------------------------------------------
    def preflight(self, ctx: RunContext) -> None:
        scorer = ctx.scorer()
        scorer.check_loglikelihood()
        templated = [t for t in self.settings.prompt_types if t != "0"]
        if templated and not ctx.templater().has_chat_template:
            raise CapabilityError(
                scorer.identity.backend,
                "a chat template",
                f"TWBias prompt types {', '.join(templated)} put each sentence in the model's chat template "
                "as the assistant's reply; use a chat (instruct) model, or only the untemplated type with "
                "--set protocol.prompt_types=0",
            )

    # -- the run -----------------------------------------------------------------------
    def run(self, ctx: RunContext, dataset: TWBiasDataset) -> ProtocolOutcome:
        settings = self.settings
        specs = self._specifications(dataset)
        prompt_types = settings.prompt_types
        contexts = self._contexts(ctx, dataset, prompt_types)

        # Sentences per origin group (first N with ``limit``) and their categories.
        chosen: dict[int, list] = {}
        categories: dict[tuple[str, int], tuple[str, ...]] = {}
        used_files = {f for s in specs for f in (s.sentences.file, s.sentences.attribute_file)}
        skips: list[Skip] = [s for s in dataset.skips if s.file in used_files]
        for spec in specs:
            key = id(spec.sentences)
            if key in chosen:
                continue
            rows = list(spec.sentences.sentences[: settings.limit] if settings.limit else spec.sentences.sentences)
            chosen[key] = rows
            for sentence in rows:
                cats, found = sentence_categories(sentence, spec.sentences.attributes)
                categories[(sentence.file, sentence.row)] = cats
                skips.extend(found)

        index = RequestIndex()
        plans = [plan_specification(spec, chosen[id(spec.sentences)], contexts, index) for spec in specs]
        for plan in plans:
            skips.extend(
                Skip(
                    "no_origin_term",
                    s.file,
                    s.row,
                    "Biased Sentences",
                    f"no term of origin group {plan.spec.origin.key} occurs in the sentence",
                    f"sentence left out of every specification with origin {plan.spec.origin.key}",
                )
                for s in plan.without_origin_term
            )

        ctx.log.info("twbias requests", specifications=len(specs), prompt_types=len(prompt_types), unique=len(index.requests))
        results = ctx.scorer().loglikelihood(index.requests, description="TWBias perplexities")
        ppl = np.array([perplexity(r.logprob, r.n_tokens) for r in results], dtype=float)

        options = settings.analysis()
        evaluated: dict[str, dict[str, Any]] = {"gender": {}, "ethnicity": {}}
        outliers = 0
        for plan in plans:
            result = self._evaluate(plan, ppl, prompt_types, categories, options)
            outliers += sum(p.n_outliers for p in result.overall.prompts.values())
            evaluated[plan.spec.axis][plan.spec.key] = self._spec_block(plan, result)

        metrics: dict[str, Any] = {
            "prompt_types": list(prompt_types),
            "analysis": {
                "test": options.test,
                "effect": options.effect,
                "alpha": options.alpha,
                "outlier_sigma": options.outlier_sigma,
                "category_rows": settings.category_rows,
                "boundary_rule": _boundary_rule(ctx),
            },
        }
        for axis in settings.groups:
            metrics[axis] = evaluated[axis]
        if "ethnicity" in settings.groups:
            metrics["ethnicity_matrix"] = self._matrix(dataset, evaluated["ethnicity"])

        unique_skips = list(dict.fromkeys(skips))
        used_sets = {id(s.sentences): s.sentences for s in specs}
        origin_keys = {id(s.sentences): s.origin.key for s in specs}
        counts = {
            "sentences_loaded": sum(len(s.sentences) for s in used_sets.values()),
            "sentences_evaluated": sum(len(chosen[k]) for k in used_sets),
            "specifications": len(specs),
            "requests": len(index.requests),
            "outliers_removed": outliers,
            "skipped": dict(sorted(Counter(s.reason for s in unique_skips).items())),
        }
        details = {
            "sentence_sets": {
                f"{s.axis}/{s.name}": {
                    "file": s.file,
                    "attribute_file": s.attribute_file,
                    "group": origin_keys[k],
                    "loaded": len(s.sentences),
                    "evaluated": len(chosen[k]),
                }
                for k, s in used_sets.items()
            },
            "prompts": {t: self._prompt_text(dataset, t) for t in prompt_types},
            "skips": [s.as_dict() for s in unique_skips],
        }
        return ProtocolOutcome(metrics=metrics, counts=counts, notes=self._notes(unique_skips, plans), details=details)

    # -- pieces --------------------------------------------------------------------------
    def _specifications(self, dataset: TWBiasDataset) -> list[BiasSpecification]:
        specs: list[BiasSpecification] = []
        for axis in self.settings.groups:
            data = dataset.axes.get(axis)
            if data is None:
                raise MissingDataError(
                    f"protocol.groups asks for {axis} but the TWBias data folder has no {axis} files; "
                    f"drop it with --set protocol.groups={','.join(g for g in self.settings.groups if g != axis) or '...'}"
                )
            specs += gender_specifications(data) if axis == "gender" else ethnicity_specifications(data)
        return specs

    @staticmethod
    def _prompt_text(dataset: TWBiasDataset, prompt_type: str) -> str | None:
        if prompt_type == "0":
            return None  # no template at all
        if prompt_type == "00":
            return ""
        return dataset.prompts[prompt_type]

    def _contexts(self, ctx: RunContext, dataset: TWBiasDataset, prompt_types: list[str]) -> list[str]:
        templater: ChatTemplater | None = None
        contexts = []
        for prompt_type in prompt_types:
            text = self._prompt_text(dataset, prompt_type)
            if text is None:
                contexts.append("")
                continue
            templater = templater or ctx.templater()
            contexts.append(templater.render([ChatMessage("user", text)], add_generation_prompt=True))
        return contexts

    def _evaluate(self, plan: SpecificationPlan, ppl, prompt_types, categories, options) -> SpecificationResult:
        origin, replace = plan.ppl_matrices(ppl)
        return evaluate_specification(
            origin,
            replace,
            prompt_types,
            toxicity=[s.toxicity for s in plan.rows],
            categories=[categories[(s.file, s.row)] for s in plan.rows],
            options=options,
            category_mode=self.settings.category_rows,
        )

    @staticmethod
    def _spec_block(plan: SpecificationPlan, result: SpecificationResult) -> dict[str, Any]:
        spec = plan.spec
        return {
            "origin": spec.origin.key,
            "reference": spec.reference.key,
            "origin_label": spec.origin.label,
            "reference_label": spec.reference.label,
            "sentences_file": spec.sentences.file,
            "term_pairs": len(spec.term_pairs),
            "rows_without_origin_term": len(plan.without_origin_term),
            **result.as_dict(),
        }

    @staticmethod
    def _matrix(dataset: TWBiasDataset, blocks: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Origin × reference tables of bias ratio and effect size (the paper's heat maps)."""
        groups = dataset.axes["ethnicity"].groups
        origins = [groups[c].key for c in ETHNICITY_ORIGINS]
        references = [groups[c].key for c in ETHNICITY_GROUPS]
        by_pair = {(b["origin"], b["reference"]): b for b in blocks.values()}

        def table(metric: str) -> dict[str, dict[str, Any]]:
            return {
                o: {r: by_pair[(o, r)][metric] if (o, r) in by_pair else None for r in references} for o in origins
            }

        return {
            "origins": origins,
            "references": references,
            "labels": {groups[c].key: groups[c].label for c in ETHNICITY_GROUPS},
            "bias_ratio": table("bias_ratio"),
            "effect_size": table("effect_size"),
        }

    def _notes(self, skips: list[Skip], plans: list[SpecificationPlan]) -> list[str]:
        notes = []
        user = [t for t in self.settings.prompt_types if t not in ("0", "00")]
        if len(user) < 10:
            notes.append(
                f"Bias ratios are shares of the {len(user)} user prompt type(s) run ({', '.join(user) or 'none'}), "
                "not of all ten."
            )
        if self.settings.limit:
            notes.append(f"Only the first {self.settings.limit} sentences of each origin group's file were evaluated.")
        by_reason: dict[str, list[Skip]] = {}
        for skip in skips:
            by_reason.setdefault(skip.reason, []).append(skip)
        for reason, found in sorted(by_reason.items()):
            first = found[0]
            where = f"{first.file} row {first.row}" + (f" field {first.field!r}" if first.field else "")
            notes.append(f"{reason}: {len(found)} × ({first.effect}); first at {where}: {first.detail}")
        return notes


def _boundary_rule(ctx: RunContext) -> str | None:
    provenance = getattr(ctx.scorer(), "provenance", None)
    return getattr(provenance, "boundary_rule", None)
