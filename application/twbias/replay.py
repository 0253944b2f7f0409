"""TWBias score replay: PPL matrices from stored per-sentence perplexities (the authors' result files).

The stored values are scored exactly like computed ones: the same rows
(sentences with a replaceable origin term), the same outlier rule, test and
effect size (``domain/twbias/evaluation.py``).
"""

from __future__ import annotations

import numpy as np

from culturebias.application.twbias.plan import SpecificationPlan
from culturebias.domain.errors import ReplayMissingError
from culturebias.ports.stored_perplexities import StoredPerplexities

REPLAYED_BOUNDARY = "none: perplexities replayed from stored result files"
REPLAYED_NOTE = (
    "Perplexities were replayed from stored result files (model.backend=replay with a folder), not computed: "
    "each sentence's replace PPL is the one replaced sentence the files hold (the authors' code chose it), "
    "not the mean over all replaced sentences of PROTOCOLS §1.3; the outlier rule, test and effect size are this run's."
)


def stored_matrices(
    stored: StoredPerplexities, spec_plan: SpecificationPlan, prompt_types: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """origin and replace PPL, both (rows, prompt types), in the plan's row order."""
    spec = spec_plan.spec
    origin = np.empty((len(spec_plan.rows), len(prompt_types)), dtype=float)
    replace = np.empty_like(origin)
    for j, prompt_type in enumerate(prompt_types):
        file, values = stored.perplexities(spec.origin, spec.reference, prompt_type)
        for i, sentence in enumerate(spec_plan.rows):
            found = values.get(sentence.sentence_id)
            if found is None:
                raise ReplayMissingError(
                    f"no stored perplexity for sentence {sentence.sentence_id} ({sentence.file} row {sentence.row}), "
                    f"prompt type {prompt_type}",
                    file=file,
                )
            origin[i, j], replace[i, j] = found
    return origin, replace
