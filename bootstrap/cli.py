"""The ``culturebias`` command line: a thin layer over the Python API (``culturebias.bootstrap.api``).

    culturebias run BENCHMARK[,BENCHMARK...] --out DIR [--limit N | --sample N] [--config FILE] [--set key=value ...] [--preset NAME] [--resume]
    culturebias list [--format text|json]
    culturebias schema BENCHMARK|verdict
    culturebias plan BENCHMARK [--sample N | --limit N] [--no-calibration] [--format text|json] [--set key=value ...]
    culturebias plan BENCHMARK --policy POLICY [--sample N | --limit N] [--format text|json]  (units each criterion needs)
    culturebias expand kobbq|cbbq --out FILE [--set data.path=...]
    culturebias runs [--out DIR | --store PATH] [--format text|json] [--mark-interrupted RUN_ID]
    culturebias compare RUN... --out DIR [--store PATH] [--allow-data-mismatch]
    culturebias sweep FILE.toml [--out DIR] [--resume]
    culturebias samples RUN [--store PATH] [--filter FIELD=VALUE ...] [--limit N] [--format table|jsonl]
    culturebias export RUN --format csv|parquet|jsonl --out FILE [--store PATH] [--filter FIELD=VALUE ...]
    culturebias check POLICY --run DIR [--baseline DIR] [--junit FILE] [--json FILE]  (exit 0 pass, 1 fail, 2 inconclusive, 3 bad input)
    culturebias split-check SPLIT_RUN FULL_RUN [--out DIR] [--store PATH] [--format text|json]  (KoBBQ footnote 14)
    culturebias judge-consistency RUN_A RUN_B --human FILE [--store PATH] [--format text|json] [--out FILE]  (McBE Table 13)

Exit codes: 0 success; 1 another culturebias error; 2 configuration (also bad
command-line usage); 3 input data; 4 a backend lacks a needed capability;
5 a model could not be loaded; 6 ``--resume`` found a run with another
configuration or data; 7 a plugin failed to load; 8 another process is running
in the --out folder, or writing the run; 130 interrupted by Ctrl-C (SIGINT), 143 stopped by SIGTERM
(what was computed is stored and the run is marked interrupted: continue it
with --resume). A deliberate error prints one line, never a traceback; so does
a file the system refuses to read or write (exit 1). ``export`` to a governance tool: a tracking store
MLflow refuses (a file store, an unknown scheme, a SQLite file it cannot open) or an extra that is not
installed exits 2, a tracking server that cannot be reached 1, a document or samples file that breaks
the Every Eval Ever schema 3 (nothing written), a folder it cannot write 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# EXIT_CODES and exit_code are re-exported: the CLI documents the codes, and its tests read them here.
from culturebias.bootstrap.exit_codes import EXIT_CODES, end_process, exit_code, run_guarded
from culturebias.domain.errors import ConfigError, CultureBiasError, PluginError
from culturebias.domain.redaction import redact_text
from culturebias.bootstrap.runs_cli import runs_command as _runs

def _parser() -> argparse.ArgumentParser:
    from culturebias.adapters.reports.expand_keys import expand_keys_text
    from culturebias.bootstrap.presets import presets_text
    from culturebias.bootstrap.registry import registry
    from culturebias.bootstrap.settings_reference import reference_text

    benchmarks = registry().benchmarks.names()
    parser = _OneLineErrors(
        prog="culturebias",
        description="Cultural bias benchmarks for language models.",
        epilog=__doc__.split("Exit codes:", 1)[1].join(["Exit codes:", ""]) if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from culturebias import __version__

    parser.add_argument("--version", action="version", version=f"culturebias {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineErrors)

    def config_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--config", help="TOML configuration file")
        p.add_argument(
            "--set",
            dest="assignments",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="override one setting, e.g. --set model.backend=onnx (repeatable; keys listed below)",
        )

    run = sub.add_parser(
        "run",
        help="run one or more benchmarks and write summary.json and a report",
        description=RUN_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # The key reference reads every registered options model: built only when help is shown.
    run.format_help = lambda: (  # type: ignore[method-assign]  # argparse has no hook for help text built on demand
        argparse.ArgumentParser.format_help(run) + "\n" + limit_text() + "\n\n" + presets_text() + "\n\n" + reference_text() + "\n"
    )
    run.add_argument(
        "benchmark",
        metavar="BENCHMARK[,BENCHMARK...]",
        help=f"one benchmark, or several separated by commas ({', '.join(benchmarks)})",
    )
    run.add_argument("--out", required=True, type=Path, help="output folder (one subfolder per benchmark when several run)")
    run.add_argument(
        "--limit", type=_positive_int, metavar="N", help="a quick, limited run: N means per benchmark what is listed below"
    )
    run.add_argument(
        "--sample", type=_positive_int, metavar="N",
        help="a seeded sample of about N items, stratified by the benchmark's design cells (protocol.sample; "
        "seed protocol.sample_seed, else run.seed); not with --limit",
    )
    run.add_argument("--resume", action="store_true", help="continue the newest unfinished run with the same config")
    run.add_argument(
        "--preset", dest="presets", action="append", default=[], metavar="NAME", help="a paper's protocol as named settings (listed below)"
    )
    config_options(run)

    planning = sub.add_parser(
        "plan",
        help="print what a run would ask of the model (requests, tokens, distinct tokens, ETA, cost) without running it",
    )
    planning.add_argument("benchmark", choices=benchmarks)
    planning.add_argument("--limit", type=_positive_int, metavar="N", help="as run --limit")
    planning.add_argument("--sample", type=_positive_int, metavar="N", help="as run --sample")
    planning.add_argument("--preset", dest="presets", action="append", default=[], metavar="NAME", help="as run --preset")
    planning.add_argument("--no-calibration", action="store_true", help="no ETA: ask the model nothing")
    planning.add_argument("--policy", default=None, metavar="POLICY", help="the units each criterion of POLICY needs (80%% power) and whether this run has them")
    planning.add_argument("--format", choices=("text", "json"), default="text")
    config_options(planning)

    listing = sub.add_parser("list", help="list benchmarks, model backends and result stores")
    listing.add_argument("--format", choices=("text", "json"), default="text")
    listing.add_argument("--metrics", nargs="?", const="", default=None, metavar="BENCHMARK",
                         help="list each headline metric (as a policy names it), its direction, range and validity rules")

    schema = sub.add_parser("schema", help="print the JSON Schema of a benchmark's summary.json, or of a policy verdict")
    schema.add_argument("benchmark", choices=[*benchmarks, "verdict"])

    expandable = [d for d in registry().benchmarks.all() if not isinstance(d, PluginError) and d.expander]
    expand = sub.add_parser(
        "expand",
        help="expand a BBQ-style template file into items",
        epilog=expand_keys_text(expandable),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    expand.add_argument("dataset", choices=[d.name for d in expandable])
    expand.add_argument("--out", required=True, type=Path, help="output file (JSONL)")
    config_options(expand)

    runs = sub.add_parser("runs", help="list the runs in a result store")
    runs.add_argument("--out", type=Path, default=None, help="output folder whose store to read")
    runs.add_argument("--store", type=Path, default=None, help="a .sqlite file or a JSONL store folder")
    runs.add_argument("--format", choices=("text", "json"), default="text")
    runs.add_argument(
        "--mark-interrupted",
        metavar="RUN_ID",
        default=None,
        help="mark a run left running by a process that is gone as interrupted (refused while a live process writes it)",
    )
    config_options(runs)

    compare = sub.add_parser("compare", help="compare finished runs of one benchmark: comparison.json and comparison.md")
    compare.add_argument("runs", nargs="+", metavar="RUN", help="an output folder, a summary.json, or a run id (with --store)")
    compare.add_argument("--out", required=True, type=Path, help="output folder")
    compare.add_argument("--store", default=None, help="result store to look run ids up in (.sqlite file, JSONL folder, run folder); "
                         "overrides the store a run folder's summary.json names")
    compare.add_argument(
        "--allow-data-mismatch", action="store_true", help="compare runs on different data versions (the report says so)"
    )
    compare.add_argument("--verdict", dest="verdicts", action="append", default=[], type=Path, metavar="FILE",
                         help="a policy verdict (check --json) the reports open with; run folders' own (check "
                              "--annotate-reports) are read anyway")

    sweep = sub.add_parser("sweep", help="run models × benchmarks from a TOML file into one store, then compare per benchmark")
    sweep.add_argument("file", type=Path, metavar="FILE.toml", help="the sweep: [[models]], benchmarks, [protocol.*], [run]")
    sweep.add_argument("--out", type=Path, default=None, help="output folder (default: FILE without .toml)")
    sweep.add_argument("--resume", action="store_true", help="skip finished pairs, continue unfinished ones")
    from culturebias.bootstrap.cli_commands import add_parsers

    add_parsers(sub, config_options)  # samples, export, build, check, cbbq, split-check, judge-consistency
    return parser


RUN_DESCRIPTION = """\
Run benchmarks and write summary.json and report.md.

