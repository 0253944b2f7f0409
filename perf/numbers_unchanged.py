"""Numbers unchanged: record or check the reference runs of ``culturebias.testing.reference_runs``.

    python perf/numbers_unchanged.py record [NAME ...]   # writes tests/fixtures/reference_summaries/<name>.json
    python perf/numbers_unchanged.py check [NAME ...]    # reruns, compares; exit 1 on any difference

``check`` compares strings, integers, booleans and nulls exactly, and floats to
the run's tolerance: 1e-12 (absolute or relative) for runs on stored or replayed
values, the model dtype's tolerance (float32: relative 1.5e-5, absolute 1.5e-5 x the
run's scale) for runs whose numbers a model's kernels computed, which differ from
CPU to CPU (docs/notes/tests.md); it prints each difference with its JSON path. Runs that need ``../shared/data`` (or torch) are skipped, with a line saying
so, when it is absent. Not a speed script: it prints each run's seconds only to show the set
stays small.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time


def main(argv: list[str] | None = None) -> int:
    import structlog

    from culturebias.testing import reference_runs as ref

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))  # the runs' info lines

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["record", "check"])
    parser.add_argument("names", nargs="*", help=f"runs (default all): {', '.join(ref.RUNS)}")
    args = parser.parse_args(argv)
    unknown = [name for name in args.names if name not in ref.RUNS]
    if unknown:
        parser.error(f"unknown run(s) {unknown}; choose from {', '.join(ref.RUNS)}")
    failed = False
    started = time.perf_counter()
    for name in args.names or list(ref.RUNS):
        run = ref.RUNS[name]
        reason = ref.skip_reason(run)
        if reason:
            print(f"{name}: skipped ({reason})")
            continue
        began = time.perf_counter()
        content = run.produce()
        seconds = time.perf_counter() - began
        path = ref.stored_path(name)
        if args.command == "record":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(ref.to_text(content), encoding="utf-8")
            print(f"{name}: recorded {path} ({seconds:.1f} s)")
            continue
        if not path.is_file():
            print(f"{name}: no reference at {path} (run record first)")
            failed = True
            continue
        found = list(ref.differences(ref.read_stored(name), content, tolerance=run.tolerance))
        failed = failed or bool(found)
        verdict = "unchanged" if not found else f"{len(found)} difference(s)"
        print(f"{name}: {verdict} ({run.tolerance}; {seconds:.1f} s)")
        for line in found:
            print(f"  {line}")
    print(f"{time.perf_counter() - started:.1f} s in all")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
