"""``culturebias split-check``: KoBBQ footnote 14, one model's run on the evaluation split against its run on the full set.

    culturebias split-check SPLIT_RUN FULL_RUN [--out DIR] [--store PATH] [--format text|json]

Composes the use case (``application/kobbq/split_check.py``) with the run archive and
the report writer (``adapters/reports/kobbq_split_report.py``); no logic of its own.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

RUN_HELP = "an output folder, a summary.json, or a run id (with --store)"


def add_parser(sub: argparse._SubParsersAction) -> None:
    check = sub.add_parser(
        "split-check",
        help="KoBBQ footnote 14: compare one model's run on the evaluation split with its run on the full set",
        description=(
            "Compare one model's KoBBQ run on the evaluation split (the bundled test split) with its run on the full "
            "set (culturebias expand kobbq --out all.jsonl, run with data.path=all.jsonl): composition by category "
            "and label type, scores side by side, and the Wilcoxon rank-sum of per-template scores (paper footnote 14)."
        ),
    )
    check.add_argument("split", metavar="SPLIT_RUN", help="the run on the evaluation split: " + RUN_HELP)
    check.add_argument("full", metavar="FULL_RUN", help="the same model's run on the full set: " + RUN_HELP)
    check.add_argument("--out", type=Path, default=None, help="write split_check.json and split_check.md into this folder")
    check.add_argument("--store", default=None, help="result store to look run ids up in")
    check.add_argument("--format", choices=("text", "json"), default="text", help="what to print (default text)")


def split_check_command(args) -> int:
    from culturebias.adapters.reports.kobbq_split_report import split_check_text, write_split_check
    from culturebias.application.kobbq.split_check import kobbq_split_check
    from culturebias.bootstrap.archive import ARCHIVE

    check, written = kobbq_split_check(args.split, args.full, archive=ARCHIVE, writer=write_split_check, out=args.out,
                                       store=args.store)
    if args.format == "json":
        print(json.dumps(check.model_dump(mode="json"), ensure_ascii=False, indent=2))
    else:
        print(split_check_text(check), end="")
    for path in written:
        print(f"written: {path}")
    return 0
