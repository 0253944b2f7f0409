"""Comparing ten KoBBQ runs: seconds for ``culturebias.compare`` from run folders to comparison.json and comparison.md.

    python perf/compare_runs.py [--runs 10] [--prompts 1,2,3,4,5] [--permutations 0,1,2] [--keep DIR]

Makes ``--runs`` finished KoBBQ runs of scripted models (each answers every
question of the bundled test split, 269 templates, by a seeded random mixture of
biased, unknown and counter-biased answers) with ``run_with_fakes``, writes
each to its own run folder, then times the comparison the way a user runs it:
``culturebias compare`` in a fresh process (reading the ten summary.json files,
every statistic, the report and its figure), and ``culturebias.compare`` in
this process, in memory and with files. Prints seconds; making the runs is not
timed. Its baseline: the comparison's Tukey HSD (unordered pairs) against
``scipy.stats.tukey_hsd`` (every cell of the k × k matrix) on the same samples.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_runs(folder: Path, n: int, prompts: str, permutations: str) -> list[Path]:
    from culturebias.domain.bbq.model import QAItem
    from culturebias.testing.kobbq_runs import kobbq_run

    outs = []
    for k in range(n):
        rng = random.Random(k)
        biased, unknown = 0.1 * (k % 5), 0.5 - 0.05 * k

        def policy(item: QAItem, rng: random.Random = rng, biased: float = biased, unknown: float = unknown) -> int:
            draw = rng.random()
            if draw < biased and item.biased_index is not None:
                return item.biased_index
            if draw < biased + unknown:
                return item.unknown_index
            return rng.randrange(3)

        out = folder / f"model-{k:02d}"
        kobbq_run(policy, name=f"model-{k:02d}", out_dir=out,
                  options={"prompts": prompts, "permutations": permutations, "statistics": False})
        outs.append(out)
    return outs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--prompts", default="1,2,3,4,5")
    parser.add_argument("--permutations", default="0,1,2")
    parser.add_argument("--keep", type=Path, default=None, help="write the runs and the comparison here (kept)")
    args = parser.parse_args()

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))
    import culturebias

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        start = time.perf_counter()
        runs = make_runs(folder, args.runs, args.prompts, args.permutations)
        print(f"made {len(runs)} KoBBQ runs in {time.perf_counter() - start:.1f} s (not part of the timing)")

        start = time.perf_counter()
        command = [sys.executable, "-m", "culturebias.bootstrap.cli", "compare", *map(str, runs), "--out", str(folder / "cli")]
        subprocess.run(command, check=True, capture_output=True)
        cli = time.perf_counter() - start

        start = time.perf_counter()
        comparison = culturebias.compare(runs)
        in_memory = time.perf_counter() - start

        start = time.perf_counter()
        culturebias.compare(runs, out=folder / "api")
        with_files = time.perf_counter() - start

        tukey, scipy_tukey = tukey_against_scipy([culturebias.load_summary(r) for r in runs])

    body = comparison.body
    print(f"{len(comparison.runs)} runs, {len(body.wilcoxon)} Wilcoxon tests, "
          f"{sum(len(t.pairs) for t in body.tukey_across_models.values() if t)} Tukey pairs")
    print(f"culturebias compare (new process, report and figure): {cli:.2f} s")
    print(f"culturebias.compare in memory:                        {in_memory:.2f} s")
    print(f"culturebias.compare with comparison.json and report:  {with_files:.2f} s")
    print(f"Tukey HSD across models, both diff-biases: pairs only {tukey:.2f} s, scipy.stats.tukey_hsd "
          f"{scipy_tukey:.2f} s ({scipy_tukey / tukey:.1f}x)")


def tukey_against_scipy(summaries) -> tuple[float, float]:
    """Seconds of the comparison's Tukey HSD (unordered pairs) and of scipy's (every cell), same samples, 99%."""
    from scipy import stats

    from culturebias.domain.kobbq.comparison import NORMALISED_METRICS, normalised_sample
    from culturebias.domain.comparison.tukey import tukey_pairs

    samples = [[normalised_sample(s, metric) for s in summaries] for metric in NORMALISED_METRICS]
    start = time.perf_counter()
    for groups in samples:
        tukey_pairs({str(i): g for i, g in enumerate(groups)}, confidence=0.99)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    for groups in samples:
        stats.tukey_hsd(*groups).confidence_interval(confidence_level=0.99)
    return ours, time.perf_counter() - start


if __name__ == "__main__":
    main()
