"""What TWBias asks the scorer: one request per (prompt type, sentence variant), deduplicated.

Originals repeat across specifications (an ethnicity origin meets four reference
groups), so every distinct (context, sentence) pair is requested once; each
specification keeps index arrays into the single result list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from culturebias.domain.requests import LoglikelihoodRequest
from culturebias.domain.twbias.model import BiasSentence
from culturebias.domain.twbias.specification import BiasSpecification, replace_terms

ReplaceAggregate = Literal["mean", "min"]


class RequestIndex:
    def __init__(self) -> None:
        self._ids: dict[LoglikelihoodRequest, int] = {}
        self.requests: list[LoglikelihoodRequest] = []

    def add(self, context: str, continuation: str) -> int:
        request = LoglikelihoodRequest(context, continuation)
        found = self._ids.get(request)
        if found is None:
            found = self._ids[request] = len(self.requests)
            self.requests.append(request)
        return found


@dataclass
class SpecificationPlan:
    spec: BiasSpecification
    rows: list[BiasSentence]  # sentences with at least one replaceable origin term
    without_origin_term: list[BiasSentence]
    origin_ids: np.ndarray  # (rows, prompt types): request index of the original sentence
    replace_ids: np.ndarray  # (all replaced sentences, prompt types)
    replace_starts: np.ndarray  # row i's replaced sentences are replace_ids[starts[i]:starts[i+1]]

    def ppl_matrices(self, ppl: np.ndarray, aggregate: ReplaceAggregate = "mean") -> tuple[np.ndarray, np.ndarray]:
        """origin PPL and replace PPL over the row's replaced sentences, both (rows, types).

        ``mean`` (PROTOCOLS §1.3, the paper); ``min`` the lowest, as one released
        ``cal_bias.py`` picks it (``np.argmin``). A NaN among a row's replaced
        sentences makes its replace PPL NaN either way (the row counts as invalid).
        """
        origin = ppl[self.origin_ids]
        if not self.rows:
            return origin, origin.copy()
        replaced = ppl[self.replace_ids]
        if aggregate == "mean":
            counts = np.diff(np.append(self.replace_starts, len(self.replace_ids)))
            replace = np.add.reduceat(replaced, self.replace_starts, axis=0) / counts[:, None]
        elif aggregate == "min":
            replace = np.minimum.reduceat(replaced, self.replace_starts, axis=0)  # NaN propagates, as in the mean
        else:
            raise ValueError(f"unknown replace aggregate {aggregate!r}")
        return origin, replace


def plan_specification(
    spec: BiasSpecification, sentences: list[BiasSentence], contexts: list[str], index: RequestIndex
) -> SpecificationPlan:
    rows: list[BiasSentence] = []
    without: list[BiasSentence] = []
    origin_ids: list[list[int]] = []
    replace_ids: list[list[int]] = []
    starts: list[int] = []
    for sentence in sentences:
        replaced = replace_terms(sentence.text, spec.term_pairs)
        if not replaced:
            without.append(sentence)
            continue
        rows.append(sentence)
        origin_ids.append([index.add(c, sentence.text) for c in contexts])
        starts.append(len(replace_ids))
        replace_ids.extend([index.add(c, text) for c in contexts] for text in replaced)
    width = len(contexts)
    return SpecificationPlan(
        spec=spec,
        rows=rows,
        without_origin_term=without,
        origin_ids=np.asarray(origin_ids, dtype=np.int64).reshape(len(rows), width),
        replace_ids=np.asarray(replace_ids, dtype=np.int64).reshape(len(replace_ids), width),
        replace_starts=np.asarray(starts, dtype=np.int64),
    )
