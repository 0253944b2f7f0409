"""``culturebias cbbq``: CBBQ's own commands, no model loaded.

    culturebias cbbq counts [--set data.path=DIR] [--format text|json]
    culturebias cbbq review-export RUN --out FILE.csv|FILE.jsonl [--store PATH]
    culturebias cbbq review-import RUN FILE.csv|FILE.jsonl [--out SHARES.json] [--verdicts a,b,c] [--store PATH]

The logic is in ``application/cbbq/counts.py`` and ``application/cbbq/review.py``; this module composes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from culturebias.domain.cbbq.explanations import VERDICTS

RUN_HELP = "an output folder, a summary.json, or a run id (with --store)"


def add_parser(sub: Any, config_options: Any) -> None:  # Any: argparse's subparsers and the shared option adder
    cbbq = sub.add_parser("cbbq", help="CBBQ's data counts against the paper's Table 4, and the review of explanations")
    kinds = cbbq.add_subparsers(dest="cbbq_command", required=True)
    counts = kinds.add_parser("counts", help="each category's instances in the data against the paper's Table 4")
    counts.add_argument("--format", choices=("text", "json"), default="text")
    config_options(counts)
    export = kinds.add_parser("review-export", help="write a Q+Explain run's answers and explanations for review")
    export.add_argument("run", metavar="RUN", help=RUN_HELP)
    export.add_argument("--out", required=True, type=Path, help="the review file: .csv or .jsonl")
    export.add_argument("--store", default=None, help="result store to look a run id up in")
    imported = kinds.add_parser("review-import", help="read the reviewers' verdicts back and print each verdict's share")
    imported.add_argument("run", metavar="RUN", help=RUN_HELP)
    imported.add_argument("review", type=Path, metavar="FILE", help="the filled review file (.csv or .jsonl)")
    imported.add_argument("--out", type=Path, default=None, help="also write the shares as JSON")
    imported.add_argument("--verdicts", default=",".join(VERDICTS), help=f"the verdict vocabulary (default {','.join(VERDICTS)})")
    imported.add_argument("--store", default=None, help="result store to look a run id up in")


def cbbq_command(args: argparse.Namespace) -> int:
    from culturebias.adapters.cbbq.review_files import ReviewFileIO
    from culturebias.application.cbbq import review
    from culturebias.bootstrap.api import samples

    if args.cbbq_command == "counts":
        return _counts(args)
    records = samples(args.run, store=args.store)
    if args.cbbq_command == "review-export":
        written = review.export_review(records, args.out, ReviewFileIO())
        print(f"{written} explained answer(s) written to {args.out} (fill the verdict column: {', '.join(VERDICTS)})")
        return 0
    verdicts = tuple(v.strip() for v in args.verdicts.split(",") if v.strip())
    shares = review.import_review(records, args.review, ReviewFileIO(), out=args.out, verdicts=verdicts)
    print("\n".join(review.shares_lines(shares)))
    return 0


def _counts(args: argparse.Namespace) -> int:
    from culturebias.application.cbbq.counts import data_counts
    from culturebias.bootstrap.registry import registry
    from culturebias.bootstrap.settings import load_settings
    from culturebias.domain.cbbq.table4 import table4_lines

    settings = load_settings(args.config, args.assignments)
    rows = data_counts(registry().benchmark("cbbq").source_class()(settings.data.path))
    if args.format == "json":
        print(json.dumps([r.model_dump(mode="json") for r in rows], ensure_ascii=False, indent=2))
    else:
        print("\n".join(table4_lines(rows)))
    return 0
