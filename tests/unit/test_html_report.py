"""report.html and comparison.html: self-contained, every number from the typed model, items behind the rows."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import pytest

from culturebias.adapters.reports.html.drilldown import CAP, Drill
from culturebias.adapters.reports.html.page import CSP
from culturebias.adapters.reports.html.run_report import run_page

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "integration"))
from test_bbq_report import cbbq_summary, kobbq_summary  # noqa: E402


def numbers(value):
    if isinstance(value, dict):
        for inner in value.values():
            yield from numbers(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from numbers(inner)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield value


def item(n: int, category: str, **extra) -> dict:
    return {
        "benchmark": "cbbq", "item_id": f"{category}-{n}", "prompt": f"question {n}", "answer": "A", "parsed": "A",
        "outcome": "biased", "metadata": {"category": category, "prompt_id": "1", **extra},
    }  # fmt: skip


def items_data(html: str) -> list[dict]:
    found = re.search(r'<script type="application/json" id="items-data">(.*?)</script>', html, re.S)
    assert found, "the page embeds the items its rows name"
    return json.loads(found.group(1))


def drill_rows(html: str) -> dict[str, tuple[int, str, list[int]]]:
    """row key → (items count on its button, the note of its drill row, the item positions it names)."""
    rows = {}
    pattern = (
        r'<tr><th scope="row">([^<]*)</th>(?:(?!</tr>).)*?<button class="dd"[^>]*aria-controls="([^"]+)">(\d+) items</button>'
        r'.*?<tr class="drill" id="\2" hidden><td[^>]*><p class="muted">([^<]*)</p><div class="items-slot" data-items="([^"]*)"'
    )
    for key, _, count, note, names in re.findall(pattern, html, re.S):
        rows[key] = (int(count), note, json.loads(names.replace("&quot;", '"')))
    return rows


def test_every_number_of_the_summary_is_on_the_page_exactly():
    summary = kobbq_summary()
    html = run_page(summary)
    for value in numbers(summary.metrics.model_dump(mode="json")):
        exact = repr(value) if isinstance(value, float) else str(value)
        assert f'data-v="{exact}"' in html, f"{value} is not on the page"
    assert "보기 중 답을 찾을 수 없음" in html and "a note" in html
    assert summary.run_id in html and summary.data.fingerprint in html


def test_the_page_is_self_contained_and_escapes_what_it_shows(tmp_path):
    summary = cbbq_summary()
    summary.notes = ['<script>alert("note")</script>']
    figure = tmp_path / "bbq_bias.png"
    figure.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    hostile = item(1, "gender") | {"prompt": '</script><img src=x onerror=alert(1)> & "quoted"'}
    html = run_page(summary, [figure], [hostile])
    assert f'content="{CSP}"' in html and "default-src 'none'" in CSP
    assert html.count("<script") == 2  # the item data and the page's own code, nothing injected
    assert '<script>alert("note")' not in html and "&lt;script&gt;alert(&quot;note&quot;)&lt;/script&gt;" in html
    assert "</script><img" not in html
    assert items_data(html)[0]["prompt"] == hostile["prompt"]  # the JSON still reads back unchanged
    assert 'src="data:image/png;base64,' in html and 'src="bbq_bias.png"' not in html
    assert html.count("url(") == html.count("url(data:font/woff;base64,")  # only the embedded font
    for fetching in ("http://", "https://", "<link", "@import", "src=\"//"):
        assert fetching not in html


def test_a_category_row_opens_the_items_behind_it_capped_and_counted():
    summary = cbbq_summary()
    summary.metrics.by_category["age"] = summary.metrics.by_category["gender"]
    items = [item(n, "age") for n in range(120)] + [item(n, "gender") for n in range(3)]
    html = run_page(summary, items=items)
    rows = drill_rows(html)
    assert rows["age"][0] == 120 and rows["age"][1] == f"showing the first {CAP} of 120 items"
    assert rows["gender"][0] == 3 and rows["gender"][1] == "all 3 items"
    data = items_data(html)
    assert len(rows["age"][2]) == CAP and {data[i]["metadata"]["category"] for i in rows["age"][2]} == {"age"}
    assert {data[i]["item_id"] for i in rows["gender"][2]} == {"gender-0", "gender-1", "gender-2"}
    assert len(data) == len({json.dumps(d, sort_keys=True) for d in data})  # an item is embedded once


def test_a_run_without_item_records_says_so_and_has_no_drill_down():
    html = run_page(cbbq_summary(), items=[])
    assert "This run kept no per-item records." in html and 'class="dd"' not in html


def test_drill_matching_prefers_the_named_dimension_and_skips_metric_names():
    records = [
        {"item_id": "a", "metadata": {"category": "1", "prompt_id": "2"}},
        {"item_id": "b", "metadata": {"category": "2", "prompt_id": "1"}},
    ]
    drill = Drill(records)
    assert [r["item_id"] for r in drill.matching("1", "by_category")] == ["a"]  # not b, whose prompt is "1"
    assert [r["item_id"] for r in drill.matching("1", "prompts")] == ["a", "b"]  # no "prompt" key: any value
    assert [r["item_id"] for r in drill.matching("2 / acc_amb", "by_category")] == ["b"]
    assert drill.matching("acc_amb", "overall") == []
    runs = Drill([{"run": "m1", **records[0]}], known=["m1", "m2"])
    assert runs.matching("m2 / 1") == [] and len(runs.matching("m1 / 1")) == 1


# -- written beside the Markdown by a run and by a comparison ---------------------------------
@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    pytest.importorskip("culturebias.domain.audit")
    import culturebias
    from culturebias.bootstrap.api import compare_runs
    from test_bbq_cli import kobbq_replay

    root = tmp_path_factory.mktemp("html")
    answers = kobbq_replay(root / "answers.jsonl", limit=12)
    model = {"backend": "replay", "path": str(answers)}
    culturebias.evaluate("kobbq", out=root / "a", model=model, options={"prompts": "1,2", "limit": 12})
    culturebias.evaluate("kobbq", out=root / "b", model=model, options={"prompts": "1,2", "limit": 12, "statistics": False})
    result = compare_runs([root / "a", root / "b"], out=root / "cmp")
    return root, result


def test_a_run_writes_report_html_beside_report_md_with_its_stored_items(replayed):
    import culturebias
    from culturebias.application.audit import stored_items
    from culturebias.bootstrap.api import open_store

    root, _ = replayed
    html = (root / "a" / "report.html").read_text(encoding="utf-8")
    assert (root / "a" / "report.md").is_file()
    summary = culturebias.load_summary(root / "a")
    store = open_store(root / "a")
    try:
        stored = {r.item_id: r for r in stored_items(store, summary.run_id)}
    finally:
        store.close()
    assert stored, "the run kept its items"
    data = items_data(html)
    assert data and all(d == stored[d["item_id"]].model_dump(mode="json") for d in data)
    rows = drill_rows(html)
    age = sum(1 for r in stored.values() if r.metadata.get("category") == "age")
    # the category's rows (one per metric of its block, "age / accuracy ambiguous") open its items
    age_rows = [row for key, row in rows.items() if key.split(" / ")[0] == "age"]
    assert age_rows and all(row[0] == age for row in age_rows)
    assert 'src="data:image/png;base64,' in html
    folder = json.loads((root / "a" / ".culturebias-outputs.json").read_text(encoding="utf-8"))
    assert "report.html" in json.dumps(folder)


def test_a_comparison_writes_comparison_html_with_each_runs_items(replayed):
    root, result = replayed
    path = root / "cmp" / "comparison.html"
    assert path in result.report_paths and (root / "cmp" / "comparison.md").is_file()
    html = path.read_text(encoding="utf-8")
    for run in result.comparison.runs:
        assert run.run_id in html and run.label in html
    data = items_data(html)
    assert {d["run"] for d in data} <= {run.label for run in result.comparison.runs}
    assert drill_rows(html), "a row keyed by a model opens that run's items"
    # the runs' records are at hand: every pair is a paired test (the same answers: no difference, p = 1)
    pairs = result.comparison.headline_pairs
    assert len(pairs) == len(result.comparison.headline_metrics) and all(p.p_value == 1.0 for p in pairs)
    assert all(p.difference == 0 and p.n and p.unit == "template" for p in pairs)
    assert "do not differ significantly" in html and "paired over" in html
    for value in numbers(result.comparison.body.model_dump(mode="json")):
        if isinstance(value, float) and math.isfinite(value):
            assert f'data-v="{value!r}"' in html


def test_a_long_table_embeds_fewer_items_per_row_and_says_so():
    from culturebias.adapters.reports.html.drilldown import MIN_CAP, TABLE_BUDGET
    from culturebias.adapters.reports.html.tree import records_table

    templates = [f"t-{n:03d}" for n in range(300)]
    drill = Drill([item(k, "age", template_id=t) for t in templates for k in range(12)])
    html = records_table("template_scores", [(t, {"acc": 0.5}) for t in templates], drill)
    rows = drill_rows(html)
    per_row = max(MIN_CAP, TABLE_BUDGET // len(templates))
    assert len(rows) == 300 and all(count == 12 and len(names) == per_row for count, _, names in rows.values())
    assert rows["t-000"][1] == f"showing the first {per_row} of 12 items"
