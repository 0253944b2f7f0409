"""TWBias score replay: the authors' per-sentence perplexity CSVs of one model.

    --set model.backend=replay --set model.path=DIR

``DIR`` is one model's folder as the authors' code wrote it
(``data/gender/result_wo_outliers/<model>/``): a subfolder per specification,
``<Origin>_<reference code>`` (``Female_T1`` = the female sentences with female
terms replaced by male ones, ``Male_T2`` the reverse), holding one
``*_output_<k>.csv`` per prompt type with columns ``Sentence ID``,
``origin_ppl`` and ``replace_ppl`` (the replaced sentence their code chose).
The authors number prompt types 0 = no template, 1 = empty user message,
2–11 = user prompts 1–10 (PROTOCOLS §1.6). Despite the folder's name the files
hold every sentence: the service applies the outlier rule of §1.4 as it does to
perplexities it computed.

The backend only offers ``StoredPerplexities``: its scorer answers no
log-likelihood request, and it has no templater, generator or pseudo-scorer.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Mapping, Sequence

from culturebias.adapters.datasets.csv_table import read_table
from culturebias.domain.errors import CapabilityError, DataError, MissingDataError
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.requests import LoglikelihoodRequest, LoglikelihoodResult
from culturebias.domain.twbias.model import PROMPT_TYPES, TargetGroup
from culturebias.ports.generation import Generator
from culturebias.ports.progress import ProgressTask
from culturebias.ports.scoring import LoglikelihoodScorer, PseudoLoglikelihoodScorer
from culturebias.ports.templating import ChatTemplater

COLUMNS = ("Sentence ID", "origin_ppl", "replace_ppl")
# Our prompt type → the authors' file index k.
AUTHORS_INDEX: dict[str, int] = {ptype: k for k, ptype in enumerate(PROMPT_TYPES)}
_WHAT = "a folder of TWBias result CSVs answers only TWBias, from the perplexities it holds"


def is_result_folder(path: Path) -> bool:
    """Whether ``path`` looks like one model's folder of TWBias result CSVs."""
    return path.is_dir() and any(path.glob("*_T*/*_output_*.csv"))


class TWBiasResultFolder:
    """The ``StoredPerplexities`` of one model's folder; also its (refusing) scorer port."""

    def __init__(self, root: Path):
        self.root = root
        files = sorted(root.glob("*_T*/*_output_*.csv"))
        digest = hashlib.sha256()
        for file in files:
            digest.update(str(file.relative_to(root)).encode())
            digest.update(file.read_bytes())
        self._identity = ModelIdentity(
            backend="replay",
            model=root.name,
            revision=digest.hexdigest()[:16],
            kind="replay",
            description=f"TWBias perplexities replayed from {root} ({len(files)} files)",
        )
        self._cache: dict[Path, tuple[str, dict[str, tuple[float, float]]]] = {}

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    provenance = None  # the authors computed these; there are no numeric settings of ours to record

    def perplexities(
        self, origin: TargetGroup, reference: TargetGroup, prompt_type: str
    ) -> tuple[str, Mapping[str, tuple[float, float]]]:
        folder = self.root / f"{origin.label}_{reference.code}"
        if not folder.is_dir():
            raise MissingDataError(
                f"the TWBias result folder {self.root} has no {folder.name}/ for the specification "
                f"{origin.key} → {reference.key}"
            )
        k = AUTHORS_INDEX[prompt_type]
        found = sorted(folder.glob(f"*_output_{k}.csv"))
        if len(found) != 1:
            raise MissingDataError(
                f"{folder} should hold exactly one *_output_{k}.csv (prompt type {prompt_type}); found {len(found)}"
            )
        return self._read(found[0])

    def _read(self, path: Path) -> tuple[str, dict[str, tuple[float, float]]]:
        if path not in self._cache:
            table = read_table(path)
            table.require_rows("perplexities")
            missing = [c for c in COLUMNS if c not in table.header]
            if missing:
                raise DataError(f"missing column(s) {', '.join(missing)}", file=table.file, row=1, field=missing[0])
            values: dict[str, tuple[float, float]] = {}
            for line, record in table.dicts():
                sentence_id = record["Sentence ID"].strip()
                if sentence_id in values:
                    raise DataError(f"sentence {sentence_id} appears twice", file=table.file, row=line, field="Sentence ID")
                values[sentence_id] = (_ppl(record, "origin_ppl", table.file, line), _ppl(record, "replace_ppl", table.file, line))
            self._cache[path] = (table.file, values)
        return self._cache[path]

    # -- the scorer port: refused ------------------------------------------------------
    def check_loglikelihood(self) -> None:
        raise CapabilityError("replay", "log-likelihood scoring", _WHAT)

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], progress: ProgressTask | None = None) -> list[LoglikelihoodResult]:
        raise CapabilityError("replay", "log-likelihood scoring", _WHAT)


def _ppl(record: dict[str, str], column: str, file: str, line: int) -> float:
    try:
        value = float(record[column])
    except ValueError:
        raise DataError(f"{column} must be a number, got {record[column]!r}", file=file, row=line, field=column) from None
    if math.isnan(value):
        raise DataError(f"{column} is not a number (NaN)", file=file, row=line, field=column)
    return value


class TWBiasReplayBackend:
    def __init__(self, root: Path):
        self.root = root
        self._folder: TWBiasResultFolder | None = None

    def scorer(self) -> LoglikelihoodScorer:
        if self._folder is None:
            self._folder = TWBiasResultFolder(self.root)
        return self._folder  # type: ignore[return-value]  # StoredPerplexities in the scorer slot, where TWBias preflight looks (no provenance)

    def generator(self) -> Generator:
        raise CapabilityError("replay", "generation", _WHAT)

    def templater(self) -> ChatTemplater:
        raise CapabilityError("replay", "a chat template", _WHAT)

    def pseudo_scorer(self) -> PseudoLoglikelihoodScorer:
        raise CapabilityError("replay", "pseudo-log-likelihood scoring", _WHAT)
