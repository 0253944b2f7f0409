"""What the per-item audit trail costs a run: a KoBBQ run of a scripted model, with and without item records.

Speed script, not a test: prints both times and their ratio, measured in the same process on the same
questions (bundled KoBBQ test split, every prompt and option order, ~34k questions). Nothing here asserts a time.

    .venv/bin/python perf/audit_overhead.py [--repeats 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import culturebias.application.bbq.answering as answering
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.testing.kobbq_runs import kobbq_run

OPTIONS = {"prompts": "1,2,3,4,5", "permutations": "0,1,2"}


def timed(folder: Path, name: str) -> tuple[float, int]:
    store = SQLiteResultStore(folder / f"{name}.sqlite")
    try:
        start = time.perf_counter()
        result = kobbq_run("biased", options=OPTIONS, store=store)
        return time.perf_counter() - start, result.summary.counts.answers
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    kobbq_run("biased", options={"limit": 1})  # imports and the bundled data, outside the timings
    recording = answering.record_generated
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i in range(args.repeats):
            answering.record_generated = lambda *a, **k: None
            try:
                without, n = timed(folder, f"without-{i}")
            finally:
                answering.record_generated = recording
            with_records, _ = timed(folder, f"with-{i}")
            size = (folder / f"with-{i}.sqlite").stat().st_size - (folder / f"without-{i}.sqlite").stat().st_size
            print(
                f"{n} questions: without records {without:.2f} s, with {with_records:.2f} s "
                f"(x{with_records / without:.2f}; {1e6 * (with_records - without) / n:.0f} µs and "
                f"{size / n:.0f} bytes of store per item)"
            )


if __name__ == "__main__":
    main()
