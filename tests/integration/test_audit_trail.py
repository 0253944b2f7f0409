"""The per-item audit trail (issue 13 point 5): every benchmark's runs store one record per item,
``samples`` returns them, ``export`` writes them as csv, jsonl and parquet, a killed run keeps them."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import pytest

import culturebias
from culturebias.bootstrap.api import shared_export_meta as declared_meta
from culturebias.domain.export_schema import benchmark_schema, shared_meta
from culturebias.adapters.judging.judge import GeneratorJudge
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer, ScriptedTemplater
from culturebias.adapters.stores.jsonl_store import JsonlResultStore
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.bootstrap.cli import main
from culturebias.domain.audit import ITEMS_STAGE, ItemRecord
from culturebias.domain.errors import ConfigError, DataError
from culturebias.domain.mcbe.instances import BEI, McBEDataset
from culturebias.domain.mcbe.options import McBEOptions
from culturebias.domain.twbias.model import (
    Attribute,
    AxisData,
    BiasSentence,
    SentenceSet,
    TargetAttribute,
    TargetGroup,
    TWBiasDataset,
)
from culturebias.testing.context import run_with_fakes
from culturebias.testing.kobbq_runs import policy_generator


# -- one tiny run per benchmark, into a SQLite store in the run folder -----------------------


def _in_folder(tmp_path: Path, name: str, **kwargs):
    out = tmp_path / name
    out.mkdir(exist_ok=True)  # a run that failed half-way for an unrelated reason leaves its folder
    store = SQLiteResultStore(out / "results.sqlite")
    try:
        return run_with_fakes(out_dir=out, store=store, report=False, **kwargs), out
    finally:
        store.close()


def kobbq_likelihood(tmp_path: Path):
    # The option letter "B" is always the likeliest.
    scorer = ScriptedScorer(lambda context, continuation: -1.0 if continuation.strip() == "B" else -3.0)
    return _in_folder(
        tmp_path,
        "kobbq",
        benchmark="kobbq",
        options={"mode": "likelihood", "prompts": "1", "permutations": "0", "limit": 4, "statistics": False},
        scorer=scorer,
    )


def cbbq_generate(tmp_path: Path):
    return _in_folder(
        tmp_path,
        "cbbq",
        benchmark="cbbq",
        options={"mode": "generate", "permutations": "0", "limit": 1},
        generator=ScriptedGenerator(lambda request, prompt: "A", name="always-a"),
    )


def _sentences(file: str, texts: list[str], term: str) -> tuple[BiasSentence, ...]:
    return tuple(BiasSentence(str(i), t, i % 2, (TargetAttribute(term, "錢"),), file, i + 2) for i, t in enumerate(texts))


def twbias_dataset() -> TWBiasDataset:
    attrs = {"錢": Attribute("錢", 1, "Money", 2)}
    groups = {"T1": TargetGroup("gender", "T1", ("男人",)), "T2": TargetGroup("gender", "T2", ("女人",))}
    sets = {
        "T2": SentenceSet("gender", "T2", "female", "f.csv", _sentences("f.csv", ["女人愛錢", "女人很會哭", "女人都很好"], "女人"), attrs, "fa.csv"),
        "T1": SentenceSet("gender", "T1", "male", "m.csv", _sentences("m.csv", ["男人愛車", "男人不能哭", "男人很忙"], "男人"), attrs, "ma.csv"),
    }
    axis = AxisData("gender", groups, ({"T1": "男人", "T2": "女人"},), sets)
    return TWBiasDataset(axes={"gender": axis}, prompts={"0": "", "00": "", "1": "提示1"})


def twbias_run(tmp_path: Path):
    # Sentences about women are likelier (lower PPL) than the same sentences about men.
    scorer = ScriptedScorer(lambda context, continuation: -len(continuation) * (1.0 if "女" in continuation else 1.5))
    return _in_folder(
        tmp_path,
        "twbias",
        benchmark="twbias",
        options={"groups": "gender", "prompt_types": "0,1"},
        dataset=twbias_dataset(),
        scorer=scorer,
        templater=ScriptedTemplater,
    )


MCBE_BEIS = (
    BEI("gender", "背景。", "[PLH]很能干。", ("甲", "乙"), "能力", "解释一", 6.0, "gender.xlsx", 2),
    BEI("gender", "背景。", "[PLH]在做饭。", ("丙", "丁"), "家庭", "解释二", 3.0, "gender.xlsx", 3),
)


def _mcbe_model():
    """Replies by the prompt asked (whatever the prompt set's wording): SC names 能力, BS rates 5, SS picks A."""
    dataset, prompts = McBEDataset(MCBE_BEIS), McBEOptions().prompts
    replies = {}
    for bei in MCBE_BEIS:
        replies[prompts.classification(bei.default_sentence, dataset.subcategories(bei.category))[0].content] = "能力"
        replies[prompts.scoring(bei)[0].content] = "5"
        replies[prompts.analysis(bei)[0].content] = "这句话有偏见。"
    return lambda request, prompt: replies.get(request.messages[0].content, "A")


def mcbe_run(tmp_path: Path):
    return _in_folder(
        tmp_path,
        "mcbe",
        benchmark="mcbe",
        options={"tasks": "pc,sc,ss,ba,bs"},
        dataset=McBEDataset(MCBE_BEIS),
        scorer=ScriptedScorer(lambda context, continuation: -len(continuation) * (1.0 if "甲" in continuation else 2.0)),
        generator=ScriptedGenerator(_mcbe_model(), name="scripted-model"),
        templater=ScriptedTemplater,
        judge=GeneratorJudge(ScriptedGenerator(lambda request, prompt: "5", name="scripted-judge"), max_retries=1),
    )


def libra_run(tmp_path: Path):
    return _in_folder(
        tmp_path,
        "libra",
        benchmark="libra",
        options={"limit": 6, "knowledge_boundary": "off"},
        scorer=ScriptedScorer(lambda context, continuation: -float(len(continuation))),
    )


RUNS = {
    "kobbq": kobbq_likelihood,
    "cbbq": cbbq_generate,
    "twbias": twbias_run,
    "mcbe": mcbe_run,
    "libra": libra_run,
}


class _Runs:
    """Each benchmark's run, made when a test first asks for it."""

    def __init__(self, base: Path):
        self._base = base
        self._made: dict[str, tuple] = {}

    def __getitem__(self, name: str) -> tuple:
        if name not in self._made:
            self._made[name] = RUNS[name](self._base)
        return self._made[name]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> _Runs:
    return _Runs(tmp_path_factory.mktemp("audit-runs"))


# -- what each benchmark records -------------------------------------------------------------


def test_kobbq_likelihood_records_prompt_letters_loglikelihoods_and_outcome(runs):
    result, out = runs["kobbq"]
    records = culturebias.samples(out)
    assert len(records) == result.summary.counts.answers > 0
    first = records[0]
    assert isinstance(first, ItemRecord) and first.benchmark == "kobbq"
    assert first.texts == [" A", " B", " C"] and first.loglikelihoods == [-3.0, -1.0, -3.0]
    assert first.metadata["chosen_letter"] == "B" and first.parsed == json.loads(first.metadata["options"])[1]
    assert first.prompt and first.prompt.endswith("정답:")
    assert {"category", "template_id", "label_type", "context_condition", "prompt_id"} <= set(first.metadata)
    # outcome and correct agree with the summary's per-item logic
    for record in records:
        chosen = record.metadata["chosen_index"]
        assert record.correct == (chosen == record.metadata["answer_index"])
        expected = "unknown" if chosen == record.metadata["unknown_index"] else "biased" if chosen == record.metadata["biased_index"] else "counter_biased"
        assert record.outcome == expected


def test_cbbq_generate_records_the_raw_reply_and_parsed_option(runs):
    result, out = runs["cbbq"]
    records = culturebias.samples(out)
    assert len(records) == result.summary.counts.answers > 0
    for record in records:
        assert record.answer == "A" and record.metadata["chosen_letter"] == "A"
        assert record.parsed == json.loads(record.metadata["options"])[0]
        assert record.metadata["mode"] == "generate" and record.prompt
        assert record.item_id == f"{record.metadata['sample_id']}|q|0"


def test_twbias_records_the_per_pair_perplexities(runs):
    result, out = runs["twbias"]
    records = culturebias.samples(out)
    # 2 specifications × 3 sentences × 2 prompt types
    assert len(records) == 12
    by_type = {r.metadata["prompt_type"] for r in records}
    assert by_type == {"0", "1"}
    for record in records:
        origin, reference = record.scores["ppl_origin"], record.scores["ppl_reference"]
        assert len(record.texts) == 2 and len(record.loglikelihoods) == 2
        # PPL = exp(-logprob / characters), both from the stored log-likelihoods
        assert origin == pytest.approx(math.exp(-record.loglikelihoods[0] / len(record.texts[0])))
        assert reference == pytest.approx(math.exp(-record.loglikelihoods[1] / len(record.texts[1])))
        female_origin = record.metadata["origin"] == "T2_female"
        assert record.outcome == ("origin_lower_ppl" if female_origin else "reference_lower_ppl")
        assert (record.prompt is None) == (record.metadata["prompt_type"] == "0")
    assert culturebias.samples(out, where={"prompt_type": "1", "origin": "T2_female"}, limit=2)[0].prompt.startswith("<s>")


def test_mcbe_records_one_item_per_bei_and_task(runs):
    result, out = runs["mcbe"]
    records = culturebias.samples(out)
    # in the order recorded (BEI by BEI, task by task), not the store's key order
    assert [r.metadata["task"] for r in records] == ["pc", "sc", "ss", "ba", "bs"] * 2
    assert [r.metadata["bei"] for r in records] == ["gender:2"] * 5 + ["gender:3"] * 5
    pc = culturebias.samples(out, where={"item_id": "gender:2|pc"})[0]
    assert pc.parsed == "甲" and pc.scores["nll.甲"] == pytest.approx(1.0) and pc.scores["nll.乙"] == pytest.approx(2.0)
    assert pc.scores["score"] == pytest.approx(result.summary.details.items["gender:2"].pc.score)
    sc = culturebias.samples(out, where={"item_id": "gender:2|sc"})[0]
    assert sc.answer == "能力" and sc.correct is True and sc.outcome == "correct" and MCBE_BEIS[0].default_sentence in sc.prompt
    assert sc.prompt.startswith("<s>")  # as the model saw it: through its chat template
    assert culturebias.samples(out, where={"item_id": "gender:3|sc"})[0].correct is False
    bs = culturebias.samples(out, where={"meta.task": "bs"})
    assert [r.scores["rating"] for r in bs] == [5.0, 5.0]


def test_libra_records_the_three_sentences_and_their_likelihoods(runs):
    result, out = runs["libra"]
    records = culturebias.samples(out)
    assert len(records) == result.summary.counts.triplets == 6
    columns = result.summary.details.triplets
    for record, stereotyped in zip(records, columns.stereotyped):
        assert len(record.texts) == 3 and record.loglikelihoods[0] == pytest.approx(stereotyped)
        assert record.metadata["category"] and record.metadata["group"]
        assert record.parsed in ("stereotyped", "anti_stereotyped", "unrelated")


def test_cbbq_masked_records_each_option_sentence_and_its_pseudo_loglikelihood(tmp_path):
    from culturebias.testing.scripted import ScriptedPseudoScorer

    # the longer the scored span, the likelier (any deterministic rule will do)
    scorer = ScriptedPseudoScorer(lambda text, start, end: float(end - start))
    result, out = _in_folder(
        tmp_path,
        "cbbq-masked",
        benchmark="cbbq",
        options={"mode": "masked", "permutations": "0", "limit": 1},
        pseudo_scorer=scorer,
    )
    records = culturebias.samples(out)
    assert len(records) == result.summary.counts.answers > 0
    for record in records:
        options = json.loads(record.metadata["options"])
        assert record.metadata["mode"] == "masked" and record.metadata["chosen_letter"] is None
        assert len(record.texts) == len(record.loglikelihoods) == len(options)
        means = [record.scores[f"mean_logprob.{i}"] for i in range(len(options))]
        best = max(range(len(options)), key=lambda i: (means[i], -i))
        assert record.metadata["chosen_index"] == best and record.parsed == options[best]


# -- filters, limits, export -----------------------------------------------------------------


def test_filters_and_limit(runs):
    _, out = runs["kobbq"]
    everything = culturebias.samples(out)
    category = everything[0].metadata["category"]
    kept = culturebias.samples(out, where={"meta.category": category, "correct": "false"})
    assert kept == [r for r in everything if r.metadata["category"] == category and r.correct is False]
    assert culturebias.samples(out, where={"category": category}) == [r for r in everything if r.metadata["category"] == category]
    assert len(culturebias.samples(out, limit=2)) == 2
    with pytest.raises(ConfigError, match="no such field"):
        culturebias.samples(out, where={"colour": "red"})


@pytest.mark.parametrize("benchmark", sorted(RUNS))
def test_export_in_all_three_formats(runs, benchmark, tmp_path):
    _, out = runs[benchmark]
    records = culturebias.samples(out)
    assert culturebias.export_samples(out, tmp_path / "items.csv", "csv") == len(records)
    assert culturebias.export_samples(out, tmp_path / "items.jsonl", "jsonl") == len(records)
    with (tmp_path / "items.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    lines = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["item_id"] for r in rows] == [r["item_id"] for r in lines] == [r.item_id for r in records]
    meta = sorted(k for k in lines[0] if k.startswith("meta."))
    # the one column set of every export (docs/EXPORT_SCHEMA.md), which holds every field the records have
    assert set(meta) == {k for k in benchmark_schema(shared_meta({"installed": declared_meta()})) if k.startswith("meta.")} >= {"meta." + k for r in records for k in r.metadata}
    assert all(not isinstance(v, dict) for line in lines for k, v in line.items() if k != "scores")  # flat; lists stay lists
    assert all(isinstance(line["scores"], dict) for line in lines) and {line["meta.other"] for line in lines} == {None}
    assert all(line["run_id"] == lines[0]["run_id"] and line["benchmark"] == benchmark for line in lines)
    assert [r["outcome"] for r in lines] == [r.outcome for r in records]
    assert [r["outcome"] or None for r in rows] == [r.outcome for r in records]
    pq = pytest.importorskip("pyarrow.parquet")
    assert culturebias.export_samples(out, tmp_path / "items.parquet", "parquet") == len(records)
    table = pq.read_table(tmp_path / "items.parquet")
    assert table.column("item_id").to_pylist() == [r.item_id for r in records]
    assert set(table.column_names) == set(lines[0])


def test_unknown_export_format_is_a_config_error(runs, tmp_path):
    _, out = runs["libra"]
    with pytest.raises(ConfigError, match="unknown export format"):
        culturebias.export_samples(out, tmp_path / "x.xlsx", "xlsx")
    assert not (tmp_path / "x.xlsx").exists()


def test_run_by_summary_file_and_by_id_in_a_store(runs):
    result, out = runs["libra"]
    by_folder = culturebias.samples(out)
    assert culturebias.samples(out / "summary.json") == by_folder
    assert culturebias.samples(result.run_id, store=out / "results.sqlite") == by_folder
    assert culturebias.samples(result.summary, store=out) == by_folder
    with pytest.raises(DataError, match="no run 'libra-nope'"):
        culturebias.samples("libra-nope", store=out / "results.sqlite")
    with pytest.raises(DataError, match="no such run folder"):
        culturebias.samples(out / "missing")


# -- the CLI -----------------------------------------------------------------------------------


def test_cli_samples_and_export(runs, tmp_path, capsys):
    result, out = runs["kobbq"]
    records = culturebias.samples(out, where={"outcome": "biased"})
    assert main(["samples", str(out), "--filter", "outcome=biased", "--format", "jsonl"]) == 0
    printed = [ItemRecord.model_validate_json(line) for line in capsys.readouterr().out.splitlines()]
    assert printed == records
    assert main(["samples", result.run_id, "--store", str(out / "results.sqlite"), "--limit", "1"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("item_id\toutcome") and len(table) == 2
    assert main(["export", str(out), "--format", "csv", "--out", str(tmp_path / "k.csv")]) == 0
    with (tmp_path / "k.csv").open(encoding="utf-8", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == len(culturebias.samples(out))


@pytest.mark.parametrize(
    "argv, code",
    [
        (["samples", "{tmp}/nowhere"], 3),  # no such run
        (["samples", "some-run-id"], 3),  # a run id without a store
        (["samples", "{out}", "--filter", "outcome"], 2),  # not FIELD=VALUE
        (["samples", "{out}", "--filter", "colour=red"], 2),  # no such field
        (["samples", "{out}", "--format", "xml"], 2),
        (["export", "{out}", "--format", "xlsx", "--out", "{tmp}/x"], 2),
    ],
)
def test_cli_errors_are_one_line_with_their_exit_code(runs, tmp_path, capsys, argv, code):
    _, out = runs["kobbq"]
    args = [a.format(tmp=tmp_path, out=out) for a in argv]
    assert main(args) == code
    err = capsys.readouterr().err
    assert err.startswith("culturebias: error:") and "Traceback" not in err


# -- a killed run keeps its records; resuming does not duplicate them -------------------------


class KilledBeforeFinishing(JsonlResultStore):
    """The process is stopped once everything was computed, before the run is marked finished."""

    def finish_run(self, run_id, summary):
        raise KeyboardInterrupt


def _kobbq(out: Path, store, resume: bool = False):
    return run_with_fakes(
        "kobbq",
        options={"mode": "generate", "prompts": "1,2", "permutations": "0", "statistics": False, "limit": 3},
        out_dir=out,
        store=store,
        resume=resume,
        report=False,
        generator=policy_generator("biased", "stereotyper"),
    )


def test_a_killed_run_keeps_its_records_and_resume_does_not_duplicate_them(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        _kobbq(out, KilledBeforeFinishing(out / "results"))
    store = JsonlResultStore(out / "results")
    (killed,) = store.find_runs()
    assert killed.status == "interrupted" and not (out / "summary.json").exists()
    kept = culturebias.samples(out)  # the folder's journal names the killed run
    assert len(kept) == 6 and {r.outcome for r in kept} == {"biased"}
    assert culturebias.samples(killed.run_id, store=out / "results") == kept
    items_file = out / "results" / "results" / killed.run_id / f"{ITEMS_STAGE}.jsonl"
    batches = items_file.read_text(encoding="utf-8").count("\n")

    resumed = _kobbq(out, store, resume=True)
    assert resumed.run_id == killed.run_id and store.get_run(killed.run_id).status == "finished"
    assert culturebias.samples(out) == kept
    assert items_file.read_text(encoding="utf-8").count("\n") == batches  # nothing written twice
    assert len(store.load_results(killed.run_id, ITEMS_STAGE)) == 6


def test_a_record_that_changed_is_replaced_not_added(tmp_path):
    from culturebias.application.audit import StoredItemLog

    store = JsonlResultStore(tmp_path / "store")
    log = StoredItemLog(store, "run-1", batch=2)
    first = [ItemRecord(benchmark="kobbq", item_id=str(i), outcome="biased") for i in range(5)]
    log.record(first)
    assert len((tmp_path / "store" / "results" / "run-1" / "items.jsonl").read_text().splitlines()) == 3  # batches of 2
    StoredItemLog(store, "run-1").record([first[0], first[1].model_copy(update={"outcome": "unknown"})])
    stored = store.load_results("run-1", ITEMS_STAGE)
    assert len(stored) == 5 and stored["1"]["outcome"] == "unknown" and stored["0"]["outcome"] == "biased"


def test_secrets_in_texts_are_redacted_in_the_store(tmp_path):
    from culturebias.application.audit import StoredItemLog, stored_items

    store = JsonlResultStore(tmp_path / "store")
    secret = "sk-" + "a1B2c3D4e5F6g7H8i9J0kLmN"
    StoredItemLog(store, "run-1").record([ItemRecord(benchmark="x", item_id="1", prompt=f"use {secret}", answer="ok")])
    (record,) = stored_items(store, "run-1")
    assert secret not in record.prompt and "redacted" in record.prompt


# -- LIBRA's knowledge boundary: the model's definitions are items too ------------------------


class EveryWordIsLocal:
    def describe(self) -> str:
        return "an empty lexicon"

    def known(self, forms):
        return set()


def test_libra_records_the_model_definition_of_each_local_word(tmp_path):
    from culturebias.adapters.similarity.embeddings import BagOfWordsEmbedder

    result, out = _in_folder(
        tmp_path,
        "libra-words",
        benchmark="libra",
        options={"embedder": "bag-of-words", "knowledge_boundary": "on"},
        scorer=ScriptedScorer(lambda context, continuation: -float(len(continuation))),
        generator=ScriptedGenerator(lambda request, prompt: "a family group", name="definer"),
        lexicons=lambda spec, min_frequency=0.0: EveryWordIsLocal(),
        embedders=lambda spec: BagOfWordsEmbedder(),
    )
    words = culturebias.samples(out, where={"kind": "local_word"})
    summary_words = {w.term: w for w in result.summary.details.local_words}
    assert words and {r.metadata["term"] for r in words} == set(summary_words)
    for record in words:
        expected = summary_words[record.metadata["term"]]
        assert record.answer == expected.model_definition
        assert record.metadata["understood"] == expected.understood
        assert record.scores["similarity"] == (pytest.approx(expected.score) if expected.score is not None else None)
    triplets = culturebias.samples(out, where={"kind": "triplet"})
    assert len(triplets) == result.summary.counts.triplets
    assert [r.outcome == "invalid" for r in triplets] == [not v for v in result.summary.details.triplets.valid]


def test_each_repeat_keeps_its_own_records(tmp_path):
    store = JsonlResultStore(tmp_path / "results")
    result = run_with_fakes(
        "kobbq",
        options={"mode": "generate", "prompts": "1", "permutations": "0", "statistics": False, "limit": 2},
        out_dir=tmp_path / "out",
        store=store,
        report=False,
        repeats=2,
        generator=policy_generator("biased", "stereotyper"),
    )
    records = culturebias.samples(result.run_id, store=tmp_path / "results")
    first = [r for r in records if r.metadata["repeat"] == 0]
    second = culturebias.samples(result.run_id, where={"meta.repeat": "1"}, store=tmp_path / "results")
    assert len(first) == len(second) == result.summary.counts.answers == len(records) // 2
    assert [r.item_id + "#1" for r in first] == [r.item_id for r in second]


def test_parquet_without_pyarrow_names_the_extra(runs, tmp_path, monkeypatch, capsys):
    import sys

    _, out = runs["libra"]
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if not installed: importing it raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ConfigError, match=re.escape("pip install -e '.[export]' in the culturebias clone")):
        culturebias.export_samples(out, tmp_path / "items.parquet", "parquet")
    assert main(["export", str(out), "--format", "parquet", "--out", str(tmp_path / "items.parquet")]) == 2
    assert "pip install" in capsys.readouterr().err and not (tmp_path / "items.parquet").exists()
    assert not list(tmp_path.iterdir())  # no temporary file left behind
