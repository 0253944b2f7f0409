"""Answers to a verdict: ``check --sequential`` against a full run, on scripted KoBBQ models (counts, not timing).

For each scripted model the bundled KoBBQ test split (prompts 1,2, one option
order) is run in full and checked (``culturebias check``), then checked
sequentially (nested stratified rounds, anytime-valid confidence sequences):
the table gives both verdicts, the rounds, and the answers each needed. The
answers are those the model was really asked (a round reuses the earlier
rounds' stored answers). Prints a Markdown table (perf/README.md holds one).

    python perf/sequential_answers.py
    python perf/sequential_answers.py --gate 0.1   # a stricter between [-g, g] on diff_bias_amb
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import culturebias
from culturebias.application.sequential_check import SequentialRequest, sequential_check
from culturebias.bootstrap.check import RegistryCatalog, load_policy
from culturebias.testing.kobbq_runs import kobbq_run
from culturebias.testing.sequential_runs import ScriptedRounds, mostly_unknown

MODELS = {
    "always biased": "biased",
    "always unknown": "unknown",
    "mostly unknown (2 % each person)": mostly_unknown,
    "always counter-biased": "counter",
    "random (seeded)": "random",
}


def gate_text(g: float) -> str:
    return (f'name = "gate"\n[[criterion]]\nname = "ambiguous diff-bias"\nbenchmark = "kobbq"\n'
            f'metric = "diff_bias_amb"\nbetween = [{-g}, {g}]\n')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gate", type=float, default=0.2, help="diff_bias_amb between [-g, g] (default 0.2)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sequential-answers-"))
    policy_file = root / "gate.toml"
    policy_file.write_text(gate_text(args.gate), encoding="utf-8")
    policy = load_policy(policy_file)
    print(f"Policy: diff_bias_amb between [{-args.gate:g}, {args.gate:g}], 95 %.\n")
    print("| model | full run: verdict | full run: answers | sequential: verdict | rounds | units (templates) | answers asked | share of the full run |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for label, model in MODELS.items():
        name = label.split(" (")[0].replace(" ", "-")
        full = kobbq_run(model, name=name, out_dir=root / name / "full")
        full_verdict = culturebias.check(policy, root / name / "full")
        rounds = ScriptedRounds(root / name / "sequential", model, name=name)
        try:
            verdict = sequential_check(SequentialRequest(policy=policy, out=root / name / "sequential"), rounds,
                                       RegistryCatalog())
        finally:
            rounds.close()
        block = verdict.sequential
        assert block is not None
        answers = full.summary.counts.answers
        print(f"| {label} | {full_verdict.outcome.upper()} | {answers:,} | {verdict.outcome.upper()} | {len(block.rounds)} | "
              f"{block.rounds[-1].units} | {rounds.asked:,} | {rounds.asked / answers:.1%} |")


if __name__ == "__main__":
    main()
