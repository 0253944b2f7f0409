"""``culturebias cbbq counts | review-export | review-import`` on the command line (issue 36.3)."""

from __future__ import annotations

import csv
import json

from culturebias.adapters.cbbq.files import CBBQFiles
from culturebias.bootstrap.cli import main


def test_counts_set_the_data_beside_table4_without_a_model(capsys, costly):
    assert main(["cbbq", "counts", "--format", "json"]) == 0
    rows = {r["category"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["gender"] == {"category": "gender", "in_data": 3372, "paper": 3078, "difference": 294}
    assert rows["sexual_orientation"]["difference"] == 0
    assert main(["cbbq", "counts"]) == 0
    assert "region                          4352     3660    +692" in capsys.readouterr().out


def test_a_q_explain_run_is_exported_for_review_and_its_verdicts_imported(tmp_path, capsys, costly):
    items = [i for i in CBBQFiles(None).load().items if i.category == "disease"]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(
        json.dumps({"sample_id": i.sample_id, "prompt_id": "q_explain", "permutation": 0, "raw": "C\n解释：材料没有说明。"},
                   ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    out = tmp_path / "run"
    settings = ["model.backend=replay", f"model.path={answers}", "protocol.condition=q_explain", "protocol.mode=generate",
                "protocol.categories=disease", "protocol.limit=2", "run.progress=false"]
    code = main(["run", "cbbq", "--out", str(out), *[a for s in settings for a in ("--set", s)]])
    assert code == 0, capsys.readouterr().err
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "the data against the paper&#x27;s Table 4" in page or "the data against the paper's Table 4" in page
    review = tmp_path / "review.csv"
    assert main(["cbbq", "review-export", str(out), "--out", str(review)]) == 0
    assert "explained answer(s) written" in capsys.readouterr().out
    with review.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and all(r["explanation"] == "材料没有说明。" and r["verdict"] == "" for r in rows)
    for row in rows:
        row["verdict"] = "grounded"
    rows[-1]["verdict"] = "out-of-range"
    with review.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    shares = tmp_path / "shares.json"
    assert main(["cbbq", "review-import", str(out), str(review), "--out", str(shares)]) == 3  # a data error
    err = capsys.readouterr().err
    assert str(review) in err and f"row {len(rows) + 1}" in err and "verdict" in err and not shares.exists()
    rows[-1]["verdict"] = "stereotype"
    with review.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert main(["cbbq", "review-import", str(out), str(review), "--out", str(shares)]) == 0
    printed = capsys.readouterr().out
    assert f"reviewed {len(rows)} of {len(rows)}" in printed and "stereotype" in printed
    assert json.loads(shares.read_text(encoding="utf-8"))["counts"]["stereotype"] == 1
