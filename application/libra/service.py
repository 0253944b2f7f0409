"""LIBRA (PROTOCOLS §4): lms, ss, iCAT, JSD, bbs and EiCAT for causal and masked LMs.

1. knowledge boundary: local words (outside a general lexicon), the model's
   meaning of each in context against the glossary's; triplets holding a
   misunderstood word are invalid;
2. L(S), L(S_p), L(S_u) for every triplet in one batched call: causal
   ``log p(filler + U_right | U_left)``, or masked pseudo-log-likelihood over
   the characters of ``filler + U_right``;
3. the metrics on the valid triplets, overall, per category and per group.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, ClassVar, Sequence

from culturebias.application.context import RunContext
from culturebias.application.sampling import sampled_items
from culturebias.domain.libra.strata import STRATA as LIBRA_STRATA
from culturebias.domain.stratified import SampleBlock, sample_notes
from culturebias.domain.summary import run_limit
from culturebias.application.libra.records import record_libra
from culturebias.application.libra.knowledge import KnowledgeBoundaryOutcome, check_knowledge_boundary
from culturebias.domain.errors import CapabilityError, ConfigError
from culturebias.domain.libra.metrics import LibraScores, TripletLikelihood, libra_scores
from culturebias.domain.libra.options import LibraOptions
from culturebias.domain.libra.summary import (
    JsdHistogram,
    LibraCounts,
    LibraDetails,
    LibraMetrics,
    LibraOutcome,
    LibraScoresBlock,
    LocalWordBlock,
    ModelType,
    TripletColumns,
)
from culturebias.domain.libra.triplets import SENTENCE_KINDS, LibraDataset, Triplet
from culturebias.domain.libra.intervals import attach_libra, attach_libra_breakdown
from culturebias.domain.libra.validity import libra_validity
from culturebias.domain.validity import validity_notes
from culturebias.application.libra.likelihood import DESCRIPTIONS, SpanSentence, likelihood_kind, score_sentences
from culturebias.application.libra.stereoset import score_stereoset
from culturebias.application.libra.meaning_choice import check_by_choice
from culturebias.application.libra.method import MASKED_CHOICE_NOTE, bbs_not_applicable, comparison_kind, comparison_used
from culturebias.ports.lexicon import Lexicon
from culturebias.ports.similarity import TextEmbedder

SMALL_BREAKDOWN = 10  # valid triplets below which a breakdown's JSD is flagged as coarse


def _category(triplet: Triplet) -> str:
    return triplet.category


def _group(triplet: Triplet) -> str:
    return triplet.group


def _members(triplets: Sequence[Triplet], key: Callable[[Triplet], str]) -> dict[str, list[int]]:
    """Each breakdown name's triplets, by their index in ``triplets``."""
    members: dict[str, list[int]] = defaultdict(list)
    for i, triplet in enumerate(triplets):
        members[key(triplet)].append(i)
    return dict(members)


@dataclass(frozen=True)
class KnowledgeBoundaryPlan:
    lexicon: Lexicon
    embedder: TextEmbedder | None  # None: the judge compares the definitions
    by_choice: bool = False  # a masked LM ranks definitions instead (protocol.masked_meaning=choice)


@dataclass(frozen=True)
class LibraPlan:
    """What preflight decided: how L(S) is scored, and whether the knowledge boundary is checked."""

    model_type: ModelType
    boundary: KnowledgeBoundaryPlan | None  # None: not checked, for the reason in boundary_skipped
    boundary_skipped: str | None = None


