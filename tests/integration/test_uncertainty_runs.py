"""Every benchmark's run on scripted ports writes a 95% bootstrap interval beside each headline metric,
containing the point estimate and naming its n and resampling unit (issue 13, point 2)."""

from __future__ import annotations

import random
import zlib

import pytest

from culturebias.adapters.cbbq.files import CBBQFiles
from culturebias.adapters.kobbq.files import KoBBQFiles
from culturebias.testing.scripted import ScriptedGenerator
from culturebias.testing.benchmarks import headline
from culturebias.testing.context import run_with_fakes


def mixed_letters(request, rendered: str) -> str:
    """A reply that varies from question to question, so the metrics have sampling spread."""
    return random.Random(request.key).choice("ABC")


def assert_intervals(intervals, points: dict, unit: str, n: int, resamples: int = 2000) -> None:
    assert intervals is not None and set(points) <= set(intervals)
    for name, point in points.items():
        interval = intervals[name]
        assert interval.unit == unit and interval.n == n and interval.level == 0.95
        assert interval.contains(point), (name, point, interval)
        assert interval.seed == 0 and interval.resamples == resamples


def test_kobbq_run_writes_template_intervals_around_each_headline():
    dataset = KoBBQFiles(None).load()
    summary = run_with_fakes(
        "kobbq",
        options={"mode": "generate", "prompts": "1,2", "limit": 40, "statistics": False},
        dataset=dataset,
        report=False,
        generator=ScriptedGenerator(mixed_letters),
    ).summary
    overall = summary.metrics.overall
    templates = {i.template_id for i in dataset.items[:40]}
    assert_intervals(overall.intervals, headline(summary), "template", len(templates))
    assert any(i.high > i.low for i in overall.intervals.values())


def test_cbbq_run_writes_template_intervals_around_each_headline():
    summary = run_with_fakes(
        "cbbq",
        options={"mode": "generate", "limit": 6},
        report=False,
        generator=ScriptedGenerator(mixed_letters),
    ).summary
    overall = summary.metrics.overall
    n = overall.intervals["s_amb"].n
    assert n >= 2
    assert_intervals(overall.intervals, headline(summary), "template", n)
    assert summary.metrics.by_condition[summary.metrics.condition].overall.intervals == overall.intervals


def mcbe_model(request, prompt: str) -> str:
    text = request.messages[0].content
    spread = zlib.crc32(text.encode())
    if "可选的类别有" in text or "类别包括" in text:  # the culturebias and the Table 7 wordings
        return "能力" if spread % 2 else "家庭"
    if "句子1：" in text:
        return "AB"[spread % 2]
    if "程度打分" in text:
        return f"{spread % 11}分"
    return "这句话有偏见。"


MCBE_BEIS = 12  # two categories of six


def mcbe_summary():
    """A McBE run of four tasks on twelve BEIs whose scores spread, on scripted ports."""
    from culturebias.testing.scripted import ScriptedScorer
    from culturebias.domain.mcbe.instances import BEI, McBEDataset

    beis = tuple(
        BEI(category, "背景。", f"[PLH]第{row}句。", ("甲", "乙", "丙"), ("能力", "家庭")[row % 2], "解释", float(row % 10), f"{category}.xlsx", row)
        for category in ("gender", "age")
        for row in range(2, 8)
    )
    return run_with_fakes(
        "mcbe",
        options={"tasks": "pc,sc,ss,bs"},
        dataset=McBEDataset(beis),
        report=False,
        scorer=ScriptedScorer(lambda context, continuation: -float(zlib.crc32(continuation.encode()) % 7 + 1)),
        generator=ScriptedGenerator(mcbe_model),
    ).summary


def test_mcbe_run_writes_instance_intervals_for_the_overall_and_each_task():
    metrics = mcbe_summary().metrics
    points = {"overall": metrics.overall, **metrics.tasks.present()}
    assert_intervals(metrics.intervals, points, "instance (BEI)", MCBE_BEIS)
    assert metrics.intervals["overall"].high > metrics.intervals["overall"].low


