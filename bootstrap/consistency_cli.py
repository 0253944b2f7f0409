"""``culturebias judge-consistency``: McBE's judge–human consistency rate (the paper's Table 13).

    culturebias judge-consistency RUN_A RUN_B --human FILE [--store PATH] [--format text|json] [--out FILE.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from culturebias.domain.mcbe.consistency import Agreement, JudgeConsistency


def add_parser(sub: argparse._SubParsersAction) -> None:
    command = sub.add_parser(
        "judge-consistency",
        help="McBE Table 13: how often the judge's BA scores of two runs' answers pick the answer people picked",
        description="Reads a file of human pairwise winners (JSONL or CSV: item = a BEI both runs answered in BA, "
        "winner = a, b or tie; docs/benchmarks/mcbe.md) and the judge's BA scores of the same answers from the runs' "
        "stores; prints the consistency rate with its 95%% Wilson interval and n, overall and per category. A bad "
        "row (an unknown BEI, a BEI named twice, a winner other than a, b or tie) is an error naming the file, the "
        "row and the field (exit 3), and nothing is written.",
    )
    command.add_argument("run_a", metavar="RUN_A", help="the run whose answers are 'a' (an output folder, a summary.json, or a run id with --store)")
    command.add_argument("run_b", metavar="RUN_B", help="the run whose answers are 'b'")
    command.add_argument("--human", required=True, type=Path, metavar="FILE", help="the human winners: .jsonl or .csv")
    command.add_argument("--store", default=None, help="result store to look run ids up in")
    command.add_argument("--format", choices=("text", "json"), default="text")
    command.add_argument("--out", type=Path, default=None, metavar="FILE", help="also write the result as JSON")


def _line(name: str, found: Agreement) -> str:
    if found.rate is None or found.low is None or found.high is None:
        return f"{name}: no pair both answers of which the judge scored"
    return f"{name}: {found.rate:.1%} ({found.agree} of {found.n}; 95% Wilson {found.low:.1%}–{found.high:.1%})"


def text(result: JudgeConsistency) -> str:
    lines = [
        f"judge–human consistency (McBE Table 13), a = {result.model_a or result.run_a}, b = {result.model_b or result.run_b}",
        _line("overall", result),
        *(_line(f"  {name}", found) for name, found in result.categories.items()),
        f"human ties: {result.human_ties}; judge ties (equal BA scores): {result.judge_ties}",
    ]
    if result.unscored:
        lines.append(f"left out, an answer the judge did not score: {', '.join(result.unscored)}")
    return "\n".join(lines)


def consistency_command(args) -> int:
    from culturebias.bootstrap.api import judge_consistency

    result = judge_consistency(args.run_a, args.run_b, args.human, store=args.store)
    payload = result.model_dump_json(indent=2)
    print(payload if args.format == "json" else text(result))
    if args.out is not None:
        args.out.write_text(payload + "\n", encoding="utf-8")
        print(f"written: {args.out}")
    return 0
