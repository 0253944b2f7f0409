"""The LIBRA build (issue 15) on the fixture corpus with the deterministic test components."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from culturebias.adapters.libra.files import LibraFiles
from culturebias.adapters.libra_build.corpus.steps import TablePerturber
from culturebias.bootstrap.cli import main
from culturebias.bootstrap.libra_build_wiring import build_libra, import_libra_review
from culturebias.domain.errors import ConfigError, DataError
from culturebias.testing.libra_build_components import CooccurrenceExpander, FirstWordClusterer

FIXTURE = Path(__file__).parents[1] / "fixtures" / "libra_corpus"
CORPUS, SEEDS = FIXTURE / "corpus", FIXTURE / "seeds.json"
FIXTURE_NAMES = ("Aroha", "Ngata", "Hemi", "Walker", "Mere", "Sione", "Fifita", "Emily", "Clarke", "Hamish",
                 "Brown", "Parata", "Kingi", "Thompson", "Tevita", "Lolo", "Olivia", "Reid", "Wiremu", "Henare")


def build(out: Path, **options):
    options.setdefault("expander", CooccurrenceExpander())
    options.setdefault("clusterer", FirstWordClusterer())
    return build_libra(CORPUS, SEEDS, out, **options)


def triplet_lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "triplets.jsonl").read_text(encoding="utf-8").splitlines()]


def test_the_fixture_build_is_a_libra_data_path(tmp_path):
    report = build(tmp_path)
    dataset = LibraFiles(tmp_path).load()
    # Each group's keywords are searched only in the sentences of its clusters (PROTOCOLS §4 step 4).
    assert len(dataset.triplets) == report.candidates > 100
    assert report.search == "per cluster"
    assert set(report.triplets_per_group) == {"Māori", "Pasifika", "young people", "older people"}
    assert report.triplets_per_category == {"race/ethnicity": sum(1 for t in dataset.triplets if t.category == "race/ethnicity"),
                                            "age": sum(1 for t in dataset.triplets if t.category == "age")}
    assert report.documents_dropped == {"weather": 2, "joke": 2, "puzzle": 2}
    assert any(t.target in ("Māori", "kaumātua", "whānau") for t in dataset.triplets)  # macrons intact
    assert [g.term for g in dataset.glossary] == ["whānau"]
    text = (tmp_path / "triplets.jsonl").read_text(encoding="utf-8")
    assert not [name for name in FIXTURE_NAMES if re.search(rf"\b{name}\b", text)]
    assert "forecast" not in text and "crossword" not in text
    for name in ("review.csv", "review.xlsx", "report.md", "clusters.png", "build_report.json"):
        assert (tmp_path / name).is_file()
    assert "| Māori |" in (tmp_path / "report.md").read_text(encoding="utf-8")
    # Each group's counterpart (here: the other group of its category) is listed for review.
    assert "| Māori | Pasifika | category | - |" in (tmp_path / "report.md").read_text(encoding="utf-8")
    assert {(p.group, p.counterpart) for p in report.counterparts} >= {("young people", "older people")}


def test_the_build_is_deterministic(tmp_path):
    build(tmp_path / "a", settings={"seed": 3})
    build(tmp_path / "b", settings={"seed": 3})
    assert (tmp_path / "a" / "triplets.jsonl").read_bytes() == (tmp_path / "b" / "triplets.jsonl").read_bytes()


class DyingPerturber(TablePerturber):
    def perturb(self, *args, **kwargs):
        raise KeyboardInterrupt


def test_a_killed_build_resumes_after_its_last_finished_step(tmp_path, monkeypatch):
    monkeypatch.setattr("culturebias.adapters.libra_build.corpus.steps.TablePerturber", DyingPerturber)
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path)
    assert not (tmp_path / "triplets.jsonl").exists()  # nothing half-written
    assert sorted(p.stem for p in (tmp_path / "steps").iterdir()) == ["clean", "cluster", "expand", "search"]
    monkeypatch.undo()
    report = build(tmp_path, resume=True)
    assert report.steps_reused == ("clean", "expand", "cluster", "search") and report.steps_run == ("perturb", "review")


def test_one_step_alone_needs_the_steps_before_it(tmp_path):
    with pytest.raises(ConfigError, match="clean"):
        build(tmp_path, steps="search")
    build(tmp_path, steps="clean")
    report = build(tmp_path, steps="expand,cluster,search,perturb,review")
    assert report.steps_reused == ("clean",)


def test_a_different_seed_file_is_not_resumed(tmp_path):
    build(tmp_path)
    seeds = tmp_path / "other.json"
    seeds.write_text(json.dumps({"Māori": {"keywords": ["iwi"], "anti": {"iwi": "settlers"}}}), encoding="utf-8")
    report = build_libra(CORPUS, seeds, tmp_path / "out", resume=True, expander=CooccurrenceExpander(),
                         clusterer=FirstWordClusterer())
    assert report.steps_reused == ()
    # An expanded keyword has no antonym and the lone group no counterpart: counted, not guessed.
    assert report.not_perturbable > 0


@pytest.mark.parametrize(
    "content, field",
    [("", None), ("{}", None), (json.dumps({"Māori": []}), "Māori"), (json.dumps({"x": {"keywords": ["a"], "anti": 3}}), "x.anti")],
)
def test_bad_seed_files_are_typed_errors(tmp_path, content, field):
    seeds = tmp_path / "seeds.json"
    seeds.write_text(content, encoding="utf-8")
    with pytest.raises(DataError) as error:
        build_libra(CORPUS, seeds, tmp_path / "out")
    assert error.value.file == str(seeds) and error.value.field == field
    assert not (tmp_path / "out").exists()


def test_an_empty_corpus_and_a_wrong_encoding_are_typed_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "a.txt").write_text("  \n", encoding="utf-8")
    with pytest.raises(DataError, match="no document"):
        build_libra(tmp_path / "empty", SEEDS, tmp_path / "out")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Te reo Māori".encode("latin-1", errors="replace").replace(b"?", b"\xe2") + "ā".encode("latin-1", "ignore") + b"\xff")
    with pytest.raises(DataError) as error:
        build_libra(latin, SEEDS, tmp_path / "out")
    assert error.value.file == str(latin)
    assert not (tmp_path / "out").exists()


def test_jsonl_and_csv_take_another_text_field(tmp_path):
    (tmp_path / "c.csv").write_text("body\nThe iwi held a hui. Nothing else here.\n", encoding="utf-8")
    report = build_libra(tmp_path / "c.csv", SEEDS, tmp_path / "out", text_field="body",
                         settings={"expander": "none", "clusterer": "none"})
    assert report.candidates == 1
    with pytest.raises(DataError) as error:
        build_libra(tmp_path / "c.csv", SEEDS, tmp_path / "out2")
    assert (error.value.row, error.value.field) == (1, "text")


def _edit_sheet(out: Path, edit) -> Path:
    import csv

    rows = list(csv.DictReader((out / "review.csv").open(encoding="utf-8")))
    edit(rows)
    sheet = out / "edited.csv"
    with sheet.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return sheet


def test_review_import_rejects_and_fixes_and_refuses_an_invalid_row(tmp_path):
    build(tmp_path, settings={"expander": "none"})
    before = (tmp_path / "triplets.jsonl").read_bytes()

    def invalid(rows):
        rows[4]["unrelated"] = rows[4]["target"]

    with pytest.raises(DataError) as error:
        import_libra_review(tmp_path, _edit_sheet(tmp_path, invalid))
    assert (error.value.file, error.value.row, error.value.field) == (str(tmp_path / "edited.csv"), 6, "unrelated")
    assert (tmp_path / "triplets.jsonl").read_bytes() == before  # nothing half-written

    def decide(rows):
        rows[0]["decision"] = "reject"
        rows[1]["anti_stereotype"] = "tauiwi"

    first = triplet_lines(tmp_path)[:2]
    counts = import_libra_review(tmp_path, _edit_sheet(tmp_path, decide))
    assert counts["rejected"] == 1 and counts["edited"] == 1
    after = triplet_lines(tmp_path)
    assert first[0]["id"] not in {t["id"] for t in after}
    assert next(t for t in after if t["id"] == first[1]["id"])["anti_stereotype"] == "tauiwi"


def test_review_import_reads_the_xlsx_sheet(tmp_path):
    from openpyxl import load_workbook

    build(tmp_path, settings={"expander": "none"})
    book = load_workbook(tmp_path / "review.xlsx")
    book.active["B2"] = "maybe"
    book.save(tmp_path / "edited.xlsx")
    with pytest.raises(DataError) as error:
        import_libra_review(tmp_path, tmp_path / "edited.xlsx")
    assert (error.value.row, error.value.field) == (2, "decision")


def test_the_cli_builds_and_names_bad_input(tmp_path, capsys):
    args = ["build", "libra", "--corpus", str(CORPUS), "--seeds", str(SEEDS), "--out", str(tmp_path / "o"),
            "--set", "expander=none", "--set", "clusterer=none"]
    assert main(args) == 0
    assert "triplets" in capsys.readouterr().out
    assert main(args + ["--resume"]) == 0
    assert json.loads((tmp_path / "o" / "build_report.json").read_text())["steps_reused"][:2] == ["clean", "expand"]
    (tmp_path / "s.json").write_text("{}", encoding="utf-8")
    assert main(["build", "libra", "--corpus", str(CORPUS), "--seeds", str(tmp_path / "s.json"), "--out", str(tmp_path / "p")]) != 0
    err = capsys.readouterr().err
    assert "s.json" in err and "at least one social group" in err
    assert not (tmp_path / "p").exists()


def test_without_the_build_extra_the_cluster_step_names_the_pip_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("culturebias.adapters.libra_build.components._findable", lambda module: False)
    code = main(["build", "libra", "--corpus", str(CORPUS), "--seeds", str(SEEDS), "--out", str(tmp_path),
                 "--set", "expander=none", "--set", "embedder=bag-of-words"])
    assert code != 0
    assert "pip install -e '.[build]' in the culturebias clone" in capsys.readouterr().err


def test_building_imports_no_heavy_library():
    code = (
        "import sys, tempfile, culturebias, culturebias.bootstrap.cli\n"
        "from culturebias.bootstrap.libra_build_wiring import build_libra\n"
        f"build_libra({str(CORPUS)!r}, {str(SEEDS)!r}, tempfile.mkdtemp(), settings={{'expander': 'none', 'clusterer': 'none', 'names': 'list'}})\n"
        "print(','.join(m for m in ('umap', 'sklearn', 'mlxtend', 'torch') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_classifier_cleaner_drops_what_the_rules_miss(tmp_path):
    pytest.importorskip("sklearn")
    corpus = tmp_path / "c.jsonl"
    docs = ["Snow to low levels in Otago, with a cold southerly change overnight.",
            "The column argued that rangatahi are troublemakers at the mall."]
    corpus.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    options = {"expander": "none", "clusterer": "none"}
    rules = build_libra(corpus, SEEDS, tmp_path / "rules", settings=options)
    learned = build_libra(corpus, SEEDS, tmp_path / "learned", settings={**options, "cleaner": "classifier"})
    assert rules.documents_dropped == {} and learned.documents_dropped == {"classifier": 1}
    assert learned.candidates == rules.candidates == 1


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Kōwhai Smith said the iwi were late.", "[NAME] said the iwi were late."),
        ("According to Jo Bloggs, Māori were late.", "According to [NAME], Māori were late."),
        ("Dr Parata and Aroha Ngata spoke.", "[NAME] and [NAME] spoke."),
        ("The report said Samoan families were late.", "The report said Samoan families were late."),
        ("Officials said The council was late.", "Officials said The council was late."),
    ],
)
def test_anonymise_replaces_names_and_keeps_group_words(text, expected):
    from culturebias.domain.libra_build.build_steps import anonymise

    assert anonymise(text, frozenset({"Māori", "Samoan", "iwi"}))[0] == expected


class AxisEmbedder:
    """Each known word on a fixed vector: "Pākehā" is far from "whānau", "Tongan" near it."""

    VECTORS = {"whānau": (1.0, 0.0), "Tongan": (0.9, 0.1), "Pasifika": (0.7, 0.7), "Samoan": (0.8, 0.2)}

    def describe(self) -> str:
        return "axis"

    def embed(self, texts):
        return [self.VECTORS.get(text, (0.5, 0.5)) for text in texts]


def test_the_embedding_perturber_takes_the_most_distant_same_category_term():
    from culturebias.adapters.libra_build.corpus.steps import EmbeddingPerturber
    from culturebias.domain.libra_build.build_steps import Hit
    from culturebias.domain.libra_build.keywords import SeedGroup

    seeds = [SeedGroup(group="Māori", category="race", keywords=("whānau",)),
             SeedGroup(group="Pasifika", category="race", keywords=("Pasifika", "Samoan", "Tongan")),
             SeedGroup(group="old", category="age", keywords=("kaumātua",))]
    text = "The whānau were late."
    hit = Hit(sentence_id="d:1", text=text, keyword="whānau", group="Māori", category="race", start=4, span="whānau")
    result = EmbeddingPerturber(AxisEmbedder()).perturb([hit], seeds, {}, seed=0)
    assert [c.anti_stereotype for c in result.candidates] == ["Pasifika"]  # lowest cosine, never another category
    lone = Hit(sentence_id="d:2", text="The kaumātua spoke.", keyword="kaumātua", group="old", category="age",
               start=4, span="kaumātua")
    assert EmbeddingPerturber(AxisEmbedder()).perturb([lone], seeds, {}).not_perturbable == (
        ("d:2", "no anti-stereotyped term for 'kaumātua' (old)"),)


def test_sigterm_stops_a_build_like_ctrl_c_and_resume_continues(tmp_path):
    import signal
    import time

    ready = tmp_path / "perturbing"
    code = (
        "import sys, time, pathlib\n"
        "import culturebias.adapters.libra_build.corpus.steps as steps\n"
        "def wait(self, *a, **k):\n"
        f"    pathlib.Path({str(ready)!r}).write_text('x')\n"
        "    time.sleep(120)\n"
        "steps.TablePerturber.perturb = wait\n"
        "from culturebias.bootstrap.cli import main\n"
        f"sys.exit(main(['build', 'libra', '--corpus', {str(CORPUS)!r}, '--seeds', {str(SEEDS)!r}, '--out', {str(tmp_path / 'o')!r},\n"
        "                '--set', 'expander=none', '--set', 'clusterer=none']))\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not ready.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "continue with --resume" in err
    assert not (tmp_path / "o" / "triplets.jsonl").exists()
    report = build_libra(CORPUS, SEEDS, tmp_path / "o", resume=True, settings={"expander": "none", "clusterer": "none"})
    assert report.steps_reused == ("clean", "expand", "cluster", "search")


def test_toml_seeds_and_the_cli_review_import(tmp_path, capsys):
    seeds = tmp_path / "seeds.toml"
    rangatahi = '[rangatahi]\ncategory = "age"\nkeywords = ["teenagers"]\nanti = { teenagers = "pensioners" }\n'
    seeds.write_text('"Māori" = ["iwi", "whānau"]\n\n' + rangatahi, encoding="utf-8")
    out = tmp_path / "o"
    command = ["build", "libra", "--corpus", str(CORPUS), "--seeds", str(seeds), "--out", str(out),
               "--set", "expander=none", "--set", "clusterer=none"]
    # "Māori" has no category partner, no counterpart and no antonym: the build stops before writing anything.
    assert main(command) != 0
    assert "'Māori'" in capsys.readouterr().err and not (out / "triplets.jsonl").exists()
    assert not (out / "steps").exists()
    seeds.write_text('"Māori" = { keywords = ["iwi", "whānau"], anti = { iwi = "settlers", "whānau" = "families" } }\n\n'
                     + rangatahi, encoding="utf-8")
    assert main(command) == 0
    groups = {t["group"] for t in triplet_lines(out)}
    assert "rangatahi" in groups
    capsys.readouterr()
    assert main(["build", "libra", "--out", str(out), "--import-review", str(out / "review.csv")]) == 0
    assert "accepted" in capsys.readouterr().out


def test_a_user_glossary_is_written_and_wins_over_found_definitions(tmp_path):
    given = tmp_path / "given.jsonl"
    given.write_text(json.dumps({"term": "whānau", "definition": "family, including the extended family"}) + "\n"
                     + json.dumps({"term": "rangatahi", "definition": "young people"}) + "\n", encoding="utf-8")
    build(tmp_path / "o", settings={"glossary": str(given)})
    glossary = {g.term: g.definition for g in LibraFiles(tmp_path / "o").load().glossary}
    assert glossary == {"whānau": "family, including the extended family", "rangatahi": "young people"}
    with pytest.raises(ConfigError, match="no such file"):
        build(tmp_path / "p", settings={"glossary": str(tmp_path / "missing.jsonl")})


def test_nested_component_options_reach_the_clusterer_from_the_cli(tmp_path, capsys):
    pytest.importorskip("umap")
    args = ["build", "libra", "--corpus", str(CORPUS), "--seeds", str(SEEDS), "--out", str(tmp_path / "o"),
            "--set", "expander=none", "--set", "embedder=bag-of-words", "--set", "cluster.mapping=llm"]
    assert main(args) != 0  # mapping=llm reached open_clusterer, which refuses it without llm=MODEL
    assert "mapping=llm needs a generator" in capsys.readouterr().err
    assert main(args[:-2] + ["--set", "cluster.reduction=none", "--set", "cluster.bogus=1"]) != 0
    assert "bogus" in capsys.readouterr().err