class NothingIsLocal:
    """A general lexicon that knows every word: no knowledge-boundary check, bbs undefined."""

    def describe(self):
        return "knows everything"

    def known(self, forms):
        return set(forms)


def libra_summary():
    """A LIBRA run of the bundled triplets with spread likelihoods and no local word (bbs undefined)."""
    from culturebias.adapters.libra.files import LibraFiles
    from culturebias.adapters.similarity.embeddings import BagOfWordsEmbedder
    from culturebias.testing.scripted import ScriptedScorer

    return run_with_fakes(
        "libra",
        options={"embedder": "bag-of-words"},
        dataset=LibraFiles(None).load(),
        report=False,
        scorer=ScriptedScorer(lambda context, continuation: -float(zlib.crc32((context + continuation).encode()) % 97)),
        generator=ScriptedGenerator(lambda request, prompt: "?"),
        lexicons=lambda spec, min_frequency=0.0: NothingIsLocal(),
        embedders=lambda spec: BagOfWordsEmbedder(),
    ).summary


def test_libra_run_writes_triplet_intervals_and_an_undefined_metric_gets_none():
    summary = libra_summary()
    overall = summary.metrics.overall
    defined = {name: getattr(overall, name) for name in ("lms", "ss", "icat_local", "jsd")}
    assert_intervals(overall.intervals, defined, "triplet", summary.counts.valid_triplets)
    assert overall.eicat is None and not overall.intervals["eicat"].defined  # bbs undefined: no local word checked


def twbias_dataset():
    from culturebias.domain.twbias.model import Attribute, AxisData, BiasSentence, SentenceSet, TargetAttribute, TargetGroup, TWBiasDataset

    attributes = {"錢": Attribute("錢", 1, "Money", 2), "哭": Attribute("哭", 0, "Emotion", 3)}

    def sentences(file, texts, pairs):
        return tuple(
            BiasSentence(str(i), text, i % 2, (TargetAttribute(*pairs[i % 2]),), file, i + 2) for i, text in enumerate(texts)
        )

    groups = {"T1": TargetGroup("gender", "T1", ("男人", "男生")), "T2": TargetGroup("gender", "T2", ("女人", "女生"))}
    female = [f"女人{'愛錢' if i % 2 else '愛哭'}的第{i}句" for i in range(12)]
    male = [f"男生{'愛錢' if i % 2 else '愛哭'}之{i}" for i in range(10)]
    sets = {
        "T2": SentenceSet("gender", "T2", "female", "f.csv", sentences("f.csv", female, [("女人", "錢"), ("女人", "哭")]), attributes, "fa.csv"),
        "T1": SentenceSet("gender", "T1", "male", "m.csv", sentences("m.csv", male, [("男生", "錢"), ("男生", "哭")]), attributes, "ma.csv"),
    }
    axis = AxisData("gender", groups, ({"T1": "男人", "T2": "女人"}, {"T1": "男生", "T2": "女生"}), sets)
    prompts = {"0": "", "00": "", **{str(i): f"提示{i}" for i in range(1, 11)}}
    return TWBiasDataset(axes={"gender": axis}, prompts=prompts), set(female + male)


def twbias_summary(**options):
    """A TWBias gender run of ``twbias_dataset`` whose scorer prefers the stereotype, with noise."""
    from culturebias.testing.scripted import ScriptedScorer, ScriptedTemplater

    data, originals = twbias_dataset()

    def stereotype_preferred(context: str, continuation: str) -> float:
        noise = zlib.crc32((context + continuation).encode()) % 13 / 10
        return -len(continuation) * (1.0 + noise + (0.0 if continuation in originals else 0.3))

    return run_with_fakes(
        "twbias",
        options={"groups": "gender", "prompt_types": "1,2,3,4", **options},
        dataset=data,
        report=False,
        scorer=ScriptedScorer(stereotype_preferred),
        templater=ScriptedTemplater(),
    ).summary


