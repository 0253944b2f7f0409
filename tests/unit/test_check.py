"""``culturebias check`` and ``culturebias.check``: policies in files, runs, exit codes, what is written, bad input."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

import culturebias
from culturebias.adapters.policy.gherkin import parse_gherkin_policy
from culturebias.adapters.policy.toml_policy import parse_toml_policy
from culturebias.testing.scripted import ScriptedGenerator
from culturebias.bootstrap.cli import main
from culturebias.domain.errors import PolicyError
from culturebias.domain.policy.verdict import PolicyVerdict, verdict_schema
from culturebias.testing.context import run_with_fakes
from culturebias.testing.policy_runs import replayed_runs

GATE = """\
name = "Korean deployment gate"

[[criterion]]
name = "ambiguous diff-bias"
benchmark = "kobbq"
metric = "diff_bias_amb"
at_most = 0.05
confidence = 0.95

[[criterion]]
name = "no worse than the last release"
benchmark = "kobbq"
metric = "diff_bias_amb"
not_worse_than_baseline_by = 0.02
"""

FEATURE = """\
Feature: Korean deployment gate
  Scenario: stereotyped answers in ambiguous contexts
    Given the kobbq run in "runs/v2"
    Then its diff_bias_amb is at most 0.05 with 95% confidence
    And it is not worse than the kobbq run in "runs/v1" by more than 0.02
