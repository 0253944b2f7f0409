"""``culturebias build libra``: LIBRA triplets built from a local corpus into a folder ``culturebias run libra`` reads.

The files are read and the components opened through ports that bootstrap wires
(``bootstrap/libra_build_wiring.py``); bad input is refused before anything is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

from culturebias.application.libra_build.service import BuildReport, Components, LibraBuild, import_review
from culturebias.application.out_folder import FolderLock
from culturebias.domain.errors import DataError
from culturebias.domain.libra_build.topics import TopicClusters
from culturebias.ports.libra_build_steps import BuildInputs, ReviewSheets

# Writes the build's report.md (and its figure) into the folder; returns the files written.
ReportWriter = Callable[[Path, BuildReport, TopicClusters | None], list[Path]]


def build_libra(
    corpus: str | Path,
    seeds: str | Path,
    out: str | Path,
    *,
    steps: Sequence[str],
    resume: bool,
    text_field: str,
    seed: int,
    glossary: str | None,
    inputs: BuildInputs,
    components: Callable[[], Components],
    write_report: ReportWriter,
) -> BuildReport:
    """Build LIBRA triplets from a local corpus into ``out`` (a valid ``data.path`` for ``culturebias run libra``)."""
    groups, antonyms = inputs.read_seeds(seeds)  # bad input is refused before anything is written
    documents = inputs.read_corpus(corpus, text_field=text_field)
    definitions = inputs.read_glossary(glossary) if glossary is not None else {}
    parts = components()
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    with FolderLock(folder):
        build = LibraBuild(folder, parts, seed=seed)
        try:
            report = build.build(documents, groups, antonyms, steps=list(steps), resume=resume, glossary=definitions)
        except DataError as error:  # groups that cannot be paired: name the seeds file they came from
            if error.file is not None or error.field is None or "counterpart" not in error.field:
                raise
            raise DataError(error.reason, file=str(seeds), field=error.field) from None
        stored = folder / "steps" / "cluster.json"
        clusters = TopicClusters.model_validate(json.loads(stored.read_text("utf-8"))["result"]) if stored.exists() else None
        write_report(folder, report, clusters)
    return report


def import_libra_review(out: str | Path, sheet: str | Path, sheets: ReviewSheets) -> dict[str, int]:
    """Apply an edited review sheet (CSV or XLSX) to ``out``'s triplets.jsonl, every row validated first."""
    folder = Path(out)
    with FolderLock(folder):
        return import_review(folder, Path(sheet), sheets)
