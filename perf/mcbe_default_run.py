"""Wall time of the default McBE run: ``culturebias run mcbe --out DIR`` (embedded SmolLM2-135M as model AND judge).

A speed script, not a test: it prints what it measured and asserts nothing.

The default run once took about 70 minutes on 2 cores: the 135M judge never answers
with a number, so every one of its verdicts (and every BS rating) went through every
retry round. The stopping rule (``protocol.judge_probe`` K, ``protocol.judge_max_unparseable``
X; ``domain/mcbe/judge_stop.py``) stops asking after the first K replies when more than X
of them hold no number. This script runs the default command as a user would, in a
subprocess (model load included), and with ``--before`` also the same command with the
rule off (``protocol.judge_probe=0``: the behaviour before the rule). Every run gets a
fresh output folder (nothing is reused from an earlier run's store); the model folder
converted from the embedded GGUF is shared (``run.cache_dir``), and the first run
converts it once, outside the timings. Besides wall time it prints the CPU time
(user + system) of each run: on a machine shared with other jobs the wall time
grows with the load, while CPU time / 2 is what the run needs from 2 idle cores.

    python perf/mcbe_default_run.py                  # the default run, as shipped
    python perf/mcbe_default_run.py --before         # and the run with the rule off
    python perf/mcbe_default_run.py --limit 2 --before   # quicker: the first 2 BEIs per category
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def culturebias(*args: str) -> list[str]:
    return [sys.executable, "-m", "culturebias.bootstrap.cli", *args]


def run(label: str, out: Path, cache: Path, extra: list[str]) -> dict:
    argv = culturebias("run", "mcbe", "--out", str(out), "--set", "run.progress=false", "--set", f"run.cache_dir={cache}", *extra)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        print(done.stdout[-2000:], done.stderr[-4000:], sep="\n")
        raise SystemExit(f"{label}: exit code {done.returncode}")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return {"label": label, "seconds": seconds, "cpu": cpu, "load": os.getloadavg()[0], "summary": summary}


def describe(result: dict) -> None:
    summary = result["summary"]
    counts, metrics = summary["counts"], summary["metrics"]
    tasks = {k: (round(v, 2) if v is not None else None) for k, v in metrics["tasks"].items()}
    print(
        f"\n== {result['label']}: {result['seconds']:.1f} s wall ({result['seconds'] / 60:.1f} min), "
        f"{result['cpu']:.1f} s CPU (user + system; / 2 cores = {result['cpu'] / 120:.1f} min), "
        f"1-min load average at the end {result['load']:.1f}"
    )
    print(f"   BEIs {counts['beis']}, task scores {tasks}, overall {metrics['overall']}")
    print(
        f"   BA judge requests {counts.get('ba_judge_requests')}, not sent {counts.get('ba_judge_not_sent', 0)}, "
        f"retried {counts.get('ba_judge_retried', 0)}, no number {counts.get('ba_judge_invalid', 0)}"
    )
    print(
        f"   BS ratings without a number {counts.get('bs_invalid')}, retried {counts.get('bs_retried', 0)}, "
        f"not asked again {counts.get('bs_retries_stopped', 0)}"
    )
    for task, stop in (metrics.get("reply_stops") or {}).items():
        print(f"   stopped {task}: {stop['reason']} ({stop['effect']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="protocol.limit: the first N BEIs of each category")
    parser.add_argument("--before", action="store_true", help="also run with the stopping rule off (judge_probe=0)")
    parser.add_argument("--work", default=None, help="folder for outputs and the model cache (default: a temporary one)")
    args = parser.parse_args()

    work = Path(args.work or tempfile.mkdtemp(prefix="mcbe-perf-"))
    cache = work / "cache"
    common = ["--set", f"protocol.limit={args.limit}"] if args.limit else []
    print(f"cpu cores visible: {os.cpu_count()}, load average before: {os.getloadavg()}, work: {work}")

    # Convert the embedded model once, outside the timings (a one-PC-sentence run).
    warm = ["--set", "protocol.tasks=pc", "--set", "protocol.limit=1", "--set", "protocol.categories=gender"]
    start = time.perf_counter()
    run("warm-up", work / "warm", cache, warm)
    print(f"warm-up (model conversion + one PC BEI): {time.perf_counter() - start:.1f} s")

    results = [run("default (stopping rule on, as shipped)", work / "after", cache, common)]
    if args.before:
        results.append(run("rule off (judge_probe=0: every retry round)", work / "before", cache, common + ["--set", "protocol.judge_probe=0"]))
    for result in results:
        describe(result)
    if len(results) == 2:
        after, before = results
        print(
            f"\nrule off / rule on: {before['seconds'] / after['seconds']:.2f}x wall time, "
            f"{before['cpu'] / after['cpu']:.2f}x CPU time"
        )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