class LibraService:
    options_model: ClassVar[type[LibraOptions]] = LibraOptions

    def __init__(self, options: LibraOptions):
        self.options = options

    # -- preflight ---------------------------------------------------------------

    def preflight(self, ctx: RunContext) -> LibraPlan:
        model_type = self._choose_scoring(ctx)
        by_choice = model_type == "masked" and self.options.masked_meaning == "choice"
        boundary, skipped = self._prepare_knowledge_boundary(ctx, by_choice)
        return LibraPlan(model_type, boundary, skipped)

    def _choose_scoring(self, ctx: RunContext) -> ModelType:
        mode = self.options.scoring
        if mode in ("auto", "masked"):
            try:
                ctx.pseudo_scorer()
                return "masked"
            except CapabilityError:
                if mode == "masked":
                    raise
        ctx.scorer().check_loglikelihood()
        return "causal"

    def _prepare_knowledge_boundary(
        self, ctx: RunContext, by_choice: bool = False
    ) -> tuple[KnowledgeBoundaryPlan | None, str | None]:
        """The lexicon and embedder of the check, or None and why it is skipped."""
        options = self.options
        if options.knowledge_boundary == "off":
            return None, "switched off (protocol.knowledge_boundary=off)"
        try:
            if not by_choice:
                ctx.generator()
        except CapabilityError as error:
            if options.knowledge_boundary == "on":
                raise
            return None, f"the model cannot generate definitions ({error})"
        if ctx.lexicons is None:
            raise ConfigError("LIBRA's knowledge boundary needs a general lexicon, and none is wired into this run")
        lexicon = ctx.lexicons(options.lexicon, options.lexicon_min_frequency)
        if by_choice:
            return KnowledgeBoundaryPlan(lexicon, None, by_choice=True), None
        embedder: TextEmbedder | None = None
        if comparison_kind(options, ctx) == "embedding":
            if ctx.embedders is None:
                raise ConfigError("protocol.comparison=embedding needs a sentence embedder, and none is wired into this run")
            embedder = ctx.embedders(options.embedder)
        else:
            ctx.judge()
        return KnowledgeBoundaryPlan(lexicon, embedder), None

    # -- run ---------------------------------------------------------------------

    def run(self, ctx: RunContext, dataset: LibraDataset, plan: LibraPlan) -> LibraOutcome:
        triplets, drawn_sample = sampled_items(  # triplets; StereoSet whole
            list(dataset.triplets)[: self.options.limit], self.options, ctx.seed, LIBRA_STRATA
        )
        boundary: KnowledgeBoundaryOutcome | None = None
        if plan.boundary is not None:
            boundary = (
                check_by_choice(ctx, self.options, triplets, dataset.glossary, plan.boundary.lexicon)
                if plan.boundary.by_choice
                else check_knowledge_boundary(
                    ctx, self.options, triplets, dataset.glossary, plan.boundary.lexicon, plan.boundary.embedder
                )
            )
        likelihoods, unscored = self._score(ctx, plan.model_type, triplets)
        valid = {t.id: t.id not in unscored and (boundary is None or boundary.boundary.is_valid(t.id)) for t in triplets}
        record_libra(ctx, plan.model_type, triplets, likelihoods, valid, boundary)
        overall = self._scores(triplets, likelihoods, valid, boundary)
        kind = likelihood_kind(plan.model_type, self.options)
        members = {"category": _members(triplets, _category), "group": _members(triplets, _group)}  # each breakdown's triplets, once
        metrics = LibraMetrics(
            model_type=plan.model_type,
            overall=overall.to_block(),
            by_category=self._breakdown(triplets, likelihoods, valid, boundary, members["category"]),
            by_group=self._breakdown(triplets, likelihoods, valid, boundary, members["group"]),
            likelihood=kind,
            comparison=comparison_used(plan.boundary),
            bbs_not_applicable=bbs_not_applicable(plan.model_type, plan.boundary_skipped),
        )
        stereoset, stereoset_notes = score_stereoset(ctx, kind, dataset, self.options.limit)
        metrics.stereoset = stereoset
        keep = [valid[t.id] for t in triplets]
        alpha = None if self.options.alpha == "bbs" else float(self.options.alpha)
        bins, seed, resamples = self.options.jsd_bins, ctx.seed, ctx.bootstrap_resamples
        attach_libra(metrics.overall, likelihoods, keep, alpha=alpha, bins=bins, seed=seed, resamples=resamples)
        for blocks, key in ((metrics.by_category, "category"), (metrics.by_group, "group")):
            attach_libra_breakdown(
                blocks, members[key], likelihoods, keep, alpha=alpha, bins=bins, seed=seed, resamples=resamples
            )
        small = sorted(
            {
                name
                for breakdown in (metrics.by_category, metrics.by_group)
                for name, block in breakdown.items()
                if block.valid < SMALL_BREAKDOWN
            }
        )
        notes = sample_notes(drawn_sample) + self._notes(plan, boundary) + stereoset_notes
        if unscored:
            notes.append(
                f"{sum(unscored.values())} scoring request(s) got no valid reply from the backend after its retries: "
                f"their {len(unscored)} triplet(s) are invalid, left out of every score (counted in invalid_scores)"
            )
        if small:
            notes.append(
                f"{len(small)} categories or groups have fewer than {SMALL_BREAKDOWN} valid triplets "
                f"({', '.join(small)}): their JSD, from so few values, is coarse"
            )
        validity = libra_validity([score for t, score in zip(triplets, likelihoods) if valid[t.id]], self.options.validity)
        return LibraOutcome(
            validity=validity,
            metrics=metrics,
            counts=self._counts(plan, triplets, valid, boundary).model_copy(
                update={"invalid_scores": sum(unscored.values()) or None}
            ),
            notes=notes + validity_notes(validity),
            details=self._details(triplets, likelihoods, valid, boundary, overall),
            limit=run_limit(self.options),
            drawn_sample=drawn_sample,
        )

    def _score(
        self, ctx: RunContext, model_type: ModelType, triplets: list[Triplet]
    ) -> tuple[list[TripletLikelihood], dict[str, int]]:
        """L(S), L(S_p), L(S_u) per triplet, and the triplets with scores the backend got no valid reply for (id → how many)."""
        sentences = [
            SpanSentence(t.sentence(kind), len(t.left), len(t.left) + len(t.filler(kind)))
            for t in triplets
            for kind in SENTENCE_KINDS
        ]
        label = "LIBRA: triplets (masked LM)" if model_type == "masked" else "LIBRA: triplets"
        values, lost = score_sentences(ctx, likelihood_kind(model_type, self.options), sentences, label)
        unscored = {t.id: sum(lost[3 * i : 3 * i + 3]) for i, t in enumerate(triplets) if any(lost[3 * i : 3 * i + 3])}
        return [TripletLikelihood(*values[3 * i : 3 * i + 3]) for i in range(len(triplets))], unscored

    def _scores(
        self,
        triplets: list[Triplet],
        likelihoods: list[TripletLikelihood],
        valid: dict[str, bool],
        boundary: KnowledgeBoundaryOutcome | None,
    ) -> LibraScores:
        kept = [score for t, score in zip(triplets, likelihoods) if valid[t.id]]
        understood = boundary.boundary.understood_over(t.id for t in triplets) if boundary else []
        alpha = None if self.options.alpha == "bbs" else float(self.options.alpha)
        return libra_scores(
            kept, understood, invalid=len(triplets) - len(kept), bins=self.options.jsd_bins, alpha=alpha
        )

    def _breakdown(
        self,
        triplets: list[Triplet],
        likelihoods: list[TripletLikelihood],
        valid: dict[str, bool],
        boundary: KnowledgeBoundaryOutcome | None,
        members: dict[str, list[int]],
    ) -> dict[str, LibraScoresBlock]:
        return {
            name: self._scores(
                [triplets[i] for i in idx], [likelihoods[i] for i in idx], valid, boundary
            ).to_block()
            for name, idx in sorted(members.items())
        }

    # -- summary pieces ----------------------------------------------------------

    def _counts(
        self,
        plan: LibraPlan,
        triplets: list[Triplet],
        valid: dict[str, bool],
        boundary: KnowledgeBoundaryOutcome | None,
    ) -> LibraCounts:
        n_valid = sum(valid.values())
        if boundary is None:
            return LibraCounts(
                model_type=plan.model_type,
                triplets=len(triplets),
                valid_triplets=n_valid,
                invalid_triplets=len(triplets) - n_valid,
            )
        kb = boundary.boundary
        understood = list(kb.understood.values())
        return LibraCounts(
            model_type=plan.model_type,
            triplets=len(triplets),
            valid_triplets=n_valid,
            invalid_triplets=len(triplets) - n_valid,
            local_words=len(kb.vocabulary.terms),
            local_words_checked=len(understood),
            local_words_understood=sum(understood),
            local_words_not_understood=len(understood) - sum(understood),
            local_words_without_definition=len(kb.vocabulary.without_definition()),
            judge_failures=boundary.judge_failures,
            invalid_replies=boundary.invalid_replies,
        )

    def _notes(self, plan: LibraPlan, boundary: KnowledgeBoundaryOutcome | None) -> list[str]:
        s = self.options
        notes = [
            f"L(S) is the {DESCRIPTIONS[likelihood_kind(plan.model_type, s)]} (protocol.masked_likelihood for masked LMs); "
            "JSD of masked and causal models are not comparable",
            f"JSD: base 2 on histograms with shared bin edges (bins={s.jsd_bins}); "
            f"EiCAT α = {'bbs' if s.alpha == 'bbs' else s.alpha}",
        ]
        if s.limit:
            notes.append(f"Only the first {s.limit} triplets of the triplet file were evaluated.")
        if boundary is None or plan.boundary is None:
            notes.append(
                f"knowledge boundary not checked: {plan.boundary_skipped}; bbs and EiCAT are null and every triplet counts as valid"
            )
            return notes
        comparison = (
            f"embedding cosine ≥ {s.similarity_threshold}"
            + ("" if s.nearest_margin is None else f" with the term's own glossary definition the nearest (margin ≥ {s.nearest_margin})")
            + f" ({plan.boundary.embedder.describe()}; this project's alternative to the paper's judge; the defaults "
            "are calibrated for all-MiniLM-L6-v2, docs/PROTOCOLS.md §4)"
            if plan.boundary.embedder is not None
            else f"the judge's verdict ≥ {s.judge_threshold} (the paper's P2 verification)"
        )
        if plan.boundary.by_choice:
            comparison = MASKED_CHOICE_NOTE.format(k=s.meaning_choices)
        notes.append(
            f"knowledge boundary: local words are those outside {plan.boundary.lexicon.describe()} "
            f"({'plus glossary terms' if s.local_words == 'lexicon+glossary' else 'inflections included'}); "
            f"the model's definition is compared with the glossary's by {comparison}"
        )
        if not boundary.boundary.understood:
            notes.append("no local word could be checked against the glossary: bbs and EiCAT are undefined (null)")
        missing = boundary.boundary.vocabulary.without_definition()
        if missing:
            policy = (
                "left out of bbs; their triplets stay valid"
                if s.missing_definition == "skip"
                else "counted as not understood (f = 0), which invalidates their triplets"
            )
            notes.append(f"{len(missing)} local word(s) have no glossary definition and are {policy}")
        return notes + boundary.notes

    def _details(
        self,
        triplets: list[Triplet],
        likelihoods: list[TripletLikelihood],
        valid: dict[str, bool],
        boundary: KnowledgeBoundaryOutcome | None,
        overall: LibraScores,
    ) -> LibraDetails:
        columns = TripletColumns(
            id=[t.id for t in triplets],
            group=[t.group for t in triplets],
            category=[t.category for t in triplets],
            valid=[valid[t.id] for t in triplets],
            stereotyped=[s.stereotyped for s in likelihoods],
            anti_stereotyped=[s.anti_stereotyped for s in likelihoods],
            unrelated=[s.unrelated for s in likelihoods],
        )
        histogram: JsdHistogram = overall.divergence.histogram()
        if boundary is None:
            return LibraDetails(triplets=columns, jsd_histogram=histogram)
        kb = boundary.boundary
        local_words = []
        for term in kb.vocabulary.terms.values():
            comparison = boundary.comparisons.get(term.term)
            local_words.append(
                LocalWordBlock(
                    term=term.term,
                    as_written=term.surface,
                    context=term.context,
                    official_definition=term.entry.definition if term.entry else None,
                    model_definition=comparison.model_definition if comparison else None,
                    score=comparison.score if comparison else None,
                    understood=kb.understood.get(term.term),
                    triplets=len(term.triplet_ids),
                    nearest_term=comparison.nearest_term if comparison else None,
                    nearest_score=comparison.nearest_score if comparison else None,
                )
            )
        return LibraDetails(
            triplets=columns,
            jsd_histogram=histogram,
            local_words=local_words,
            invalid_triplets={t.id: kb.misunderstood(t.id) for t in triplets if not valid[t.id]},
        )
