"""``culturebias run kobbq,cbbq,libra``: several benchmarks in one call, one model load, one subfolder each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

import culturebias  # noqa: E402
from culturebias.bootstrap.cli import main  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402

# Keys only some benchmarks have: each goes to those that have it.
QUICK = [
    "protocol.mode=likelihood",  # kobbq and cbbq
    "protocol.prompts=1",  # kobbq
    "protocol.permutations=0",  # kobbq and cbbq
    "protocol.statistics=false",  # kobbq
    "protocol.embedder=bag-of-words",  # libra
    "protocol.definition_max_tokens=4",  # libra
]


@pytest.fixture
def model_loads(monkeypatch) -> list[str]:
    """Every causal model transformers loads during the test, by path."""
    from transformers import AutoModelForCausalLM

    loads: list[str] = []
    original = AutoModelForCausalLM.from_pretrained.__func__

    def counting(cls, path, *args, **kwargs):
        loads.append(str(path))
        return original(cls, path, *args, **kwargs)

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", classmethod(counting))
    return loads


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_three_benchmarks_share_one_model_load_and_write_one_folder_each(tmp_path, model_loads, capsys):
    model = cached_tiny_causal_lm()
    out = tmp_path / "runs"
    args = ["run", "kobbq,cbbq,libra", "--out", str(out), "--limit", "2", "--set", f"model.path={model}"]
    for assignment in [*QUICK, "protocol.libra.limit=3", "run.progress=never"]:
        args += ["--set", assignment]
    assert main(args) == 0, capsys.readouterr().err
    assert len(model_loads) == 1, model_loads
    printed = capsys.readouterr().out
    for name in ("kobbq", "cbbq", "libra"):
        assert f"summary: {out / name / 'summary.json'}" in printed
        assert (out / name / "report.md").is_file()
        assert "A limited run: not comparable to a full one." in (out / name / "report.md").read_text(encoding="utf-8")
    kobbq, cbbq, libra = (read(out / name / "summary.json") for name in ("kobbq", "cbbq", "libra"))
    assert kobbq["limit"]["n"] == 2 and kobbq["counts"]["items"] == 2 and kobbq["metrics"]["prompts"] == ["1"]
    assert cbbq["limit"]["n"] == 2 and cbbq["counts"]["ambiguous_items"] == 2 * len(cbbq["metrics"]["by_category"])
    assert libra["limit"]["n"] == 3 and libra["counts"]["triplets"] == 3  # protocol.libra.limit wins over --limit
    # Each run records only the options that applied to it, as a run of it alone would.
    assert kobbq["config"]["protocol"] == {
        "limit": 2, "mode": "likelihood", "prompts": "1", "permutations": "0", "statistics": "false"
    }  # fmt: skip
    assert cbbq["config"]["protocol"] == {"limit": 2, "mode": "likelihood", "permutations": "0"}
    assert libra["config"]["protocol"] == {"limit": "3", "embedder": "bag-of-words", "definition_max_tokens": "4"}
    scorers = {s["model"]["scorer"]["model"] for s in (kobbq, cbbq, libra)}
    assert len(scorers) == 1


def test_the_api_runs_several_benchmarks_on_one_model(tmp_path, model_loads):
    from culturebias.domain.cbbq.options import CBBQOptions

    model = cached_tiny_causal_lm()
    summaries = culturebias.evaluate_many(
        ["cbbq", "libra"],
        model={"path": str(model)},
        options={
            "limit": 1,
            "cbbq": CBBQOptions(mode="likelihood", categories=["gender"], limit=1),
            "libra": {"knowledge_boundary": "off"},
        },
        out=tmp_path,
    )
    assert list(summaries) == ["cbbq", "libra"] and len(model_loads) == 1
    assert summaries["cbbq"].counts.items == 2 and summaries["libra"].counts.triplets == 1
    assert summaries["libra"].limit.n == 1 and (tmp_path / "libra" / "summary.json").is_file()
    assert culturebias.load_summary(tmp_path / "cbbq").run_id == summaries["cbbq"].run_id


def test_bad_settings_or_data_of_any_benchmark_stop_the_call_before_anything_runs(tmp_path, model_loads, capsys):
    out = tmp_path / "runs"
    quick = ["--limit", "1", "--set", f"model.path={cached_tiny_causal_lm()}"]  # were a check missed, nothing runs long
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "triplets.jsonl").write_text('{"id": "x"}\n', encoding="utf-8")
    cases = [
        (["--set", "protocol.nonsense=1"], 2, "unknown setting 'protocol.nonsense' for any of the benchmarks kobbq, libra"),
        (["--set", "protocol.kobbq.limt=1"], 2, "did you mean 'protocol.kobbq.limit'?"),
        (["--set", "protocol.libra.alpha=2"], 2, "protocol settings for libra"),
        (["--set", "data.path=/nowhere"], 2, "set data.kobbq.path instead"),
        (["--set", "data.libra.path=/nowhere"], 3, "/nowhere"),
        (["--set", f"data.libra.path={tmp_path / 'bad'}"], 3, "row 1"),  # malformed, found before kobbq runs
    ]
    for extra, code, message in cases:
        assert main(["run", "kobbq,libra", "--out", str(out), *quick, *extra]) == code, extra
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
    assert main(["run", "kobbq,libar", "--out", str(out), *quick]) == 2
    assert "did you mean 'libra'?" in capsys.readouterr().err
    assert main(["run", "kobbq,twbias", "--out", str(out), *quick]) == 3  # twbias has no data: found before kobbq runs
    assert "TWBias data is not bundled" in capsys.readouterr().err
    assert not out.exists() and model_loads == []
