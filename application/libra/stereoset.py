"""The paper's iCAT column: StereoSet's items scored with the run's L (PROTOCOLS §4).

Every sentence of every item goes to the model in one batched call, scored the
way the run scores its triplets (``likelihood.py``): the modified span is the
filled-in BLANK (intrasentence) or the whole sentence after the context
(intersentence). An item with a sentence that got no valid score is left out.
"""

from __future__ import annotations

from culturebias.application.context import RunContext
from culturebias.application.libra.likelihood import SpanSentence, score_sentences
from culturebias.domain.libra.stereoset import StereoSetLikelihood, stereoset_scores
from culturebias.domain.libra.stereoset_summary import StereoSetBlock
from culturebias.domain.libra.summary import LikelihoodKind
from culturebias.domain.libra.triplets import LibraDataset


def score_stereoset(
    ctx: RunContext, kind: LikelihoodKind, dataset: LibraDataset, limit: int | None
) -> tuple[StereoSetBlock | None, list[str]]:
    """StereoSet's scores and the notes about them; (None, []) when the data holds no StereoSet file."""
    if dataset.stereoset is None:
        return None, []
    items = list(dataset.stereoset.items)[:limit]
    sentences = [SpanSentence(s.text, s.span_start, s.span_end) for item in items for s in item.sentences]
    values, lost = score_sentences(ctx, kind, sentences, "LIBRA: StereoSet")
    kept_at = [i for i in range(len(items)) if not any(lost[3 * i : 3 * i + 3])]
    kept = [items[i] for i in kept_at]
    scores = {items[i].id: StereoSetLikelihood(*values[3 * i : 3 * i + 3]) for i in kept_at}
    block = stereoset_scores(kept, scores, dataset.stereoset.file)
    notes = [
        f"StereoSet ({dataset.stereoset.file}, {len(items)} items): lms, ss and iCAT as StereoSet's evaluation "
        "computes them (per target term, then averaged); this is the paper's iCAT column, the local one is icat_local"
    ]
    if limit is not None and limit < len(dataset.stereoset.items):
        notes.append(f"Only the first {limit} StereoSet items were evaluated.")
    if len(kept) < len(items):
        notes.append(f"{len(items) - len(kept)} StereoSet item(s) got no valid score and are left out of its scores")
    return block, notes