"""


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, Path]:
    return replayed_runs(tmp_path_factory.mktemp("policy-runs"))


@pytest.fixture
def gate(tmp_path) -> Path:
    path = tmp_path / "gate.toml"
    path.write_text(GATE, encoding="utf-8")
    return path


def policy_file(tmp_path: Path, text: str, name: str = "policy.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- the two forms -------------------------------------------------------------------------------
def test_the_toml_and_gherkin_forms_of_the_issue_read_as_the_same_criteria():
    toml = parse_toml_policy(GATE, "gate.toml")
    feature = parse_gherkin_policy(FEATURE, "gate.feature")
    assert toml.name == feature.name == "Korean deployment gate"
    pairs = list(zip(toml.criteria, feature.criteria))
    assert len(pairs) == 2
    for ours, theirs in pairs:
        assert (ours.benchmark, ours.metric, ours.at_most, ours.not_worse_than_baseline_by, ours.confidence) == (
            theirs.benchmark, theirs.metric, theirs.at_most, theirs.not_worse_than_baseline_by, theirs.confidence)
    assert feature.criteria[0].run == "runs/v2" and feature.criteria[1].baseline == "runs/v1"
    assert feature.criteria[0].source == "gate.feature:4" and toml.criteria[1].source == "gate.toml:10"
    assert feature.criteria[1].name == (
        "stereotyped answers in ambiguous contexts: it is not worse than the kobbq run in \"runs/v1\" by more than 0.02")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[[criterion]]\nname = 'a'\nbenchmark = 'kobbq'\nmetric = \n", "line 4: not valid TOML"),
        ("[[criterion]]\nname = 'a'\nbenchmark = 'kobbq'\nmetric = 'x'\nat_mots = 1\n",
         "line 5: criterion 1 ('a'): unknown key 'at_mots'; expected one of: name, benchmark, metric, breakdown, at_most"),
        ("[[criterion]]\nname = 'a'\nbenchmark = 'kobbq'\nat_most = 1\n", "line 1: criterion 1 ('a'): the key 'metric' is missing"),
        ("[[criterion]]\nname = 'a'\nbenchmark = 'kobbq'\nmetric = 'x'\nat_most = 1\n\n[[criterion]]\nname = 'b'\n"
         "benchmark = 'kobbq'\nmetric = 'x'\nat_most = 1\nconfidence = 'high'\n", "line 12: criterion 2 ('b'): confidence"),
        ("[[criterion]]\nname = 'a'\nbenchmark = 'kobbq'\nmetric = 'x'\n", "line 1: criterion 1 ('a'): give exactly one of"),
        ("title = 'x'\n", "line 1: unknown key 'title'"),
        ("name = 'x'\n", "no criterion: expected one or more [[criterion]] tables"),
    ],
)
def test_a_malformed_toml_policy_names_file_line_and_what_was_expected(text, words):
    with pytest.raises(PolicyError) as caught:
        parse_toml_policy(text, "p.toml")
    assert str(caught.value).startswith("file p.toml: ") and words in str(caught.value)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Feature: g\n  Scenario: s\n    Given the kobbq run\n    Then its diff_bias_amb is at mots 0.05\n",
         "line 4: unknown step 'its diff_bias_amb is at mots 0.05'; the nearest known step is "
         "'its {metric} is at most {x} [with {p}% confidence | on the point estimate]'"),
        ("Feature: g\n  Scenario Outline: s\n", "line 2: a scenario outline (write one Scenario per case) is not supported"),
        ("Feature: g\n  Scenario: s\n    Then its diff_bias_amb is at most 0.05\n", "line 3: no run named yet"),
        ("Feature: g\n  Scenario: s\n    Given the kobbq run\n    When it rains\n", "line 4: a policy has no When steps"),
        ("Feature: g\n  Scenario: s\n    Then the kobbq run\n", "line 3: 'the kobbq run' is a Given step, not a Then step"),
        ("Feature: g\n  Scenario: s\n    Given the kobbq run\n    Then its x is at most 1\n      \"\"\"\n",
         "line 5: doc strings and data tables are not supported"),
        ("Scenario: s\n", "line 1: expected 'Feature: NAME' first"),
        ("Feature: g\n  Scenario: s\n    Given the kobbq run\n", "line 2: scenario 's' states no criterion"),
        ("Feature: g\n  Scenario: s\n    Given the kobbq run\n    Then it is not worse than the baseline by more than 1\n",
         "line 4: 'it' is the metric of the step before"),
        ("Feature: g\n  Scenario: s\n    Given the kobbq run\n    Then its d is between 0.5 and 0.1\n", "line 4: between"),
    ],
)
def test_a_malformed_gherkin_policy_names_file_line_and_the_nearest_step(text, words):
    with pytest.raises(PolicyError) as caught:
        parse_gherkin_policy(text, "p.feature")
    assert str(caught.value).startswith("file p.feature: ") and words in str(caught.value)


def test_a_background_gives_every_scenario_its_run_and_tags_and_comments_are_skipped():
    policy = parse_gherkin_policy(
        "# a comment\n@release\nFeature: g\n  Free text about the gate.\n  Background:\n    Given the kobbq run\n"
        "    And limited runs are allowed\n  Scenario: a\n    Then its acc_amb is at least 0.9 on the point estimate\n"
        "  Example: b\n    * its diff_bias_amb in category \"age\" is between -0.1 and 0.1 with 99% confidence\n",
        "g.feature",
    )
    a, b = policy.criteria
    assert (a.name, a.at_least, a.confidence, a.allow_limited, a.run) == ("a", 0.9, "point", True, None)
    assert (b.name, b.between, b.breakdown, b.confidence) == ("b", (-0.1, 0.1), "category:age", 0.99)


# -- checking runs -------------------------------------------------------------------------------
def test_the_api_returns_the_typed_verdict_and_writes_json_and_junit(runs, gate, tmp_path):
    verdict = culturebias.check(gate, runs["guesser"], baseline=runs["abstainer"],
                                junit=tmp_path / "out" / "gate.xml", json=tmp_path / "out" / "verdict.json")
    assert isinstance(verdict, PolicyVerdict) and verdict.outcome == "pass" and verdict.exit_code() == 0
    first, second = verdict.criteria
    assert first.estimate == "value" and first.interval is not None and first.n == 269 and first.unit == "template"
    assert first.value == pytest.approx(-0.0043859649)
    assert second.estimate == "difference" and second.baseline_run_id == verdict.runs[1].run_id
    assert [r.role for r in verdict.runs] == ["run", "baseline"]
    payload = json.loads((tmp_path / "out" / "verdict.json").read_text(encoding="utf-8"))
    jsonschema.validate(payload, verdict_schema())
    assert PolicyVerdict.model_validate(payload) == verdict
    suite = ET.parse(tmp_path / "out" / "gate.xml").getroot()
    assert suite.get("tests") == "2" and suite.get("failures") == "0"
    assert [c.get("name") for c in suite.iter("testcase")] == ["ambiguous diff-bias", "no worse than the last release"]


def test_cli_exit_codes_and_junit_failures_carry_the_reason(runs, gate, tmp_path, capsys):
    assert main(["check", str(gate), "--run", str(runs["abstainer"]), "--baseline", str(runs["guesser"])]) == 0
    junit = tmp_path / "fail.xml"
    assert main(["check", str(gate), "--run", str(runs["stereotyper"]), "--baseline", str(runs["abstainer"]),
                 "--junit", str(junit)]) == 1
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    failure = cases[0].find("failure")
    assert failure is not None and failure.get("message").startswith(
        "diff-bias in ambiguous contexts is 1 (95% interval 0.9801 to 1, n = 269 templates, Newcombe-paired)")  # issue 33.2
    assert "FAIL         ambiguous diff-bias: " in capsys.readouterr().out
    straddles = policy_file(tmp_path, GATE.replace("at_most = 0.05", "at_most = 0.0").split("\n\n[[criterion]]\nname = \"no")[0])
    args = ["check", str(straddles), "--run", str(runs["guesser"])]
    assert main(args) == 2
    assert main([*args, "--inconclusive", "fail", "--junit", str(junit)]) == 1
    assert ET.parse(junit).getroot().find("testsuite/testcase/failure").get("type") == "inconclusive"
    assert main([*args, "--inconclusive", "pass"]) == 0
    main([*args, "--junit", str(junit)])
    assert ET.parse(junit).getroot().find("testsuite/testcase/error").get("type") == "inconclusive"


def test_schema_verdict_prints_the_json_schema(capsys):
    assert main(["schema", "verdict"]) == 0
    assert json.loads(capsys.readouterr().out) == verdict_schema()


def test_the_steps_are_listed(capsys):
    assert main(["check", "--steps"]) == 0
    out = capsys.readouterr().out
    assert 'Given  the {benchmark} run in "{folder}"' in out and "it|its {metric} is not worse than the baseline" in out


@pytest.fixture(scope="session")
def cbbq_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cbbq") / "run"
    run_with_fakes("cbbq", options={"mode": "generate", "categories": "gender"}, out_dir=out,
                   generator=ScriptedGenerator(lambda request, rendered: "C"))
    return out


def bad(tmp_path: Path, argv: list[str], capsys) -> str:
    written = [tmp_path / "bad.xml", tmp_path / "bad.json"]
    code = main([*argv, "--junit", str(written[0]), "--json", str(written[1])])
    err = capsys.readouterr().err
    assert code == 3, err
    assert not any(p.exists() for p in written)  # nothing is written when the input is bad
    return err


def test_bad_input_is_exit_3_names_what_is_wrong_and_writes_nothing(runs, gate, tmp_path, capsys, cbbq_run):
    typo = policy_file(tmp_path, GATE.replace('metric = "diff_bias_amb"\nat_most', 'metric = "diff_bias"\nat_most'))
    err = bad(tmp_path, ["check", str(typo), "--run", str(runs["abstainer"])], capsys)
    assert "line 3, criterion 'ambiguous diff-bias': kobbq has no headline metric 'diff_bias'; did you mean 'diff_bias_" in err
    assert "(its headline metrics: acc_amb, acc_dis, diff_bias_amb, diff_bias_dis)" in err
    err = bad(tmp_path, ["check", str(gate), "--run", str(cbbq_run)], capsys)
    assert "needs a kobbq run; the runs given are: cbbq (" in err
    err = bad(tmp_path, ["check", str(gate), "--run", str(runs["abstainer"]), "--run", str(cbbq_run),
                         "--baseline", str(runs["guesser"])], capsys)
    assert "is a cbbq run, and no criterion of the policy reads cbbq (it reads kobbq)" in err
    err = bad(tmp_path, ["check", str(gate), "--run", str(runs["abstainer"]), "--run", str(runs["guesser"])], capsys)
    assert "two kobbq runs given" in err
    err = bad(tmp_path, ["check", str(gate), "--run", str(runs["abstainer"])], capsys)
    assert "give the baseline kobbq run (--baseline DIR)" in err
    err = bad(tmp_path, ["check", str(gate), "--run", str(runs["abstainer"]), "--baseline", str(cbbq_run)], capsys)
    assert "baseline refused" in err and "is a cbbq run (data " in err and "a kobbq run (data " in err
    err = bad(tmp_path, ["check", str(gate), "--run", str(runs["abstainer"]), "--baseline", str(runs["other-data"])], capsys)
    ours = culturebias.load_summary(runs["abstainer"]).data.fingerprint
    assert f"has data fingerprint {ours}, the baseline" in err and "0" * len(ours) in err
    err = bad(tmp_path, ["check", str(tmp_path / "nothing.toml"), "--run", str(runs["abstainer"])], capsys)
    assert "no such policy file" in err
    err = bad(tmp_path, ["check", str(gate), "--run", str(tmp_path / "no-run")], capsys)
    assert "no such run folder" in err


def test_breakdowns_are_read_from_the_per_category_block_or_listed(runs, tmp_path):
    text = ('[[criterion]]\nname = "age"\nbenchmark = "kobbq"\nmetric = "diff_bias_amb"\nbreakdown = "category:age"\n'
            'at_most = 0.05\nconfidence = "point"\n')
    verdict = culturebias.check(policy_file(tmp_path, text), runs["stereotyper"])
    assert verdict.criteria[0].outcome == "fail" and verdict.criteria[0].metric_label.endswith("(category:age)")
    assert verdict.criteria[0].value == 1.0
    on_interval = culturebias.check(policy_file(tmp_path, text.replace('"point"', "0.95")), runs["abstainer"])
    # a category block holds its own interval over its templates (schema 2.4): the criterion is judged on it; every
    # answer is 'unknown', so every resample agrees and the interval is Newcombe's over 21 templates, not "0 to 0"
    # (issue 33.2): it straddles 0.05
    assert on_interval.criteria[0].outcome == "inconclusive"
    assert "(category:age) is 0 (95% interval -0.1" in on_interval.criteria[0].reason
    assert "n = 21 templates, Newcombe-paired" in on_interval.criteria[0].reason
    with pytest.raises(PolicyError, match=r"keeps no breakdown 'category:agee' of diff_bias_amb; did you mean 'category:age'\? "
                                          r"\(its breakdowns: label:NC, label:ST, label:TM, category:age, "):
        culturebias.check(policy_file(tmp_path, text.replace("category:age", "category:agee")), runs["abstainer"])


def test_a_limited_run_is_inconclusive_unless_the_criterion_allows_it(runs, tmp_path):
    text = '[[criterion]]\nname = "d"\nbenchmark = "kobbq"\nmetric = "diff_bias_amb"\nat_most = 0.05\n'
    limited = culturebias.check(policy_file(tmp_path, text), runs["limited"])
    assert limited.criteria[0].outcome == "inconclusive"
    assert "is a limited run (--limit 400: the first 400 items of the samples file" in limited.criteria[0].reason
    assert limited.runs[0].limited.startswith("a limited run")
    allowed = culturebias.check(policy_file(tmp_path, text + "allow_limited = true\n"), runs["limited"])
    # every answer alike: the interval is Newcombe's over the run's templates, not "0 to 0" (issue 33.2)
    assert allowed.criteria[0].outcome == "inconclusive" and "Newcombe-paired): the interval straddles 0.05" in allowed.criteria[0].reason


def test_the_paired_test_needs_stored_items_and_says_so(runs, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(runs["abstainer"] / "summary.json", bare / "summary.json")
    text = '[[criterion]]\nname = "d"\nbenchmark = "kobbq"\nmetric = "acc_amb"\nnot_worse_than_baseline_by = 0.01\n'
    verdict = culturebias.check(policy_file(tmp_path, text), bare, baseline=runs["guesser"])
    assert verdict.criteria[0].outcome == "inconclusive"
    assert f"no paired test: the run {bare}: the run's item records are not at hand" in verdict.criteria[0].reason
    on_points = culturebias.check(policy_file(tmp_path, text + 'confidence = "point"\n'), bare, baseline=runs["guesser"])
    assert on_points.criteria[0].outcome == "pass" and "decided on the point estimates" in on_points.criteria[0].reason


def test_annotated_reports_open_with_the_verdict(runs, gate, tmp_path):
    folder = tmp_path / "v2"
    shutil.copytree(runs["abstainer"], folder)
    assert main(["check", str(gate), "--run", str(folder), "--baseline", str(runs["guesser"]), "--annotate-reports"]) == 0
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert page.index('id="verdict"') < page.index('id="headline"')  # the verdict first, then the headline card
    assert "Verdict of policy Korean deployment gate: PASS" in page and "no worse than the last release" in page


def test_a_comparison_of_checked_runs_opens_with_the_verdict_on_both_pages(runs, gate, tmp_path):
    folder = tmp_path / "v2"
    shutil.copytree(runs["abstainer"], folder)
    assert main(["check", str(gate), "--run", str(folder), "--baseline", str(runs["guesser"]), "--annotate-reports"]) == 0
    stored = PolicyVerdict.model_validate_json((folder / "verdict.json").read_text(encoding="utf-8"))
    assert stored.outcome == "pass"
    assert main(["compare", str(runs["guesser"]), str(folder), "--out", str(tmp_path / "cmp")]) == 0
    markdown = (tmp_path / "cmp" / "comparison.md").read_text(encoding="utf-8")
    html = (tmp_path / "cmp" / "comparison.html").read_text(encoding="utf-8")
    assert markdown.index("## Verdict of policy Korean deployment gate: PASS") < markdown.index("## Which model is more biased")
    assert markdown.split("\n\n")[1].startswith("## Verdict of policy")  # right under the title
    body = html[html.index("<h1>"):]
    assert body.index('<section class="verdict"><h2>Verdict of policy Korean deployment gate: PASS') < body.index('id="headline"')
    assert body.index("</h1>") < body.index('class="verdict"') < body.index("<h2>") + 30  # the page's first section
    for criterion in stored.criteria:  # each criterion, its run (and baseline) named as the comparison names them
        assert criterion.name in markdown and criterion.reason in markdown and criterion.name in html
    assert "against baseline guesser" in markdown and "against baseline guesser" in html


def test_compare_opens_with_a_verdict_file_and_says_nothing_of_a_policy_without_one(runs, gate, tmp_path, costly):
    verdict = tmp_path / "verdict.json"
    assert main(["check", str(gate), "--run", str(runs["abstainer"]), "--baseline", str(runs["guesser"]),
                 "--json", str(verdict)]) == 0
    assert main(["compare", str(runs["guesser"]), str(runs["abstainer"]), "--out", str(tmp_path / "plain")]) == 0
    assert "Verdict of policy" not in (tmp_path / "plain" / "comparison.md").read_text(encoding="utf-8")
    assert "Verdict of policy" not in (tmp_path / "plain" / "comparison.html").read_text(encoding="utf-8")
    culturebias.compare([runs["guesser"], runs["abstainer"]], out=tmp_path / "cmp", verdicts=[verdict])
    markdown = (tmp_path / "cmp" / "comparison.md").read_text(encoding="utf-8")
    assert markdown.split("\n\n")[1] == "## Verdict of policy Korean deployment gate: PASS"
    assert "| ambiguous diff-bias | abstainer | **PASS** |" in markdown


def test_check_runs_the_benchmarks_first_with_model(runs, tmp_path, capsys, costly):
    from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
    from culturebias.application.audit import stored_items

    store = SQLiteResultStore(runs["abstainer"] / "results.sqlite")
    try:
        run_id = store.find_runs()[0].run_id
        records = stored_items(store, run_id)
    finally:
        store.close()
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(
        json.dumps({"sample_id": r.metadata["sample_id"], "prompt_id": int(r.metadata["prompt_id"]),
                    "permutation": r.metadata["permutation"], "raw": r.answer}) + "\n"
        for r in records), encoding="utf-8")
    text = '[[criterion]]\nname = "d"\nbenchmark = "kobbq"\nmetric = "diff_bias_amb"\nat_most = 0.05\n'
    settings = ["--set", "model.backend=replay", "--set", "protocol.prompts=1,2", "--set", "protocol.permutations=0",
                "--set", "protocol.mode=generate", "--set", "protocol.statistics=false"]
    out = tmp_path / "out"
    code = main(["check", str(policy_file(tmp_path, text)), "--model", str(answers), "--out", str(out), *settings])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert f"written: {out / 'kobbq' / 'report.html'}" in printed
    page = (out / "kobbq" / "report.html").read_text(encoding="utf-8")
    assert page.index('id="verdict"') < page.index('id="headline"')  # the verdict first, then the headline card
