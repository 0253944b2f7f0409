"""``culturebias samples`` and ``culturebias export``: a run's per-item audit trail on the command line.

    culturebias samples RUN [--store PATH] [--filter FIELD=VALUE ...] [--limit N] [--format table|jsonl]
    culturebias export RUN [RUN ...] --format csv|parquet|jsonl --out FILE [--store PATH] [--filter FIELD=VALUE ...]
    culturebias export RUN --format mlflow [--tracking-uri URI] | model-card|every-eval-ever --out FILE [--verdict FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from culturebias.domain.audit import ItemRecord, parse_filters

RUN_HELP = "an output folder, a summary.json, or a run id (with --store)"
FILTER_HELP = (
    "keep the items whose FIELD equals VALUE (repeatable, all must hold): outcome, parsed, correct (true/false), "
    "item_id, meta.<field> (or the bare metadata name, e.g. category=age), score.<name>"
)
TABLE_WIDTH = 60


def add_parsers(sub: argparse._SubParsersAction) -> None:
    samples = sub.add_parser("samples", help="show a run's per-item records: prompt, answer, parsed choice, outcome, metadata")
    samples.add_argument("run", metavar="RUN", help=RUN_HELP)
    samples.add_argument("--store", default=None, help="result store to look a run id up in (.sqlite file, JSONL folder, run folder); "
                         "overrides the store a run folder's summary.json names")
    samples.add_argument("--filter", dest="filters", action="append", default=[], metavar="FIELD=VALUE", help=FILTER_HELP)
    samples.add_argument("--limit", type=int, default=None, metavar="N", help="show at most N items")
    samples.add_argument("--format", default="table", help="table (default) or jsonl (one full record per line)")

    export = sub.add_parser(
        "export", help="write a run's per-item records as a table (csv, parquet, jsonl), or the run for MLflow, "
        "a Hugging Face model card or Every Eval Ever"
    )
    export.add_argument(
        "runs", metavar="RUN", nargs="+", help=RUN_HELP + "; csv, parquet and jsonl write several runs into one table"
    )
    export.add_argument(
        "--format", required=True, help="csv, parquet (needs the export extra) or jsonl; mlflow, model-card "
        "(both need the governance extra) or every-eval-ever"
    )
    export.add_argument("--out", type=Path, default=None, help="the file to write (every format but mlflow)")
    export.add_argument("--tracking-uri", default=None, help="mlflow: the tracking store (default: MLflow's own setting)")
    export.add_argument("--experiment", default="culturebias", help="mlflow: the experiment to log into")
    export.add_argument("--verdict", type=Path, default=None, help="model-card: a verdict of culturebias check --json")
    export.add_argument("--store", default=None, help="result store to look a run id up in; "
                        "overrides the store a run folder's summary.json names")
    export.add_argument("--filter", dest="filters", action="append", default=[], metavar="FIELD=VALUE", help=FILTER_HELP)
    export.add_argument("--limit", type=int, default=None, metavar="N", help="export at most N items of each run")


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    text = text.replace("\r", " ").replace("\n", "⏎").replace("\t", " ")
    return text if len(text) <= TABLE_WIDTH else text[: TABLE_WIDTH - 1] + "…"


def table(records: list[ItemRecord]) -> str:
    """One line per item: id, outcome, parsed choice, correct, answer (or the first scored text), then its metadata."""
    lines = ["item_id\toutcome\tparsed\tcorrect\tanswer\tmetadata"]
    for r in records:
        answer = r.answer if r.answer is not None else (r.texts[0] if r.texts else None)
        meta = " ".join(f"{k}={_cell(v)}" for k, v in r.metadata.items() if v is not None)
        correct = "" if r.correct is None else str(r.correct).lower()
        lines.append("\t".join([_cell(r.item_id), _cell(r.outcome), _cell(r.parsed), correct, _cell(answer), meta]))
    return "\n".join(lines)


def samples_command(args) -> int:
    from culturebias.bootstrap.api import samples
    from culturebias.domain.errors import ConfigError

    if args.format not in ("table", "jsonl"):
        raise ConfigError(f"unknown --format {args.format!r} for samples (choose one of: table, jsonl)")
    records = samples(args.run, parse_filters(args.filters), args.limit, store=args.store)
    if args.format == "jsonl":
        for record in records:
            print(json.dumps(record.model_dump(mode="json"), ensure_ascii=False))
    else:
        print(table(records))
    print(f"{len(records)} item(s)", file=sys.stderr)
    return 0


def export_command(args) -> int:
    from culturebias.bootstrap.api import export_samples
    from culturebias.bootstrap.governance import GOVERNANCE_FORMATS, governance_command
    from culturebias.adapters.files.table_files import EXPORT_FORMATS
    from culturebias.domain.errors import ConfigError

    if args.format in GOVERNANCE_FORMATS:
        if len(args.runs) != 1:
            raise ConfigError(f"--format {args.format} exports one run, got {len(args.runs)}")
        args.run = args.runs[0]
        return governance_command(args)
    if args.format not in EXPORT_FORMATS:
        known = ", ".join([*EXPORT_FORMATS, *GOVERNANCE_FORMATS])
        raise ConfigError(f"unknown export format {args.format!r} (choose one of: {known})")
    if args.out is None:
        raise ConfigError(f"--format {args.format} writes a file: give --out FILE")
    rows = export_samples(args.runs, args.out, args.format, where=parse_filters(args.filters), limit=args.limit, store=args.store)
    print(f"{rows} item(s) of {len(args.runs)} run(s) written to {args.out}")
    return 0
