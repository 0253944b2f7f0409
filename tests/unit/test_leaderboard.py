"""``culturebias runs`` / ``culturebias.leaderboard``: model, benchmark, status, headline metrics and why a run failed."""

from __future__ import annotations

import json

import pytest

import culturebias
from culturebias.testing.scripted import ScriptedGenerator
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.bootstrap.api import benchmarks
from culturebias.bootstrap.cli import main
from culturebias.bootstrap.registry import registry
from culturebias.domain.leaderboard import headline as headline_of


def headline(summary):
    return headline_of(summary, registry().benchmark(summary.benchmark).headline_metrics())
from culturebias.testing.context import run_with_fakes
from culturebias.testing.kobbq_runs import kobbq_run

SMALL = {"limit": 200}


def broken_reply(request, rendered):
    raise RuntimeError("the model went away")


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "results.sqlite"
    store = SQLiteResultStore(path)
    try:
        biased = kobbq_run("biased", name="stereotyper", store=store, options=SMALL)
        cbbq = run_with_fakes(
            "cbbq",
            options={"mode": "generate", "categories": "gender"},
            store=store,
            generator=ScriptedGenerator(lambda request, rendered: "C", name="always-c"),
        )
        with pytest.raises(RuntimeError):
            run_with_fakes(
                "kobbq",
                options={"mode": "generate", "prompts": "1", "permutations": "0", **SMALL},
                store=store,
                generator=ScriptedGenerator(broken_reply, name="broken"),
            )
    finally:
        store.close()
    return path, biased.summary, cbbq.summary


def test_every_registered_benchmark_has_a_headline():
    assert all(d.headline_metrics() for d in benchmarks())


def test_rows_carry_model_benchmark_status_headline_and_failure(store_path):
    path, biased, cbbq = store_path
    rows = culturebias.leaderboard(path)
    assert [(r.benchmark, r.status) for r in rows] == [("kobbq", "finished"), ("cbbq", "finished"), ("kobbq", "failed")]
    kobbq_row, cbbq_row, failed = rows
    assert (kobbq_row.run_id, kobbq_row.model, kobbq_row.backend) == (biased.run_id, "stereotyper", "scripted")
    assert kobbq_row.headline == headline(biased)
    assert kobbq_row.headline["acc_amb"] == 0.0 and kobbq_row.headline["diff_bias_amb"] == 1.0
    assert set(kobbq_row.headline) == {"acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis"}
    assert cbbq_row.model == "always-c" and set(cbbq_row.headline) == {"s_amb", "s_dis", "s_total"}
    assert cbbq_row.headline["s_total"] == cbbq.metrics.overall.s_total
    assert failed.headline == {} and "RuntimeError: the model went away" in (failed.failure or "")
    assert culturebias.leaderboard(path, "cbbq") == [cbbq_row]


def test_cli_runs_lists_the_leaderboard_as_text_and_json(store_path, capsys):
    path, biased, _ = store_path
    assert main(["runs", "--store", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(f"{biased.run_id}\tfinished\tkobbq\tstereotyper (scripted)\t")
    assert "acc_amb=0.000" in lines[0] and "diff_bias_amb=1.000" in lines[0]
    assert "\tfailed\tkobbq\t" in lines[2] and lines[2].endswith("RuntimeError: the model went away")

    assert main(["runs", "--store", str(path), "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in listed] == ["finished", "finished", "failed"]
    assert listed[0]["model"] == "stereotyper" and listed[0]["backend"] == "scripted"
    assert listed[0]["headline"] == headline(biased)
    assert listed[2]["headline"] == {} and "the model went away" in listed[2]["failure"]
