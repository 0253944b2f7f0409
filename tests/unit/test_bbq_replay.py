"""The replay backend: answers from a JSONL file, keyed by sample, prompt and permutation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from culturebias.adapters.replay import create_backend
from culturebias.bootstrap.settings import ModelSettings
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.domain.errors import CapabilityError, ConfigError, DataError, ReplayMissingError
from culturebias.domain.requests import GenerationRequest


def write(path: Path, records: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records), encoding="utf-8")
    return path


def request(sample_id: str, prompt_id: str, permutation: int, turn: str = "answer") -> GenerationRequest:
    return GenerationRequest(prompt="ignored", key=AnswerKey(sample_id, prompt_id, permutation, turn).encode())


def backend(path: Path):
    return create_backend(ModelSettings(backend="replay", path=str(path)), Path("."))


def test_answers_are_looked_up_by_their_key(tmp_path):
    path = write(
        tmp_path / "a.jsonl",
        [
            {"sample_id": "s1", "prompt_id": 1, "permutation": 0, "raw": "A"},
            {"sample_id": "s1", "prompt_id": "1", "permutation": "1", "raw": "정답은 B"},
            {"sample_id": "g-amb-1", "prompt_id": "q_if_cot", "permutation": 0, "raw": "C", "reasoning": "想一想"},
            "",
        ],
    )
    generator = backend(path).generator()
    replies = generator.generate([request("s1", "1", 1), request("s1", "1", 0), request("g-amb-1", "q_if_cot", 0, "reasoning")])
    assert [r.text for r in replies] == ["정답은 B", "A", "想一想"]
    assert generator.identity.backend == "replay" and generator.identity.kind == "replay"
    assert generator.identity.revision and len(generator) == 3


def test_a_missing_answer_names_the_first_missing_key(tmp_path):
    path = write(tmp_path / "a.jsonl", [{"sample_id": "s1", "prompt_id": 1, "permutation": 0, "raw": "A"}])
    generator = backend(path).generator()
    with pytest.raises(ReplayMissingError) as error:
        generator.generate([request("s1", "1", 0), request("s2", "1", 0), request("s3", "2", 1)])
    assert "sample_id='s2', prompt_id='1', permutation=0" in str(error.value)
    assert "2 answers of this batch are missing" in str(error.value)
    assert error.value.file == str(path)


@pytest.mark.parametrize(
    "line, field",
    [
        ('{"sample_id": "s", "prompt_id": 1, "raw": "A"}', "permutation"),
        ('{"sample_id": "s", "prompt_id": 1, "permutation": 3, "raw": "A"}', "permutation"),
        ('{"sample_id": "s", "prompt_id": 1, "permutation": 0, "raw": 5}', "raw"),
        ("not json", None),
    ],
)
def test_malformed_lines_are_data_errors_naming_the_line(tmp_path, line, field):
    path = write(tmp_path / "a.jsonl", [{"sample_id": "ok", "prompt_id": 1, "permutation": 0, "raw": "A"}, line])
    with pytest.raises(DataError) as error:
        backend(path).generator()
    assert error.value.row == 2 and error.value.field == field


def test_duplicate_answers_are_data_errors(tmp_path):
    record = {"sample_id": "s", "prompt_id": 1, "permutation": 0, "raw": "A"}
    path = write(tmp_path / "a.jsonl", [record, {**record, "prompt_id": "1"}])
    with pytest.raises(DataError, match="duplicate answer.*first at line 1"):
        backend(path).generator()


def test_replay_only_generates(tmp_path):
    replay = backend(write(tmp_path / "a.jsonl", []))
    for port in (replay.scorer, replay.templater, replay.pseudo_scorer):
        with pytest.raises(CapabilityError):
            port()
    with pytest.raises(CapabilityError):
        replay.generator().generate([GenerationRequest(prompt="no key")])
    with pytest.raises(ConfigError):
        create_backend(ModelSettings(backend="replay"), Path("."))
    with pytest.raises(ConfigError):
        create_backend(ModelSettings(backend="replay", path=str(tmp_path / "missing.jsonl")), Path("."))
