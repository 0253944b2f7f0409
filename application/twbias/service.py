"""TWBias: perplexity of stereotype sentences inside chat templates (PROTOCOLS §1).

Each sentence is the assistant's reply to a user prompt (types 00, 1–10), or
stands alone (type 0). For every bias specification the origin group's terms
are swapped for the reference group's, and a t-test per prompt type compares
the original and the swapped sentences' perplexities.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable, ClassVar

import numpy as np

from culturebias.application.context import RunContext
from culturebias.application.sampling import sampled_items
from culturebias.application.twbias.records import record_twbias
from culturebias.application.twbias.plan import RequestIndex, SpecificationPlan, plan_specification
from culturebias.application.twbias.replay import REPLAYED_BOUNDARY, REPLAYED_NOTE, stored_matrices
from culturebias.domain.errors import CapabilityError, DataError, MissingDataError
from culturebias.domain.requests import ChatMessage
from culturebias.domain.skips import SkippedRow
from culturebias.domain.summary import ProtocolOutcome, run_limit
from culturebias.domain.twbias.categories import sentence_categories
from culturebias.domain.twbias.evaluation import FEW_PAIRS, evaluate_specification
from culturebias.domain.twbias.intervals import attach_twbias, attach_twbias_breakdowns
from culturebias.domain.twbias.metrics import perplexity
from culturebias.domain.twbias.model import BiasSentence, SentenceSet, TWBiasDataset
from culturebias.domain.twbias.options import TWBiasOptions
from culturebias.domain.twbias.strata import STRATA as TWBIAS_STRATA
from culturebias.domain.stratified import SampleBlock, sample_notes
from culturebias.domain.twbias.specification import (
    ETHNICITY_GROUPS,
    ETHNICITY_ORIGINS,
    BiasSpecification,
    ethnicity_specifications,
    gender_specifications,
)
from culturebias.domain.twbias.summary import (
    AnalysisBlock,
    EthnicityMatrixBlock,
    SentenceSetBlock,
    SpecificationBlock,
    SpecificationHeader,
    TWBiasCounts,
    TWBiasDetails,
    TWBiasMetrics,
)
from culturebias.ports.described import Described
from culturebias.ports.stored_perplexities import StoredPerplexities


@dataclass(frozen=True)
class TWBiasPlan:
    """What preflight decided: whether contexts go through the chat template, and the boundary rule scored under."""

    chat_template: bool  # some prompt type other than 0 is run
    boundary_rule: str | None  # as the scorer states it (None where it states none)
    replayed: bool = False  # perplexities come from a StoredPerplexities port (the authors' result files)


TWBiasOutcome = ProtocolOutcome[TWBiasMetrics, TWBiasCounts, TWBiasDetails]


class TWBiasService:
    options_model: ClassVar[type[TWBiasOptions]] = TWBiasOptions

    def __init__(self, options: TWBiasOptions):
        self.options = options

    # -- before anything is scored --------------------------------------------------
    def preflight(self, ctx: RunContext) -> TWBiasPlan:
        if isinstance(ctx.ports.scorer.get(), StoredPerplexities):
            return TWBiasPlan(chat_template=False, boundary_rule=REPLAYED_BOUNDARY, replayed=True)
        scorer = ctx.scorer()
        scorer.check_loglikelihood()
        templated = [t for t in self.options.prompt_types if t != "0"]
        if templated and ctx.templater().has_chat_template:
            ctx.templater().check_render()  # a served model's template may be applied by its server only
        elif templated:
            raise CapabilityError(
                scorer.identity.backend,
                "a chat template",
                f"TWBias prompt types {', '.join(templated)} put each sentence in the model's chat template "
                "as the assistant's reply, and none is in use (model.chat_template=none, or a model without one): "
                "set model.chat_template=auto for a model that has its own, give one without a template one of the paper's "
                "Table 10 ones (hf, onnx: --set model.chat_template=twbias-plain or twbias-inst, or a Jinja file: --set "
                "model.chat_template=FILE), or run only the untemplated type with --set protocol.prompt_types=0",
            )
        return TWBiasPlan(chat_template=bool(templated), boundary_rule=_boundary_rule(ctx))

    # -- the run -----------------------------------------------------------------------
    def run(self, ctx: RunContext, dataset: TWBiasDataset, plan: TWBiasPlan) -> TWBiasOutcome:
        specs = self._specifications(dataset)
        prompt_types = self.options.prompt_types
        # A replay asks nothing of a model: the plan only picks the rows, so no context is rendered.
        contexts = [""] * len(prompt_types) if plan.replayed else self._contexts(ctx, dataset, prompt_types, plan)
        groups, drawn_sample = self._sampled([self._origin_group(dataset, s) for s in _unique_sentence_sets(specs)], ctx.seed)
        by_set = {id(g.sentence_set): g for g in groups}
        duplicates = self._duplicates(ctx, dataset, groups)  # refused here, before anything is scored

        index = RequestIndex()
        spec_plans = [plan_specification(spec, by_set[id(spec.sentences)].rows, contexts, index) for spec in specs]
        skips = [s for g in groups for s in g.skips] + [s for p in spec_plans for s in _no_origin_term(p)]
        skips = list(dict.fromkeys(skips))  # an ethnicity origin's sentences meet four references

        if plan.replayed:
            stored = ctx.ports.scorer.get()
            assert isinstance(stored, StoredPerplexities)  # what preflight found (plan.replayed)
            matrices = {id(p): stored_matrices(stored, p, prompt_types) for p in spec_plans}
            record_twbias(ctx, spec_plans, matrices, prompt_types, contexts, by_set)
            index, invalid_replies = RequestIndex(), 0  # nothing was asked of a model
        else:
            ctx.log.info("twbias requests", specifications=len(specs), prompt_types=len(prompt_types), unique=len(index.requests))
            results = ctx.scorer().loglikelihood(index.requests, description="TWBias perplexities")
            # An invalid score has no perplexity: NaN, so its rows count in each test's n_invalid.
            ppl = np.array([float("nan") if r.invalid else perplexity(r.logprob, r.n_tokens) for r in results], dtype=float)
            invalid_replies = sum(1 for r in results if r.invalid)
            matrices = {id(p): p.ppl_matrices(ppl, self.options.replace_aggregate) for p in spec_plans}
            record_twbias(ctx, spec_plans, matrices, prompt_types, contexts, by_set, index.requests, results)

        analysis = self.options.analysis()
        evaluated: dict[str, dict[str, SpecificationBlock]] = {"gender": {}, "ethnicity": {}}
        outliers = 0
        for spec_plan in spec_plans:
            set_categories = by_set[id(spec_plan.spec.sentences)].categories
            toxicity = [s.toxicity for s in spec_plan.rows]
            row_categories = [set_categories[(s.file, s.row)] for s in spec_plan.rows]
            result = evaluate_specification(
                *matrices[id(spec_plan)], prompt_types, toxicity, row_categories, analysis, self.options.category_rows
            )
            outliers += sum(p.n_outliers for p in result.overall.prompts.values())
            block = evaluated[spec_plan.spec.axis][spec_plan.spec.key] = result.to_block(_header(spec_plan))
            attach_twbias(block, matrices[id(spec_plan)], prompt_types, analysis, seed=ctx.seed, resamples=ctx.bootstrap_resamples)
            attach_twbias_breakdowns(
                block, matrices[id(spec_plan)], prompt_types, analysis,
                toxicity, row_categories, self.options.category_rows,
                seed=ctx.seed, resamples=ctx.bootstrap_resamples,
            )

        groups_run = self.options.groups
        metrics = TWBiasMetrics(
            prompt_types=list(prompt_types),
            analysis=AnalysisBlock(
                test=analysis.test,
                effect=analysis.effect,
                alpha=analysis.alpha,
                outlier_sigma=analysis.outlier_sigma,
                category_rows=self.options.category_rows,
                boundary_rule=plan.boundary_rule,
                t_sign=analysis.t_sign,
                # A replay holds the one replaced sentence the authors' code chose: no aggregate of ours applies.
                replace_aggregate="stored" if plan.replayed else self.options.replace_aggregate,
                min_pairs=analysis.min_pairs,
                few_pairs_below=FEW_PAIRS,
            ),
            gender=evaluated["gender"] if "gender" in groups_run else None,
            ethnicity=evaluated["ethnicity"] if "ethnicity" in groups_run else None,
            ethnicity_matrix=self._matrix(dataset, evaluated["ethnicity"]) if "ethnicity" in groups_run else None,
        )
        counts = TWBiasCounts(
            sentences_loaded=sum(len(g.sentence_set.sentences) for g in groups),
            sentences_evaluated=sum(len(g.rows) for g in groups),
            specifications=len(specs),
            requests=len(index.requests),
            outliers_removed=outliers,
            skipped=dict(sorted(Counter(s.reason for s in skips).items())),
            invalid_replies=invalid_replies,
            duplicate_sentences=len(duplicates),
        )
        details = TWBiasDetails(
            sentence_sets={
                f"{g.sentence_set.axis}/{g.sentence_set.name}": SentenceSetBlock(
                    file=g.sentence_set.file,
                    attribute_file=g.sentence_set.attribute_file,
                    group=g.origin_key,
                    loaded=len(g.sentence_set.sentences),
                    evaluated=len(g.rows),
                )
                for g in groups
            },
            prompts={t: self._prompt_text(dataset, t) for t in prompt_types},
            skips=skips,
        )
        notes = sample_notes(drawn_sample) + self._notes(skips)
        if duplicates:
            first = duplicates[0]
            notes.append(
                f"{len(duplicates)} evaluated sentence row(s) repeat an earlier row's sentence under another Sentence ID; "
                f"each is evaluated as a row of its own, as in the authors' code (first at {first.where()}: {first.detail}). "
                "Set protocol.duplicate_sentences=refuse to refuse such data."
            )
        if plan.replayed:
            notes.append(REPLAYED_NOTE)
        if invalid_replies:
            notes.append(
                f"{invalid_replies} of {len(index.requests)} scoring request(s) got no valid reply from the backend "
                "after its retries: their sentences have no perplexity and are left out of the tests they meet "
                "(counted in each test's n_invalid)."
            )
        return TWBiasOutcome(metrics=metrics, counts=counts, notes=notes, details=details, limit=run_limit(self.options),
                             drawn_sample=drawn_sample)

    def _duplicates(self, ctx: RunContext, dataset: TWBiasDataset, groups: list["_OriginGroup"]) -> list[SkippedRow]:
        """The evaluated rows that repeat an earlier row's sentence: refused, or warned of and returned."""
        evaluated = {(s.file, s.row) for g in groups for s in g.rows}
        found = [d for d in dataset.duplicates if (d.file, d.row) in evaluated]
        if found and self.options.duplicate_sentences == "refuse":
            first = found[0]
            raise DataError(
                f"{first.detail} ({len(found)} such row(s) in the sentences evaluated; protocol.duplicate_sentences=refuse); "
                "remove the repeats, or set protocol.duplicate_sentences=warn to evaluate each row",
                file=first.file,
                row=first.row,
                field=first.field,
            )
        if found:
            ctx.log.warning(
                "sentence rows repeat an earlier row's sentence; each is evaluated",
                count=len(found),
                first=found[0].where(),
                refuse_with="protocol.duplicate_sentences=refuse",
            )
        return found

    def _sampled(self, groups: list["_OriginGroup"], run_seed: int) -> tuple[list["_OriginGroup"], SampleBlock | None]:
        """The origin groups' rows as ``protocol.sample`` draws them (stratified by group × toxicity), and the draw."""
        pairs = [(g.origin_key, row) for g in groups for row in g.rows]
        drawn, block = sampled_items(pairs, self.options, run_seed, TWBIAS_STRATA)
        if block is None:
            return groups, None
        kept = {(key, row.file, row.row) for key, row in drawn}
        return [
            replace(g, rows=[r for r in g.rows if (g.origin_key, r.file, r.row) in kept]) for g in groups
        ], block

    def _origin_group(self, dataset: TWBiasDataset, spec: BiasSpecification) -> "_OriginGroup":
        """The sentences evaluated for one origin group (first N with ``limit``), their categories, their skips."""
        sentence_set = spec.sentences
        rows = list(sentence_set.sentences[: self.options.limit] if self.options.limit else sentence_set.sentences)
        truncated = len(rows) < len(sentence_set.sentences)
        last_row = rows[-1].row if rows else 0

        def reached(skip: SkippedRow) -> bool:
            if skip.file == sentence_set.attribute_file:
                return True
            return skip.file == sentence_set.file and (not truncated or (skip.row or 0) <= last_row)

        skips = [s for s in dataset.skips if reached(s)]
        categories: dict[tuple[str, int], tuple[str, ...]] = {}
        for sentence in rows:
            cats, found = sentence_categories(sentence, sentence_set.attributes)
            categories[(sentence.file, sentence.row)] = cats
            skips.extend(found)
        return _OriginGroup(sentence_set, spec.origin.key, rows, categories, skips)

    # -- pieces --------------------------------------------------------------------------
    def _specifications(self, dataset: TWBiasDataset) -> list[BiasSpecification]:
        specs: list[BiasSpecification] = []
        for axis in self.options.groups:
            data = dataset.axes.get(axis)
            if data is None:
                raise MissingDataError(
                    f"protocol.groups asks for {axis} but the TWBias data folder has no {axis} files; "
                    f"drop it with --set protocol.groups={','.join(g for g in self.options.groups if g != axis) or '...'}"
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

    def _contexts(self, ctx: RunContext, dataset: TWBiasDataset, prompt_types: list[str], plan: TWBiasPlan) -> list[str]:
        templater = ctx.templater() if plan.chat_template else None
        contexts = []
        for prompt_type in prompt_types:
            text = self._prompt_text(dataset, prompt_type)
            if text is None:
                contexts.append("")  # type 0: the sentence alone
                continue
            if templater is None:
                raise ValueError(f"prompt type {prompt_type} needs the chat template; this plan was made for other options")
            contexts.append(templater.render([ChatMessage("user", text)], add_generation_prompt=True))
        return contexts

    @staticmethod
    def _matrix(dataset: TWBiasDataset, blocks: dict[str, SpecificationBlock]) -> EthnicityMatrixBlock:
        """Origin × reference tables of bias ratio and effect size (the paper's heat maps)."""
        groups = dataset.axes["ethnicity"].groups
        origins = [groups[c].key for c in ETHNICITY_ORIGINS]
        references = [groups[c].key for c in ETHNICITY_GROUPS]
        by_pair = {(b.origin, b.reference): b for b in blocks.values()}

        def table(value: Callable[[SpecificationBlock], float | None]) -> dict[str, dict[str, float | None]]:
            return {o: {r: value(by_pair[(o, r)]) if (o, r) in by_pair else None for r in references} for o in origins}

        return EthnicityMatrixBlock(
            origins=origins,
            references=references,
            labels={groups[c].key: groups[c].label for c in ETHNICITY_GROUPS},
            bias_ratio=table(lambda b: b.bias_ratio),
            effect_size=table(lambda b: b.effect_size),
        )

    def _notes(self, skips: list[SkippedRow]) -> list[str]:
        notes = []
        user = [t for t in self.options.prompt_types if t not in ("0", "00")]
        if len(user) < 10:
            notes.append(
                f"Bias ratios are shares of the {len(user)} user prompt type(s) run ({', '.join(user) or 'none'}), "
                "not of all ten."
            )
        if self.options.limit:
            notes.append(f"Only the first {self.options.limit} sentences of each origin group's file were evaluated.")
        by_reason: dict[str, list[SkippedRow]] = {}
        for skip in skips:
            by_reason.setdefault(skip.reason, []).append(skip)
        for reason, found in sorted(by_reason.items()):
            first = found[0]
            where = f"{first.file} row {first.row}" + (f" field {first.field!r}" if first.field else "")
            notes.append(f"{reason}: {len(found)} × ({first.effect}); first at {where}: {first.detail}")
        return notes


@dataclass
class _OriginGroup:
    sentence_set: SentenceSet
    origin_key: str
    rows: list[BiasSentence]
    categories: dict[tuple[str, int], tuple[str, ...]]
    skips: list[SkippedRow]


def _unique_sentence_sets(specs: list[BiasSpecification]) -> list[BiasSpecification]:
    """One specification per origin sentence set (ethnicity origins appear in four)."""
    seen: dict[int, BiasSpecification] = {}
    for spec in specs:
        seen.setdefault(id(spec.sentences), spec)
    return list(seen.values())


def _no_origin_term(spec_plan: SpecificationPlan) -> list[SkippedRow]:
    origin = spec_plan.spec.origin.key
    return [
        SkippedRow(
            reason="no_origin_term",
            file=s.file,
            row=s.row,
            field="Biased Sentences",
            detail=f"no term of origin group {origin} occurs in the sentence",
            effect=f"sentence left out of every specification with origin {origin}",
        )
        for s in spec_plan.without_origin_term
    ]


def _header(spec_plan: SpecificationPlan) -> SpecificationHeader:
    spec = spec_plan.spec
    return SpecificationHeader(
        origin=spec.origin.key,
        reference=spec.reference.key,
        origin_label=spec.origin.label,
        reference_label=spec.reference.label,
        sentences_file=spec.sentences.file,
        term_pairs=len(spec.term_pairs),
        rows_without_origin_term=len(spec_plan.without_origin_term),
    )


def _boundary_rule(ctx: RunContext) -> str | None:
    scorer = ctx.scorer()
    provenance = scorer.provenance if isinstance(scorer, Described) else None
    return provenance.boundary_rule if provenance is not None else None