def test_twbias_run_writes_sentence_pair_intervals_for_each_specification():
    summary = twbias_summary()
    for block in summary.metrics.gender.values():
        assert_intervals(block.intervals, {"bias_ratio": block.bias_ratio, "effect_size": block.effect_size}, "sentence pair", block.n_rows)
    assert any(i.high > i.low for b in summary.metrics.gender.values() for i in b.intervals.values())
    assert set(headline(summary)) == {"female.bias_ratio", "female.effect_size", "male.bias_ratio", "male.effect_size"}


def _without(data, key: str):
    if isinstance(data, dict):
        return {k: _without(v, key) for k, v in data.items() if k != key}
    if isinstance(data, list):
        return [_without(v, key) for v in data]
    return data


def test_a_summary_written_before_intervals_loads_and_resamples_0_writes_none():
    from dataclasses import replace

    from culturebias.domain.cbbq.summary import CBBQSummary
    from culturebias.testing.context import fake_context

    summary = run_with_fakes("cbbq", options={"mode": "generate", "limit": 2}, generator=ScriptedGenerator(mixed_letters)).summary
    assert summary.metrics.overall.intervals is not None
    older = CBBQSummary.model_validate(_without(summary.as_dict(), "intervals"))
    assert older.metrics.overall.intervals is None and older.metrics.overall.s_amb == summary.metrics.overall.s_amb

    def no_bootstrap(run_id, store):
        return replace(fake_context(store=store, run_id=run_id, generator=ScriptedGenerator(mixed_letters)), bootstrap_resamples=0)

    plain = run_with_fakes("cbbq", options={"mode": "generate", "limit": 2}, context=no_bootstrap).summary
    assert plain.metrics.overall.intervals is None
    assert plain.metrics.overall.model_dump(exclude={"intervals"}) == summary.metrics.overall.model_dump(exclude={"intervals"})


@pytest.mark.shared_data
def test_the_authors_ppls_get_intervals_around_table_4(tmp_path, twbias_data):
    """The vectorised resampling statistic reproduces Table 4 from the authors' per-sentence PPLs exactly."""
    from culturebias.bootstrap.cli import main
    from culturebias.domain.twbias.summary import TWBiasSummary

    results = twbias_data.parent / "twbias-results" / "Breeze-7B-Instruct-v0_1"
    if not results.is_dir():
        pytest.skip(f"the TWBias authors' result files are not at {results}")
    argv = ["run", "twbias", "--out", str(tmp_path), "--set", "model.backend=replay", "--set", f"model.path={results}",
            "--set", f"data.path={twbias_data}", "--set", "protocol.groups=gender", "--set", "store.backend=memory",
            "--set", "run.bootstrap_resamples=500"]  # fmt: skip
    try:
        assert main(argv) == 0
    finally:
        import structlog

        structlog.reset_defaults()
    summary = TWBiasSummary.model_validate_json((tmp_path / "summary.json").read_text(encoding="utf-8"))
    for block in summary.metrics.gender.values():
        assert_intervals(block.intervals, {"bias_ratio": block.bias_ratio, "effect_size": block.effect_size}, "sentence pair", block.n_rows, resamples=500)
        assert all(i.method == "BCa" and i.note is None for i in block.intervals.values())
        for group in [*block.by_toxicity.values(), *block.by_category.values()]:  # the breakdowns reproduce too
            for name in ("bias_ratio", "effect_size"):
                interval = group.intervals[name]
                assert "statistic gives" not in (interval.note or "") and interval.unit == "sentence pair"
                point = getattr(group, name)
                assert interval.contains(point) if point is not None else not interval.defined, (name, point, interval)
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "95% CI bias ratio" in report and "sentence pairs |" in report
