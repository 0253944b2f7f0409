"""A headline that cannot be read is null with its reason, and shown as "not measured": never a score, never a bar at 0."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import culturebias

sys.path.insert(0, str(Path(__file__).parent))
from test_bbq_cli import kobbq_replay  # noqa: E402

from culturebias.adapters.kobbq.files import KoBBQFiles  # noqa: E402

OPTIONS = {"prompts": "1,2", "limit": 4}


def echoing_replay(path: Path, limit: int = 4) -> Path:
    """What the embedded 135M model answered: the context echoed back, never an option."""
    with path.open("w", encoding="utf-8") as handle:
        for item in KoBBQFiles(None).load().items[:limit]:
            for prompt in ("1", "2"):
                for k in (0, 1, 2):
                    raw = "맥락: " + item.context[:12] + "\ufffd"
                    handle.write(json.dumps({"sample_id": item.sample_id, "prompt_id": int(prompt), "permutation": k, "raw": raw}, ensure_ascii=False) + "\n")
    return path


def run(tmp_path: Path, name: str, answers: Path, limit: int = 4) -> Path:
    out = tmp_path / name
    options = {**OPTIONS, "limit": limit}
    culturebias.evaluate("kobbq", model={"backend": "replay", "path": str(answers)}, options=options, out=out)
    return out


def test_every_answer_out_of_choice_is_null_with_the_reason_in_summary_report_and_leaderboard(tmp_path):
    out = run(tmp_path, "echo", echoing_replay(tmp_path / "echo.jsonl"))
    summary = culturebias.load_summary(out)
    assert summary.not_measured == (
        "every answer was out of choice (24 of 24): the model never named an option, so accuracy and bias are undefined"
    )
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["not_measured"] == summary.not_measured
    assert summary.metrics.overall.diff_bias_amb.mean is None  # type: ignore[attr-defined]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "> **Not measured.** every answer was out of choice (24 of 24)" in report
    assert "Not measured: every answer was out of choice (24 of 24)" in (out / "report.html").read_text(encoding="utf-8")
    [row] = culturebias.leaderboard(out)
    assert row.not_measured == summary.not_measured and "not measured: every answer was out of choice" in row.text()


def test_a_readable_run_says_it_was_measured(tmp_path):
    # 12 questions: enough answers for the validity rules (PROTOCOLS §6: >= 30 answers, >= 10 questions in every order)
    out = run(tmp_path, "biased", kobbq_replay(tmp_path / "biased.jsonl", limit=12), limit=12)
    summary = culturebias.load_summary(out)
    assert summary.not_measured is None and summary.metrics.overall.diff_bias_amb.mean is not None  # type: ignore[attr-defined]
    assert "Not measured" not in (out / "report.md").read_text(encoding="utf-8")


def test_compare_shows_an_unmeasured_run_as_not_measured_never_as_a_bar_at_zero(tmp_path):
    echo = run(tmp_path, "echo", echoing_replay(tmp_path / "echo.jsonl"))
    biased = run(tmp_path, "biased", kobbq_replay(tmp_path / "biased.jsonl", limit=4))
    comparison = culturebias.compare([echo, biased], out=tmp_path / "cmp", allow_data_mismatch=False)
    unmeasured = {run.run_id: run.not_measured for run in comparison.runs}
    echo_id = culturebias.load_summary(echo).run_id
    assert unmeasured[echo_id] is not None and "every answer was out of choice" in unmeasured[echo_id]
    assert [v for k, v in unmeasured.items() if k != echo_id] == [None]
    assert comparison.schema_version == "1.3" and any("was not measured" in note for note in comparison.notes)
    markdown = (tmp_path / "cmp" / "comparison.md").read_text(encoding="utf-8")
    assert ": not measured.** every answer was out of choice" in markdown and "never a bar at 0" in markdown
    assert "| **not measured**: every answer was out of choice" in markdown
    html = (tmp_path / "cmp" / "comparison.html").read_text(encoding="utf-8")
    assert "not measured: every answer was out of choice" in html


def test_the_bars_of_an_unmeasured_run_are_not_drawn_and_say_not_measured(tmp_path, monkeypatch):
    import matplotlib.axes

    from culturebias.adapters.reports.comparison_figures import grouped_bars
    from culturebias.domain.uncertainty.interval import Interval

    written: list[str] = []
    heights: list[float] = []
    annotate, bar = matplotlib.axes.Axes.annotate, matplotlib.axes.Axes.bar
    monkeypatch.setattr(matplotlib.axes.Axes, "annotate", lambda ax, text, *a, **k: (written.append(text), annotate(ax, text, *a, **k))[1])
    monkeypatch.setattr(matplotlib.axes.Axes, "bar", lambda ax, xs, h, *a, **k: (heights.extend(h), bar(ax, xs, h, *a, **k))[1])
    ci = Interval(low=0.1, high=0.3, level=0.95, n=2, unit="template", method="BCa", resamples=10, seed=0)
    grouped_bars(
        tmp_path / "bars.png", ["amb", "dis"], {"echo": [None, None], "biased": [0.2, 0.0]}, "t", "y",
        intervals={"echo": [ci, ci], "biased": [ci, ci]}, not_measured={"echo": "every answer was out of choice"},
    )  # fmt: skip
    assert written.count("not measured") == 2 and written.count("n=2") == 2  # n only above the drawn bars
    assert "0" in written  # a measured zero stays a visible zero
    assert [h != h for h in heights] == [True, True, False, False]  # the unmeasured run's bars have no height (NaN)
