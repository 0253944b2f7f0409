"""The TWBias result-folder replay: layout, prompt numbering, typed errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from culturebias.adapters.replay.backend import ReplayOptions, create_backend
from culturebias.adapters.twbias.replay import AUTHORS_INDEX, TWBiasResultFolder
from culturebias.domain.errors import CapabilityError, ConfigError, DataError, MissingDataError
from culturebias.domain.twbias.model import TargetGroup
from culturebias.ports.stored_perplexities import StoredPerplexities

FEMALE = TargetGroup("gender", "T2", ("女人",))
MALE = TargetGroup("gender", "T1", ("男人",))
HEADER = ",Sentence ID,Biased Sentences,origin_ppl,replaced_sentence,replace_ppl,delta_ppl\n"


def write_folder(root: Path, rows: str = "0,7,女人愛花錢,10.5,男人愛花錢,12.0,1.5\n") -> Path:
    folder = root / "Model-7B" / "Female_T1"
    folder.mkdir(parents=True)
    for k in range(12):
        (folder / f"Model-7B_Female_T1_output_{k}.csv").write_text(HEADER + rows, encoding="utf-8")
    return root / "Model-7B"


def test_the_authors_numbering_of_prompt_types():
    assert AUTHORS_INDEX["0"] == 0 and AUTHORS_INDEX["00"] == 1
    assert [AUTHORS_INDEX[str(i)] for i in range(1, 11)] == list(range(2, 12))


def test_a_folder_path_gives_stored_perplexities_keyed_by_sentence_id(tmp_path):
    backend = create_backend(ReplayOptions(path=str(write_folder(tmp_path))), tmp_path)
    stored = backend.scorer()
    assert isinstance(stored, StoredPerplexities)
    assert stored.identity.backend == "replay" and stored.identity.model == "Model-7B"
    file, values = stored.perplexities(FEMALE, MALE, "1")
    assert file.endswith("Model-7B_Female_T1_output_2.csv")
    assert values == {"7": (10.5, 12.0)}
    with pytest.raises(CapabilityError):
        stored.check_loglikelihood()
    with pytest.raises(CapabilityError):
        backend.templater()
    with pytest.raises(CapabilityError):
        backend.generator()


def test_a_specification_the_folder_lacks_is_a_missing_data_error(tmp_path):
    stored = TWBiasResultFolder(write_folder(tmp_path))
    with pytest.raises(MissingDataError, match="Male_T2"):
        stored.perplexities(MALE, FEMALE, "1")


def test_a_bad_number_names_file_row_and_field(tmp_path):
    stored = TWBiasResultFolder(write_folder(tmp_path, "0,7,女人愛花錢,x,男人愛花錢,12.0,1.5\n"))
    with pytest.raises(DataError) as error:
        stored.perplexities(FEMALE, MALE, "0")
    assert (error.value.row, error.value.field) == (2, "origin_ppl")
    assert error.value.file.endswith("_output_0.csv")


def test_a_folder_without_result_files_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="no TWBias result CSVs"):
        create_backend(ReplayOptions(path=str(tmp_path)), tmp_path)
