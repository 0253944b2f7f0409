"""StereoSet's JSON for LIBRA's iCAT column: the fixture in StereoSet's format, and typed errors for wrong shapes."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from culturebias.adapters.libra.files import LibraFiles
from culturebias.adapters.libra.stereoset_files import load_stereoset, parse_stereoset
from culturebias.domain.errors import DataError

FIXTURE = Path(__file__).parents[1] / "fixtures" / "stereoset" / "dev.json"
BUNDLED_TRIPLETS = Path(__file__).parents[2] / "adapters" / "bundled" / "libra" / "triplets.jsonl"


def fixture() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_the_fixture_loads_with_each_modified_span():
    data = load_stereoset(str(FIXTURE), FIXTURE.read_bytes())
    assert data.file == "dev.json"
    assert [i.id for i in data.items] == ["intra-1", "intra-2", "intra-3", "intra-4", "inter-1", "inter-2"]
    first = data.items[0]
    assert (first.split, first.target, first.bias_type) == ("intrasentence", "chess player", "profession")
    # sentences come back in gold-label order (stereotype, anti-stereotype, unrelated), whatever the file's order
    stereotype, anti, unrelated = first.sentences
    assert stereotype.text[stereotype.span_start : stereotype.span_end] == "nerdy"
    assert anti.text[anti.span_start : anti.span_end] == "athletic"
    assert unrelated.left == "The chess player was " and unrelated.text.endswith("carpet.")
    # BLANK first: the modified span starts the sentence
    gentle = data.items[2].sentence("stereotype")
    assert (gentle.span_start, gentle.text[: gentle.span_end]) == (0, "Gentle")
    # intersentence: the context is U_left, the whole sentence the modified span
    cold = data.items[4].sentence("stereotype")
    assert cold.left == "My cousin moved to Norway last year. "
    assert cold.text[cold.span_start : cold.span_end] == "It is cold and everyone skis."
    assert data.items[5].sentence("unrelated").text.endswith("The printer needs ink.")


def test_a_capitalised_first_word_still_fits_its_context():
    doc = fixture()
    doc["data"]["intrasentence"][0]["context"] = "the chess player was BLANK."
    data = parse_stereoset("s.json", json.dumps(doc))
    assert data.items[0].sentence("stereotype").span_start == len("The chess player was ")


def _broken(path: list, value) -> str:
    doc = fixture()
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("text", "field", "reason"),
    [
        ("[1, 2]", "(top level)", "JSON object"),
        (json.dumps({"version": "1.0"}), "data", "JSON object"),
        (json.dumps({"data": {"train": []}}), "data", "neither intrasentence nor intersentence"),
        (json.dumps({"data": {"intrasentence": {}}}), "data.intrasentence", "list of items"),
        (json.dumps({"data": {"intrasentence": []}}), "data", "no items"),
        (_broken(["data", "intrasentence", 1, "sentences", 2, "gold_label"], "neutral"),
         "data.intrasentence[1].sentences[2].gold_label", "must be one of"),
        (_broken(["data", "intrasentence", 0, "sentences", 0, "gold_label"], "stereotype"),
         "data.intrasentence[0].sentences[1].gold_label", "a second stereotype"),
        (_broken(["data", "intersentence", 1, "sentences"], []), "data.intersentence[1].sentences", "no stereotype"),
        (_broken(["data", "intrasentence", 3, "context"], "The engineer was very careful."),
         "data.intrasentence[3].context", "BLANK"),
        (_broken(["data", "intrasentence", 3, "sentences", 1, "sentence"], "An engineer is careless."),
         "data.intrasentence[3].sentences[1].sentence", "BLANK filled in"),
        (_broken(["data", "intersentence", 0, "target"], KeyError), "data.intersentence[0].target", "missing"),
        (_broken(["data", "intersentence", 0, "bias_type"], 3), "data.intersentence[0].bias_type", "must be a string"),
        (_broken(["data", "intersentence", 1, "id"], "intra-2"), "data.intersentence[1].id", "already used"),
        (_broken(["data", "intrasentence", 2, "sentences"], "three"), "data.intrasentence[2].sentences", "list"),
    ],
)
def test_a_wrong_shape_is_a_data_error_naming_file_and_field(text, field, reason):
    with pytest.raises(DataError) as error:
        parse_stereoset("stereoset.json", text)
    assert (error.value.file, error.value.field) == ("stereoset.json", field)
    assert reason in error.value.reason


def test_not_json_names_the_file_and_line():
    with pytest.raises(DataError) as error:
        parse_stereoset("dev.json", '{"data":\n  {"intrasentence": [}')
    assert error.value.file == "dev.json" and "line 2" in str(error.value)


def test_the_data_folder_reads_stereoset_beside_the_triplets(tmp_path):
    embedded = LibraFiles(None).load()
    shutil.copy(BUNDLED_TRIPLETS, tmp_path)
    without = LibraFiles(str(tmp_path))
    assert without.load().stereoset is None
    before = without.fingerprint()
    shutil.copy(FIXTURE, tmp_path / "stereoset.json")
    loaded = LibraFiles(str(tmp_path)).load()
    assert loaded.stereoset is not None and loaded.stereoset.file == "stereoset.json"
    assert len(loaded.stereoset.items) == 6 and len(loaded.triplets) == len(embedded.triplets)
    assert LibraFiles(str(tmp_path)).fingerprint() != before  # StereoSet is part of the data


def test_a_broken_stereoset_file_in_the_data_folder_stops_the_load(tmp_path):
    (tmp_path / "triplets.jsonl").write_text(
        '{"sentence": "My sister cooked.", "target": "sister", "anti_stereotype": "brother", "unrelated": "kettle", '
        '"group": "women", "category": "gender"}\n',
        encoding="utf-8",
    )
    doc = copy.deepcopy(fixture())
    doc["data"]["intersentence"][0]["sentences"][0]["gold_label"] = None
    (tmp_path / "dev.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DataError) as error:
        LibraFiles(str(tmp_path)).load()
    assert error.value.file == str(tmp_path / "dev.json")
    assert error.value.field == "data.intersentence[0].sentences[0].gold_label"


def test_the_command_line_reports_a_broken_stereoset_file_without_a_traceback(tmp_path, capsys):
    from culturebias.bootstrap.cli import main

    shutil.copy(BUNDLED_TRIPLETS, tmp_path)
    doc = fixture()
    doc["data"]["intrasentence"][2]["context"] = "Grandmothers knit scarves."
    (tmp_path / "stereoset.json").write_text(json.dumps(doc), encoding="utf-8")
    code = main(["run", "libra", "--out", str(tmp_path / "out"), "--set", f"data.path={tmp_path}", "--set", "run.progress=false"])
    err = capsys.readouterr().err
    assert code == 3
    assert str(tmp_path / "stereoset.json") in err and "data.intrasentence[2].context" in err
    assert "Traceback" not in err
