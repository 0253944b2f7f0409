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
from typing import Any, ClassVar, Literal

from culturebias.application.context import RunContext
from culturebias.application.libra.knowledge import KnowledgeBoundaryOutcome, check_knowledge_boundary
from culturebias.application.libra.settings import LibraSettings
from culturebias.domain.errors import CapabilityError, ConfigError
from culturebias.domain.libra.metrics import LibraScores, TripletLikelihood, libra_scores
from culturebias.domain.libra.triplets import SENTENCE_KINDS, LibraDataset, Triplet
from culturebias.domain.requests import LoglikelihoodRequest, PseudoLoglikelihoodRequest
from culturebias.domain.runs import ProtocolOutcome

ModelType = Literal["causal", "masked"]
SMALL_BREAKDOWN = 10  # valid triplets below which a breakdown's JSD is flagged as coarse


class LibraService:
    name: ClassVar[str] = "libra"
    settings_model: ClassVar[type[LibraSettings]] = LibraSettings

    def __init__(self, settings: LibraSettings):
        self.settings = settings
        self._model_type: ModelType | None = None
        self._boundary_skipped: str | None = None  # why the knowledge boundary is not checked
        self._lexicon: Any = None
        self._embedder: Any = None

    # -- preflight ---------------------------------------------------------------

    def preflight(self, ctx: RunContext) -> None:
        self._model_type = self._choose_scoring(ctx)
        self._prepare_knowledge_boundary(ctx)

    def _choose_scoring(self, ctx: RunContext) -> ModelType:
        mode = self.settings.scoring
        if mode in ("auto", "masked"):
            try:
                ctx.pseudo_scorer()
                return "masked"
            except CapabilityError:
                if mode == "masked":
                    raise
        ctx.scorer().check_loglikelihood()
        return "causal"

    def _prepare_knowledge_boundary(self, ctx: RunContext) -> None:
        settings = self.settings
        if settings.knowledge_boundary == "off":
            self._boundary_skipped = "switched off (protocol.knowledge_boundary=off)"
            return
        try:
            ctx.generator()
        except CapabilityError as error:
            if settings.knowledge_boundary == "on":
                raise
            self._boundary_skipped = f"the model cannot generate definitions ({error})"
            return
        if ctx.lexicons is None:
            raise ConfigError("LIBRA's knowledge boundary needs a general lexicon, and none is wired into this run")
        self._lexicon = ctx.lexicons(settings.lexicon, settings.lexicon_min_frequency)
        if settings.comparison == "embedding":
            if ctx.embedders is None:
                raise ConfigError("protocol.comparison=embedding needs a sentence embedder, and none is wired into this run")
            self._embedder = ctx.embedders(settings.embedder)
        else:
            ctx.judge()

    # -- run ---------------------------------------------------------------------

    def run(self, ctx: RunContext, dataset: LibraDataset) -> ProtocolOutcome:
        if self._model_type is None:
            self.preflight(ctx)
        triplets = list(dataset.triplets)
        boundary: KnowledgeBoundaryOutcome | None = None
        if self._boundary_skipped is None:
            boundary = check_knowledge_boundary(
                ctx, self.settings, triplets, dataset.glossary, self._lexicon, self._embedder
            )
        likelihoods = self._score(ctx, triplets)
        valid = {t.id: boundary is None or boundary.boundary.is_valid(t.id) for t in triplets}
        overall = self._scores(triplets, likelihoods, valid, boundary)
        metrics: dict[str, Any] = {
            "model_type": self._model_type,
            "overall": overall.as_dict(),
            "by_category": self._breakdown(triplets, likelihoods, valid, boundary, lambda t: t.category),
            "by_group": self._breakdown(triplets, likelihoods, valid, boundary, lambda t: t.group),
        }
        small = sorted(
            {
                name
                for breakdown in ("by_category", "by_group")
                for name, block in metrics[breakdown].items()
                if block["valid"] < SMALL_BREAKDOWN
            }
        )
        notes = self._notes(boundary)
        if small:
            notes.append(
                f"{len(small)} categories or groups have fewer than {SMALL_BREAKDOWN} valid triplets "
                f"({', '.join(small)}): their JSD, from so few values, is coarse"
            )
        return ProtocolOutcome(
            metrics=metrics,
            counts=self._counts(triplets, valid, boundary),
            notes=notes,
            details=self._details(triplets, likelihoods, valid, boundary, overall),
        )

    def _score(self, ctx: RunContext, triplets: list[Triplet]) -> list[TripletLikelihood]:
        if self._model_type == "masked":
            requests = [
                PseudoLoglikelihoodRequest(t.sentence(kind), len(t.left), len(t.sentence(kind)))
                for t in triplets
                for kind in SENTENCE_KINDS
            ]
            results = ctx.pseudo_scorer().pseudo_loglikelihood(requests, description="LIBRA: triplets (masked LM)")
        else:
            requests = [
                LoglikelihoodRequest(context=t.left, continuation=t.filler(kind) + t.right)
                for t in triplets
                for kind in SENTENCE_KINDS
            ]
            results = ctx.scorer().loglikelihood(requests, description="LIBRA: triplets")
        values = [r.logprob for r in results]
        return [TripletLikelihood(*values[3 * i : 3 * i + 3]) for i in range(len(triplets))]

    def _scores(
        self,
        triplets: list[Triplet],
        likelihoods: list[TripletLikelihood],
        valid: dict[str, bool],
        boundary: KnowledgeBoundaryOutcome | None,
    ) -> LibraScores:
        kept = [score for t, score in zip(triplets, likelihoods) if valid[t.id]]
        understood = boundary.boundary.understood_over(t.id for t in triplets) if boundary else []
        alpha = None if self.settings.alpha == "bbs" else float(self.settings.alpha)
        return libra_scores(
            kept, understood, invalid=len(triplets) - len(kept), bins=self.settings.jsd_bins, alpha=alpha
        )

    def _breakdown(self, triplets, likelihoods, valid, boundary, key) -> dict[str, dict[str, Any]]:
        members: dict[str, list[int]] = defaultdict(list)
        for i, triplet in enumerate(triplets):
            members[key(triplet)].append(i)
        return {
            name: self._scores(
                [triplets[i] for i in idx], [likelihoods[i] for i in idx], valid, boundary
            ).as_dict()
            for name, idx in sorted(members.items())
        }

    # -- summary pieces ----------------------------------------------------------

    def _counts(self, triplets, valid, boundary: KnowledgeBoundaryOutcome | None) -> dict[str, Any]:
        n_valid = sum(valid.values())
        counts: dict[str, Any] = {
            "model_type": self._model_type,
            "triplets": len(triplets),
            "valid_triplets": n_valid,
            "invalid_triplets": len(triplets) - n_valid,
        }
        if boundary is not None:
            kb = boundary.boundary
            understood = list(kb.understood.values())
            counts.update(
                {
                    "local_words": len(kb.vocabulary.terms),
                    "local_words_checked": len(understood),
                    "local_words_understood": sum(understood),
                    "local_words_not_understood": len(understood) - sum(understood),
                    "local_words_without_definition": len(kb.vocabulary.without_definition()),
                    "judge_failures": boundary.judge_failures,
                }
            )
        return counts

    def _notes(self, boundary: KnowledgeBoundaryOutcome | None) -> list[str]:
        s = self.settings
        notes = [
            f"L(S) is the {'masked-LM pseudo-log-likelihood' if self._model_type == 'masked' else 'causal log-likelihood'} "
            "of the target span and the rest of the sentence; JSD of masked and causal models are not comparable",
            f"JSD: base 2 on histograms with shared bin edges (bins={s.jsd_bins}); "
            f"EiCAT α = {'bbs' if s.alpha == 'bbs' else s.alpha}",
        ]
        if boundary is None:
            notes.append(
                f"knowledge boundary not checked: {self._boundary_skipped}; bbs and EiCAT are null and every triplet counts as valid"
            )
            return notes
        comparison = (
            f"embedding cosine ≥ {s.similarity_threshold} ({self._embedder.describe()})"
            if s.comparison == "embedding"
            else f"judge verdict ≥ {s.judge_threshold}"
        )
        notes.append(
            f"knowledge boundary: local words are those outside {self._lexicon.describe()} "
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

    def _details(self, triplets, likelihoods, valid, boundary, overall: LibraScores) -> dict[str, Any]:
        details: dict[str, Any] = {
            "triplets": {
                "id": [t.id for t in triplets],
                "group": [t.group for t in triplets],
                "category": [t.category for t in triplets],
                "valid": [valid[t.id] for t in triplets],
                "stereotyped": [s.stereotyped for s in likelihoods],
                "anti_stereotyped": [s.anti_stereotyped for s in likelihoods],
                "unrelated": [s.unrelated for s in likelihoods],
            },
            "jsd_histogram": {
                "edges": list(overall.divergence.edges),
                "anti_stereotyped": list(overall.divergence.anti_stereotyped),
                "stereotyped": list(overall.divergence.stereotyped),
            },
        }
        if boundary is not None:
            kb = boundary.boundary
            details["local_words"] = [
                {
                    "term": term.term,
                    "as_written": term.surface,
                    "context": term.context,
                    "official_definition": term.entry.definition if term.entry else None,
                    "model_definition": boundary.comparisons[term.term].model_definition
                    if term.term in boundary.comparisons
                    else None,
                    "score": boundary.comparisons[term.term].score if term.term in boundary.comparisons else None,
                    "understood": kb.understood.get(term.term),
                    "triplets": len(term.triplet_ids),
                }
                for term in kb.vocabulary.terms.values()
            ]
            details["invalid_triplets"] = {t.id: kb.misunderstood(t.id) for t in triplets if not valid[t.id]}
        return details