Several benchmarks (kobbq,cbbq,libra) run in one call on one loaded model, each
in its own subfolder of --out (DIR/kobbq/summary.json, ...). Their options:
  --set protocol.KEY=V             every benchmark whose options have KEY
                                   (an error when none of them has it)
  --set protocol.BENCHMARK.KEY=V   that benchmark only; wins over protocol.KEY
  --set data.BENCHMARK.path=V      that benchmark's data (data.path names one
                                   benchmark's data: one benchmark only)
Every benchmark's settings and data are checked before the first one runs.
--limit N is --set protocol.limit=N (the first N, as lm-evaluation-harness's --limit:
for debugging); the summary records it and the report says it is a limited run, not
representative and not comparable to a full one. --sample N is --set protocol.sample=N:
a seeded sample stratified by the benchmark's design cells, recorded as the summary's
`sample` block."""


def limit_text() -> str:
    """What ``--limit N`` means for each registered benchmark, from its options model."""
    from culturebias.bootstrap.registry import BenchmarkDescriptor, registry

    lines = ["--limit N (protocol.limit) evaluates only:"]
    for descriptor in registry().benchmarks.all():
        if isinstance(descriptor, BenchmarkDescriptor):
            field = descriptor.options_model().model_fields.get("limit")
            meaning = field.description if field is not None and field.description else "(no limit for this benchmark)"
            lines.append(f"  {descriptor.name:<8} {meaning}")
    lines.append("--sample N (protocol.sample) draws about N items, stratified by (whole units drawn):")
    for descriptor in registry().benchmarks.all():
        if isinstance(descriptor, BenchmarkDescriptor):
            strata = descriptor.sample_strata()
            cells = f"{' × '.join(strata.cells)} (whole {strata.unit}s)" if strata else "no strata: a simple random sample"
            lines.append(f"  {descriptor.name:<8} {cells}")
    return "\n".join(lines)


class _OneLineErrors(argparse.ArgumentParser):
    """A command line that cannot be parsed: one line on stderr (where --help is), exit 2."""

    def error(self, message: str):  # type: ignore[override]  # argparse's own is typed NoReturn too
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _plan(args) -> int:
    from culturebias.bootstrap.api import plan_evaluation
    from culturebias.bootstrap.policy_plan import print_policy_plan
    from culturebias.bootstrap.logging import configure_logging
    from culturebias.bootstrap.presets import preset_assignments
    from culturebias.bootstrap.settings import load_settings

    presets = preset_assignments(args.presets, [args.benchmark])
    settings = load_settings(args.config, [*presets, *args.assignments], limit=args.limit, sample=args.sample)
    configure_logging(settings.run.log_format, settings.run.log_level)
    if args.policy is not None:
        return print_policy_plan(args.benchmark, settings, args.policy, args.format)
    found = plan_evaluation(args.benchmark, settings, calibrate=not args.no_calibration, progress_bar=True)
    print(found.model_dump_json(indent=2) if args.format == "json" else found.text())
    return 0


def _run(args) -> int:
    from culturebias.bootstrap.api import benchmark_names, run_evaluation, run_evaluations
    from culturebias.bootstrap.logging import configure_logging
    from culturebias.bootstrap.settings import load_settings

    names = benchmark_names(args.benchmark)
    from culturebias.bootstrap.presets import preset_assignments

    presets = preset_assignments(args.presets, names)  # under --set: a given key wins over the preset's
    settings = load_settings(args.config, [*presets, *args.assignments], limit=args.limit, sample=args.sample)
    configure_logging(settings.run.log_format, settings.run.log_level)
    if len(names) == 1:
        results = [run_evaluation(names[0], settings, out=args.out, resume=args.resume, progress_bar=True)]
    else:
        results = list(run_evaluations(names, settings, out=args.out, resume=args.resume, progress_bar=True).values())
    from culturebias.adapters.reports.headline_text import headline_text
    from culturebias.bootstrap.registry import registry

    for result in results:
        descriptor = registry().benchmark(result.summary.benchmark)
        card = headline_text(result.summary, descriptor.headline_metrics(), descriptor.title)
        if card:
            print(card)
        print(f"summary: {result.summary_path}")
        for path in result.report_paths:
            print(f"report:  {path}")
    return 0


def _list(args) -> int:
    from culturebias.bootstrap.presets import presets
    from culturebias.bootstrap.registry import BackendDescriptor, BenchmarkDescriptor, StoreDescriptor, registry

    if args.metrics is not None:
        from culturebias.bootstrap.metrics_cli import list_metrics

        return list_metrics(args.metrics or None, args.format)
    reg = registry()
    benchmarks = reg.benchmarks.all()
    backends = reg.backends.all()
    stores = reg.stores.all()
    if args.format == "json":
        def broken(error: PluginError) -> dict:
            return {"error": str(error)}

        payload = {
            "benchmarks": [
                {
                    "name": b.name,
                    "title": b.title,
                    "culture": b.culture,
                    "language": b.language,
                    "data_licence": b.data_licence,
                    "bundled_data": b.bundled_data,
                    "data_note": b.data_note,
                }
                if isinstance(b, BenchmarkDescriptor)
                else broken(b)
                for b in benchmarks
            ],
            "backends": [
                {"name": b.name, "description": b.description, "capabilities": sorted(b.capabilities)}
                if isinstance(b, BackendDescriptor)
                else broken(b)
                for b in backends
            ],
            "stores": [
                {"name": s.name, "description": s.description, "durable": s.durable}
                if isinstance(s, StoreDescriptor)
                else broken(s)
                for s in stores
            ],
            "presets": [{**p.model_dump(mode="json"), "assignments": p.assignments()} for p in presets().values()],
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    def describe_benchmark(b: BenchmarkDescriptor) -> str:
        bundled = "bundled data" if b.bundled_data else "bring your own data"
        note = f"; {b.data_note}" if b.data_note else ""
        return f"{b.name:<8} {b.title} ({b.culture}, {b.language}); licence: {b.data_licence}; {bundled}{note}"

    sections: tuple[tuple[str, Sequence[Any], Callable[[Any], str]], ...] = (  # Any: each section's own entries
        ("benchmarks", benchmarks, describe_benchmark),
        ("backends", backends, lambda d: f"{d.name:<8} {d.description}; can: {', '.join(sorted(d.capabilities))}"),
        ("stores", stores, lambda s: f"{s.name:<8} {s.description}"),
        ("presets", list(presets().values()), lambda p: f"{p.name} (for {', '.join(p.benchmarks)}): {' '.join(p.assignments())}"),
    )
    for title, entries, describe in sections:
        print(f"{title}:")
        for entry in entries:
            print(f"  (broken plugin) {entry}" if isinstance(entry, PluginError) else f"  {describe(entry)}")
    return 0


def _schema(args) -> int:
    from culturebias.bootstrap.api import summary_schema
    from culturebias.domain.policy.verdict import verdict_schema

    schema = verdict_schema() if args.benchmark == "verdict" else summary_schema(args.benchmark)
    print(json.dumps(schema, ensure_ascii=False, indent=2))
    return 0


def _expand(args) -> int:
    from culturebias.bootstrap.registry import registry
    from culturebias.bootstrap.settings import load_settings

    from culturebias.adapters.files.table_files import JsonlRows

    settings = load_settings(args.config, args.assignments)  # the expander has its own protocol keys
    descriptor = registry().benchmark(args.dataset)
    expand = descriptor.expand_function()
    if expand is None:
        raise ConfigError(f"{args.dataset} has no template expander")
    source: Any = descriptor.source_class()  # Any: a dataset source class; an expander's also has template_files()
    count = expand(settings.protocol, source.template_files(settings.data.path), JsonlRows(args.out))
    print(f"{count} items written to {args.out}")
    return 0


def _sweep(args) -> int:
    from culturebias.bootstrap.api import make_settings, sweep
    from culturebias.bootstrap.logging import configure_logging
    from culturebias.application.sweep import load_plan

    run = make_settings(run=load_plan(args.file).run or None).run
    configure_logging(run.log_format, run.log_level)
    out = args.out if args.out is not None else Path(args.file).with_suffix("")
    result = sweep(args.file, out=out, resume=args.resume, progress_bar=True)
    for pair in result.pairs:
        error = f"\t{pair.error}" if pair.error else ""
        print(f"{pair.model}\t{pair.benchmark}\t{pair.status}\t{pair.run_id or '-'}{error}")
    for comparison in result.comparisons:
        print(f"comparison {comparison.benchmark}: {comparison.path or comparison.status + ': ' + (comparison.reason or '')}")
    print(f"sweep: {Path(result.out) / 'sweep.json'}")
    return 0 if result.ok else 1


def _compare(args) -> int:
    from culturebias.bootstrap.api import compare_runs

    result = compare_runs(args.runs, out=args.out, store=args.store, allow_data_mismatch=args.allow_data_mismatch,
                          verdicts=args.verdicts)
    print(f"comparison: {result.comparison_path}")
    for path in result.report_paths:
        print(f"report:     {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as stop:  # argparse: --help, --version, or a usage error (code 2)
        return int(stop.code or 0)
    except CultureBiasError as error:
        print(f"culturebias: error: {redact_text(str(error))}", file=sys.stderr)
        return exit_code(error)
    handlers = {
        "run": _run, "plan": _plan, "list": _list, "schema": _schema, "expand": _expand, "runs": _runs, "compare": _compare, "sweep": _sweep
    }
    from culturebias.bootstrap.cli_commands import handlers as command_handlers

    handlers.update(command_handlers())
    from culturebias.bootstrap.logging import configure_logging, logging_restored

    def command() -> int:
        with logging_restored():
            configure_logging()  # console lines on stderr; `run` and `sweep` apply run.log_format and run.log_level
            return handlers[args.command](args)

    return run_guarded(command)


def console_main() -> None:
    """The installed ``culturebias`` script: the exit code of ``main`` (``exit_codes.end_process``)."""
    end_process(main())


if __name__ == "__main__":
    console_main()
