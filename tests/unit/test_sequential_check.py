"""check --sequential: scripted KoBBQ models decided in nested stratified rounds, against their full runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import culturebias
from culturebias.application.sequential_check import SequentialRequest, sequential_check
from culturebias.bootstrap.check import RegistryCatalog, load_policy
from culturebias.bootstrap.cli import main
from culturebias.domain.errors import PolicyError
from culturebias.domain.kobbq.strata import STRATA
from culturebias.domain.stratified import draw_sample
from culturebias.testing.kobbq_runs import bundled_kobbq, kobbq_run
from culturebias.testing.policy_runs import replayed_runs
from culturebias.testing.sequential_runs import ScriptedRounds, mostly_unknown

GATE = ('name = "Korean gate"\n[[criterion]]\nname = "ambiguous diff-bias"\nbenchmark = "kobbq"\n'
        'metric = "diff_bias_amb"\nbetween = [-0.2, 0.2]\n')


@pytest.fixture(scope="module")
def runs(tmp_path_factory, costly) -> dict[str, Path]:  # whole replayed full runs: the slow tier
    return replayed_runs(tmp_path_factory.mktemp("policy-runs"))


def gate(tmp_path: Path, text: str = GATE) -> Path:
    path = tmp_path / "gate.toml"
    path.write_text(text, encoding="utf-8")
    return path


def sequential(tmp_path: Path, model, **runner) -> tuple[culturebias.PolicyVerdict, ScriptedRounds]:
    out = tmp_path / "seq"
    rounds = ScriptedRounds(out, model, **runner)
    try:
        verdict = sequential_check(SequentialRequest(policy=load_policy(gate(tmp_path)), out=out), rounds, RegistryCatalog())
    finally:
        rounds.close()
    return verdict, rounds


def full_answers(run: Path) -> int:
    return culturebias.load_summary(run).counts.answers


@pytest.mark.parametrize("model, full, expected", [("biased", "stereotyper", "fail"), ("unknown", "abstainer", "pass")])
def test_a_clear_model_is_decided_with_at_most_a_quarter_of_the_answers_as_its_full_run_is(
        model, full, expected, runs, tmp_path):
    verdict, rounds = sequential(tmp_path, model)
    full_verdict = culturebias.check(gate(tmp_path), runs[full])
    assert verdict.outcome == expected == full_verdict.outcome
    block = verdict.sequential
    assert block is not None and block.stopped_early and block.criteria[0].decided_in_round == len(block.rounds)
    assert block.answers_used <= full_answers(runs[full]) / 4
    assert block.answers_full_run == full_answers(runs[full])  # estimated from the sample's share: exact here
    assert rounds.asked == block.answers_used  # no answer asked twice across rounds
    assert [r.answers for r in block.rounds] == sorted(r.answers for r in block.rounds)
    assert "confidence sequence" in verdict.criteria[0].reason and "anytime-valid" in verdict.criteria[0].reason
    last = json.loads((Path(block.rounds[-1].where) / "summary.json").read_text(encoding="utf-8"))
    assert last["sequential"]["stopped_early"] is True and last["sequential"]["items_used"] == block.items_used
    assert last["sample"]["n"] == block.items_used < last["sample"]["population"]


def test_a_clearly_unbiased_model_with_spread_passes_as_its_full_run_does(tmp_path, costly):
    verdict, rounds = sequential(tmp_path, mostly_unknown, name="mostly-unknown")
    full = kobbq_run(mostly_unknown, name="mostly-unknown", out_dir=tmp_path / "full")
    assert verdict.outcome == "pass" == culturebias.check(gate(tmp_path), tmp_path / "full").outcome
    assert verdict.sequential is not None and verdict.sequential.answers_used <= full.summary.counts.answers / 4


def test_a_criterion_no_sample_can_decide_runs_to_the_full_data(tmp_path, costly):
    # a threshold at the model's own value: the sequence straddles it at every round, so the data run out
    text = GATE.replace("between = [-0.2, 0.2]", "at_least = 1.0")
    out = tmp_path / "seq"
    rounds = ScriptedRounds(out, "biased")
    try:
        verdict = sequential_check(SequentialRequest(policy=load_policy(gate(tmp_path, text)), out=out), rounds,
                                   RegistryCatalog())
    finally:
        rounds.close()
    block = verdict.sequential
    assert block is not None and not block.stopped_early
    assert block.items_used == block.items_in_data == len(bundled_kobbq().items)
    assert verdict.outcome == "inconclusive" and rounds.asked == block.answers_used == block.answers_full_run


def test_a_killed_round_resumes_without_asking_again(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        sequential(tmp_path, "unknown", fail_after=400)  # round 1 (336 answers) done, round 2 killed
    verdict, again = sequential(tmp_path, "unknown")
    block = verdict.sequential
    assert verdict.outcome == "pass" and block is not None
    assert again.asked == block.answers_used - block.rounds[0].answers  # round 1's answers come from the store


def test_nested_rounds_hold_the_earlier_rounds():
    items = bundled_kobbq().items
    smaller, block = draw_sample(items, 1, 3, STRATA)
    larger, _ = draw_sample(items, 400, 3, STRATA)
    assert block.units == len(block.strata) and {i.sample_id for i in smaller} < {i.sample_id for i in larger}


def bad(tmp_path: Path, argv: list[str], capsys) -> str:
    written = [tmp_path / "bad.xml", tmp_path / "bad.json", tmp_path / "out"]
    code = main([*argv, "--junit", str(written[0]), "--json", str(written[1])])
    err = capsys.readouterr().err
    assert code == 3, err
    assert not any(p.exists() for p in written)  # nothing written, no round run
    assert len(err.strip().splitlines()) == 1
    return err


def test_what_no_round_can_decide_is_exit_3_before_any_request(tmp_path, capsys):
    model = ["--sequential", "--model", "scripted", "--out", str(tmp_path / "out")]
    point = gate(tmp_path, GATE + 'confidence = "point"\n')
    assert "decides on the point estimate" in bad(tmp_path, ["check", str(point), *model], capsys)
    baseline = gate(tmp_path, GATE.replace("between = [-0.2, 0.2]", "not_worse_than_baseline_by = 0.1"))
    assert "threshold criteria only" in bad(tmp_path, ["check", str(baseline), *model], capsys)
    twbias = gate(tmp_path, GATE.replace('"kobbq"', '"twbias"').replace('"diff_bias_amb"', '"bias_ratio"'))
    err = bad(tmp_path, ["check", str(twbias), *model], capsys)
    assert "cannot run in rounds" in err or "no headline metric" in err
    assert "give --model MODEL and --out DIR" in bad(tmp_path, ["check", str(gate(tmp_path)), "--sequential"], capsys)
    assert "--limit" in bad(tmp_path, ["check", str(gate(tmp_path)), *model, "--limit", "10"], capsys)


def test_the_cli_runs_a_replayed_model_in_rounds(runs, tmp_path, capsys):
    from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
    from culturebias.application.audit import stored_items

    store = SQLiteResultStore(runs["stereotyper"] / "results.sqlite")
    try:
        records = stored_items(store, store.find_runs()[0].run_id)
    finally:
        store.close()
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(
        json.dumps({"sample_id": r.metadata["sample_id"], "prompt_id": int(r.metadata["prompt_id"]),
                    "permutation": r.metadata["permutation"], "raw": r.answer}) + "\n" for r in records), encoding="utf-8")
    settings = ["--set", "model.backend=replay", "--set", "protocol.prompts=1,2", "--set", "protocol.permutations=0",
                "--set", "protocol.mode=generate", "--set", "protocol.statistics=false", "--set", "run.progress=false"]
    out = tmp_path / "out"
    code = main(["check", str(gate(tmp_path)), "--sequential", "--model", str(answers), "--out", str(out), *settings])
    printed = capsys.readouterr().out
    assert code == 1, printed
    assert "sequential: 1 round(s), 336 of about 4560 answers of the full run; stopped early" in printed
    verdict = json.loads((out / "verdict.json").read_text(encoding="utf-8"))
    assert verdict["sequential"]["rounds"][0]["where"] == str(out / "round-1" / "kobbq")
    assert (out / "results.sqlite").is_file() and (out / "round-1" / "kobbq" / "summary.json").is_file()


def test_policy_error_before_any_round(tmp_path):
    rounds = ScriptedRounds(tmp_path / "seq", "biased")
    try:
        with pytest.raises(PolicyError, match="point estimate"):
            sequential_check(SequentialRequest(policy=load_policy(gate(tmp_path, GATE + 'confidence = "point"\n')),
                                               out=tmp_path / "seq"), rounds, RegistryCatalog())
    finally:
        rounds.close()
    assert rounds.rounds == [] and rounds.asked == 0
