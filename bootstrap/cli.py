"""The ``culturebias`` command line.

    culturebias run BENCHMARK --out DIR [--config FILE] [--set key=value ...] [--resume]
    culturebias expand kobbq|cbbq --out FILE [--set data.path=...]
    culturebias runs [--store PATH]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from culturebias.domain.errors import CultureBiasError

EXPANDERS = {
    "kobbq": "culturebias.bootstrap.expand:expand_kobbq",
    "cbbq": "culturebias.bootstrap.expand:expand_cbbq",
}


def _parser() -> argparse.ArgumentParser:
    from culturebias.application.registry import SERVICES

    parser = argparse.ArgumentParser(prog="culturebias", description="Cultural bias benchmarks for language models.")
    sub = parser.add_subparsers(dest="command", required=True)

    def config_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--config", help="TOML configuration file")
        p.add_argument(
            "--set",
            dest="assignments",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="override one setting, e.g. --set model.backend=onnx (repeatable)",
        )

    run = sub.add_parser("run", help="run a benchmark and write summary.json and a report")
    run.add_argument("benchmark", choices=sorted(SERVICES))
    run.add_argument("--out", required=True, type=Path, help="output folder")
    run.add_argument("--resume", action="store_true", help="continue the newest unfinished run with the same config")
    config_options(run)

    expand = sub.add_parser("expand", help="expand a BBQ-style template file into items")
    expand.add_argument("dataset", choices=sorted(EXPANDERS))
    expand.add_argument("--out", required=True, type=Path, help="output file (JSONL)")
    config_options(expand)

    runs = sub.add_parser("runs", help="list the runs in a result store")
    runs.add_argument("--out", type=Path, default=None, help="output folder whose default store to read")
    config_options(runs)
    return parser


def _run(args) -> int:
    from culturebias.application.run_benchmark import RunRequest, run_benchmark
    from culturebias.bootstrap.container import make_container, make_context_factory
    from culturebias.bootstrap.logging import configure_logging
    from culturebias.bootstrap.settings import load_settings
    from culturebias.domain.fingerprint import fingerprint

    settings = load_settings(args.config, args.assignments)
    configure_logging(settings.run.log_format, settings.run.log_level)
    out_dir: Path = args.out
    out_dir.mkdir(parents=True, exist_ok=True)
    container = make_container(args.benchmark, settings, out_dir)
    config = settings.redacted()
    # What changes the numbers; where results go and how progress is shown do not.
    identity_config = {k: v for k, v in config.items() if k not in {"store"}}
    identity_config["run"] = {k: v for k, v in config["run"].items() if k in {"seed"}}
    request = RunRequest(
        benchmark=args.benchmark,
        service=container.service(),
        source=container.source(),
        store=container.store(),
        report=container.report(),
        out_dir=out_dir,
        config=config,
        config_fingerprint=fingerprint(identity_config),
        resume=args.resume,
    )
    try:
        result = run_benchmark(request, make_context_factory(container))
    finally:
        container.store().close()
    print(f"summary: {result.summary_path}")
    for path in result.report_paths:
        print(f"report:  {path}")
    return 0


def _expand(args) -> int:
    from culturebias.application.registry import import_object
    from culturebias.bootstrap.settings import load_settings

    settings = load_settings(args.config, args.assignments)
    count = import_object(EXPANDERS[args.dataset])(settings, args.out)
    print(f"{count} items written to {args.out}")
    return 0


def _runs(args) -> int:
    from culturebias.bootstrap.container import build_store
    from culturebias.bootstrap.settings import load_settings

    settings = load_settings(args.config, args.assignments)
    store = build_store(settings, args.out or Path("."))
    for manifest in store.find_runs():
        print(f"{manifest.run_id}\t{manifest.status}\t{manifest.created_at}\tdata={manifest.data_fingerprint}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handlers = {"run": _run, "expand": _expand, "runs": _runs}
    try:
        return handlers[args.command](args)
    except CultureBiasError as error:
        print(f"culturebias: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("culturebias: interrupted; stored results are kept, continue with --resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
