"""The ``culturebias`` command line: a thin layer over the Python API (``culturebias.bootstrap.api``).

    culturebias run BENCHMARK --out DIR [--config FILE] [--set key=value ...] [--resume]
    culturebias list [--format text|json]
    culturebias schema BENCHMARK
    culturebias expand kobbq|cbbq --out FILE [--set data.path=...]
    culturebias runs [--out DIR | --store PATH] [--format text|json]

Exit codes: 0 success; 1 another culturebias error; 2 configuration (also bad
command-line usage); 3 input data; 4 a backend lacks a needed capability;
5 a model could not be loaded; 6 ``--resume`` found a run with another
configuration or data; 7 a plugin failed to load; 130 interrupted. A deliberate
error prints one line, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from culturebias.domain.errors import (
    CapabilityError,
    ConfigError,
    CultureBiasError,
    DataError,
    MissingDataError,
    ModelLoadError,
    PluginError,
    ResumeMismatchError,
)

# Most specific first: the first matching type decides the exit code.
EXIT_CODES: tuple[tuple[type[CultureBiasError], int, str], ...] = (
    (ResumeMismatchError, 6, "resume mismatch"),
    (PluginError, 7, "plugin"),
    (MissingDataError, 3, "data"),
    (ConfigError, 2, "configuration"),
    (DataError, 3, "data"),
    (CapabilityError, 4, "capability"),
    (ModelLoadError, 5, "model load"),
    (CultureBiasError, 1, "error"),
)
INTERRUPTED = 130


def exit_code(error: CultureBiasError) -> int:
    return next(code for kind, code, _ in EXIT_CODES if isinstance(error, kind))


def _parser() -> argparse.ArgumentParser:
    from culturebias.bootstrap.registry import registry
    from culturebias.bootstrap.settings_reference import reference_text

    benchmarks = registry().benchmarks.names()
    parser = argparse.ArgumentParser(
        prog="culturebias",
        description="Cultural bias benchmarks for language models.",
        epilog=__doc__.split("Exit codes:", 1)[1].join(["Exit codes:", ""]) if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from culturebias import __version__

    parser.add_argument("--version", action="version", version=f"culturebias {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

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
        "run", help="run a benchmark and write summary.json and a report", formatter_class=argparse.RawDescriptionHelpFormatter
    )
    # The key reference reads every registered options model: built only when help is shown.
    run.format_help = lambda: argparse.ArgumentParser.format_help(run) + "\n" + reference_text() + "\n"  # type: ignore[method-assign]
    run.add_argument("benchmark", choices=benchmarks)
    run.add_argument("--out", required=True, type=Path, help="output folder")
    run.add_argument("--resume", action="store_true", help="continue the newest unfinished run with the same config")
    config_options(run)

    listing = sub.add_parser("list", help="list benchmarks, model backends and result stores")
    listing.add_argument("--format", choices=("text", "json"), default="text")

    schema = sub.add_parser("schema", help="print the JSON Schema of a benchmark's summary.json")
    schema.add_argument("benchmark", choices=benchmarks)

    expandable = [d.name for d in registry().benchmarks.all() if not isinstance(d, PluginError) and d.expander]
    expand = sub.add_parser("expand", help="expand a BBQ-style template file into items")
    expand.add_argument("dataset", choices=expandable)
    expand.add_argument("--out", required=True, type=Path, help="output file (JSONL)")
    config_options(expand)

    runs = sub.add_parser("runs", help="list the runs in a result store")
    runs.add_argument("--out", type=Path, default=None, help="output folder whose store to read")
    runs.add_argument("--store", type=Path, default=None, help="a .sqlite file or a JSONL store folder")
    runs.add_argument("--format", choices=("text", "json"), default="text")
    config_options(runs)
    return parser


def _run(args) -> int:
    from culturebias.bootstrap.api import run_evaluation
    from culturebias.bootstrap.logging import configure_logging
    from culturebias.bootstrap.settings import load_settings

    settings = load_settings(args.config, args.assignments)
    configure_logging(settings.run.log_format, settings.run.log_level)
    result = run_evaluation(
        args.benchmark, settings, out=args.out, resume=args.resume, progress_bar=settings.run.progress
    )
    print(f"summary: {result.summary_path}")
    for path in result.report_paths:
        print(f"report:  {path}")
    return 0


def _list(args) -> int:
    from culturebias.bootstrap.registry import BackendDescriptor, BenchmarkDescriptor, StoreDescriptor, registry

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
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    def describe_benchmark(b: BenchmarkDescriptor) -> str:
        bundled = "bundled data" if b.bundled_data else "bring your own data"
        note = f"; {b.data_note}" if b.data_note else ""
        return f"{b.name:<8} {b.title} ({b.culture}, {b.language}); licence: {b.data_licence}; {bundled}{note}"

    sections = (
        ("benchmarks", benchmarks, describe_benchmark),
        ("backends", backends, lambda d: f"{d.name:<8} {d.description}; can: {', '.join(sorted(d.capabilities))}"),
        ("stores", stores, lambda s: f"{s.name:<8} {s.description}"),
    )
    for title, entries, describe in sections:
        print(f"{title}:")
        for entry in entries:
            print(f"  (broken plugin) {entry}" if isinstance(entry, PluginError) else f"  {describe(entry)}")
    return 0


def _schema(args) -> int:
    from culturebias.bootstrap.api import summary_schema

    print(json.dumps(summary_schema(args.benchmark), ensure_ascii=False, indent=2))
    return 0


def _expand(args) -> int:
    from culturebias.bootstrap.registry import registry
    from culturebias.bootstrap.settings import load_settings

    settings = load_settings(args.config, args.assignments)
    expand = registry().benchmark(args.dataset).expand_function()
    if expand is None:
        raise ConfigError(f"{args.dataset} has no template expander")
    count = expand(settings.protocol, settings.data.path, args.out)
    print(f"{count} items written to {args.out}")
    return 0


def _runs(args) -> int:
    from culturebias.bootstrap.api import list_runs, open_store
    from culturebias.bootstrap.settings import load_settings

    if args.store is not None:
        store = open_store(args.store)
    elif args.out is not None and not args.assignments and not args.config:
        store = open_store(args.out)
    else:
        from culturebias.bootstrap.container import build_store

        store = build_store(load_settings(args.config, args.assignments), args.out or Path("."))
    try:
        manifests = list_runs(store)
    finally:
        store.close()
    if args.format == "json":
        print(json.dumps([m.model_dump(mode="json", exclude={"config"}) for m in manifests], ensure_ascii=False, indent=2))
        return 0
    for m in manifests:
        failure = f"\t{m.failure}" if m.failure else ""
        print(f"{m.run_id}\t{m.status}\t{m.created_at}\tdata={m.data_fingerprint}{failure}")
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as stop:  # argparse: --help, --version, or a usage error (code 2)
        return int(stop.code or 0)
    except CultureBiasError as error:
        print(f"culturebias: error: {error}", file=sys.stderr)
        return exit_code(error)
    handlers = {"run": _run, "list": _list, "schema": _schema, "expand": _expand, "runs": _runs}
    try:
        return handlers[args.command](args)
    except CultureBiasError as error:
        print(f"culturebias: error: {error}", file=sys.stderr)
        return exit_code(error)
    except KeyboardInterrupt:
        print("culturebias: interrupted; stored results are kept, continue with --resume", file=sys.stderr)
        return INTERRUPTED


def console_main() -> None:
    """The installed ``culturebias`` script: the exit code of ``main``."""
    sys.exit(main())


if __name__ == "__main__":
    console_main()
