"""McBE's judge–human consistency rate (Table 13) from a file of human pairwise winners and two stored runs.

Reads the human file through a ``HumanWinnersReader`` and the judge's BA scores from the runs' stored item records
(the result store, as ``culturebias samples`` reads them); writes nothing. Every row of the file must name a BEI
that both runs answered in BA: a row naming another is a ``DataError`` naming the file, the row and the field.
"""

from __future__ import annotations

from pathlib import Path

from culturebias.application.samples import load_run_records
from culturebias.domain.errors import DataError
from culturebias.domain.export_schema import RunRecords
from culturebias.domain.mcbe.consistency import (
    ITEM_FIELD,
    JudgeConsistency,
    JudgedPair,
    bei_of,
    consistency,
    human_winners,
)
from culturebias.ports.human_judgements import HumanWinnersReader
from culturebias.ports.run_archive import RunArchive, RunRef, StoreRef


def _ba_answers(run: RunRecords, where: str) -> dict[str, tuple[float | None, str | None]]:
    """BEI → (the judge's BA score, or None where BA skipped it; the BEI's category) of one McBE run."""
    if run.benchmark != "mcbe":
        raise DataError(f"the judge–human consistency rate reads McBE runs, this one is {run.benchmark!r}", file=where)
    found: dict[str, tuple[float | None, str | None]] = {}
    for record in run.records:
        if record.metadata.get("task") != "ba":
            continue
        category = record.metadata.get("category")
        found[bei_of(record.item_id)] = (record.scores.get("score"), None if category is None else str(category))
    if not found:
        raise DataError("the run holds no BA answer (run it with BA among protocol.tasks)", file=where)
    return found


def judge_consistency(
    run_a: RunRef,
    run_b: RunRef,
    human_file: str | Path,
    *,
    reader: HumanWinnersReader,
    archive: RunArchive,
    store: StoreRef | None = None,
) -> JudgeConsistency:
    """How often the judge's BA scores of run A's and run B's answers to a BEI pick the answer people picked."""
    path = Path(human_file).expanduser()
    winners = human_winners(reader.read(path), str(path))
    runs = [load_run_records(run, store=store, archive=archive) for run in (run_a, run_b)]
    answers = [_ba_answers(run, str(ref)) for run, ref in zip(runs, (run_a, run_b))]
    pairs = []
    for winner in winners:
        for side, found, run in zip("ab", answers, runs):
            if winner.item not in found:
                raise DataError(
                    f"run {side} ({run.run_id}) has no BA answer to BEI {winner.item!r}",
                    file=str(path), row=winner.row, field=ITEM_FIELD,
                )
        (score_a, category), (score_b, _) = answers[0][winner.item], answers[1][winner.item]
        pairs.append(JudgedPair(winner.item, category, winner.winner, score_a, score_b))
    return consistency(pairs).model_copy(
        update={
            "human_file": str(path), "run_a": runs[0].run_id, "run_b": runs[1].run_id,
            "model_a": runs[0].model, "model_b": runs[1].model,
        }
    )
