"""``culturebias check``: decide an acceptance policy on runs, with the exit code a CI job gates on.

    culturebias check POLICY --run DIR [--run DIR ...] [--baseline DIR ...] [--junit FILE] [--json FILE]
                             [--inconclusive fail|pass] [--store PATH] [--baseline-store PATH] [--annotate-reports]
    culturebias check POLICY --model MODEL --out DIR [--config FILE] [--set KEY=VALUE ...] [--limit N]
    culturebias check POLICY --sequential --model MODEL --out DIR [--config FILE] [--set KEY=VALUE ...]
    culturebias check --steps

Exit codes: 0 every criterion passes; 1 one fails; 2 none fails but some are
inconclusive (``--inconclusive fail|pass`` counts those as failed or passed);
3 a bad policy or run (nothing is written); 8 a run another live process is still writing.

--sequential runs the benchmarks in growing nested stratified rounds (DIR/round-<k>/<benchmark>,
one store DIR/results.sqlite; run again to resume) and stops once every criterion is decided on
an anytime-valid confidence sequence (docs/PROTOCOLS.md, "Sequential checks").
"""

from __future__ import annotations

import argparse
from pathlib import Path

from culturebias.domain.errors import CapabilityError, ConfigError, ModelLoadError, PolicyError

MARKS = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}


def add_parser(sub: argparse._SubParsersAction) -> None:
    check = sub.add_parser(
        "check",
        help="decide an acceptance policy (.toml or .feature) on runs: exit 0 pass, 1 fail, 2 inconclusive, 3 bad input",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("policy", nargs="?", metavar="POLICY", help="the policy: a .toml file or a Gherkin .feature file")
    check.add_argument("--run", dest="runs", action="append", default=[], metavar="DIR",
                       help="a run to check (folder, summary.json, or run id with --store); one per benchmark")
    check.add_argument("--baseline", dest="baselines", action="append", default=[], metavar="DIR",
                       help="the baseline of not_worse_than_baseline_by criteria; one per benchmark")
    check.add_argument("--store", default=None, help="result store to look run ids up in (overrides the store "
                       "a run folder's summary.json names)")
    check.add_argument("--baseline-store", default=None, metavar="STORE",
                       help="the store of the baselines, when it is not the runs' (default: --store)")
    check.add_argument("--junit", type=Path, default=None, metavar="FILE", help="write JUnit XML: one testcase per criterion")
    check.add_argument("--json", type=Path, default=None, metavar="FILE", help="write the verdict as JSON (culturebias schema verdict)")
    check.add_argument("--inconclusive", choices=("inconclusive", "fail", "pass"), default="inconclusive",
                       help="count inconclusive criteria as they are (exit 2, the default), as failed (1) or as passed (0)")
    check.add_argument("--annotate-reports", action="store_true",
                       help="rewrite each checked run folder's report.html so that it opens with the verdict")
    check.add_argument("--steps", action="store_true", help="list the Gherkin steps a .feature policy may use, and exit")
    check.add_argument("--model", default=None, help="run the benchmarks the policy needs on this model first (model.path)")
    check.add_argument("--out", type=Path, default=None, help="with --model: the output folder of the runs (DIR/<benchmark>)")
    check.add_argument("--limit", type=int, default=None, metavar="N", help="with --model: a limited run (see `run --help`)")
    check.add_argument("--config", help="with --model: TOML configuration file")
    check.add_argument("--sequential", action="store_true",
                       help="with --model: run in growing stratified rounds and stop once every criterion is decided "
                            "(anytime-valid confidence sequences); rerun to resume")
    check.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE",
                       help="with --model: override one setting (repeatable)")


def check_command(args) -> int:
    from culturebias.adapters.policy.steps import steps_text

    if args.steps:
        print(steps_text())
        return 0
    if args.policy is None:
        raise PolicyError("name the policy file: culturebias check POLICY --run DIR")
    try:
        verdict, reports = _decide(args)
    except (PolicyError, CapabilityError, ModelLoadError):
        raise
    except ConfigError as error:  # exit 3, not 2: 2 is "inconclusive" for this command
        raise PolicyError(str(error)) from error
    for criterion in verdict.criteria:
        print(f"{MARKS[criterion.outcome]:<12} {criterion.name}: {criterion.reason}")
    counts = verdict.counts
    print(f"verdict: {verdict.outcome} ({counts.passed} pass, {counts.failed} fail, {counts.inconclusive} inconclusive)")
    for path in (args.junit, args.json, *reports):
        if path is not None:
            print(f"written: {path}")
    return verdict.exit_code(args.inconclusive)


def _decide(args):
    from culturebias.bootstrap.check import annotate_reports, check, check_model

    if args.sequential:
        return _sequential(args)
    if args.model is None:
        if args.out is not None or args.limit is not None or args.config or args.assignments:
            raise PolicyError("--out, --limit, --config and --set go with --model (running the benchmarks first)")
        verdict = check(args.policy, args.runs, args.baselines, store=args.store, baseline_store=args.baseline_store,
                        junit=args.junit, json=args.json, inconclusive=args.inconclusive)
        reports = annotate_reports(verdict, args.runs, args.store) if args.annotate_reports else []
        return verdict, reports
    if args.runs:
        raise PolicyError("--run and --model exclude each other: check given runs, or run the model first")
    if args.out is None:
        raise PolicyError("--model needs --out DIR (where the runs are written)")
    from culturebias.bootstrap.logging import configure_logging
    from culturebias.bootstrap.settings import load_settings

    settings = load_settings(args.config, [f"model.path={args.model}", *args.assignments], limit=args.limit)
    configure_logging(settings.run.log_format, settings.run.log_level)
    return check_model(args.policy, settings, out=args.out, baseline=args.baselines or None, junit=args.junit,
                       json=args.json, inconclusive=args.inconclusive, progress_bar=True)


def _sequential(args):
    from culturebias.bootstrap.sequential import check_sequential

    if args.model is None or args.out is None:
        raise PolicyError("--sequential runs the model itself: give --model MODEL and --out DIR")
    if args.runs or args.limit is not None or args.annotate_reports:
        raise PolicyError("--sequential draws its own rounds: --run, --limit and --annotate-reports do not go with it")
    verdict = check_sequential(args.policy, out=args.out, config=args.config,
                               assignments=[f"model.path={args.model}", *args.assignments], junit=args.junit,
                               json=args.json, inconclusive=args.inconclusive)
    block = verdict.sequential
    if block is not None:
        print(f"sequential: {len(block.rounds)} round(s), {block.answers_used} of about {block.answers_full_run} "
              f"answers of the full run{'; stopped early' if block.stopped_early else '; the data ran out (the full run)'}")
    return verdict, [args.out / "verdict.json"]
