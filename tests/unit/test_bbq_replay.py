"""The replay backend: answers from a JSONL file, keyed by sample, prompt and permutation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from culturebias.adapters.replay.backend import ReplayOptions, create_backend
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.domain.errors import CapabilityError, ConfigError, DataError, ReplayMissingError
from culturebias.domain.requests import GenerationParams, GenerationRequest, RequestKey


def write(path: Path, records: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records), encoding="utf-8")
    return path


def request(sample_id: str, prompt_id: str, permutation: int, turn: str = "answer") -> GenerationRequest:
    return GenerationRequest(prompt="ignored", key=AnswerKey(sample_id, prompt_id, permutation, turn).encode())


def backend(path: Path):
    return create_backend(ReplayOptions(backend="replay", path=str(path)), Path("."))


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
        ('{"sample_id": "s", "prompt_id": 1, "permutation": [0], "raw": "A"}', "permutation"),
        ('{"sample_id": {"id": "s"}, "prompt_id": 1, "permutation": 0, "raw": "A"}', "sample_id"),
        ('{"sample_id": "s", "prompt_id": 1, "permutation": 0, "raw": 5}', "raw"),
        ("not json", None),
    ],
)
def test_malformed_lines_are_data_errors_naming_the_line(tmp_path, line, field):
    # Lines are read when the generator is built; key fields are checked when the first keyed request comes.
    path = write(tmp_path / "a.jsonl", [{"sample_id": "ok", "prompt_id": 1, "permutation": 0, "raw": "A"}, line])
    with pytest.raises(DataError) as error:
        backend(path).generator().generate([request("ok", "1", 0)])
    assert error.value.row == 2 and error.value.field == field
    assert error.value.file == str(path)


def test_duplicate_answers_are_data_errors(tmp_path):
    record = {"sample_id": "s", "prompt_id": 1, "permutation": 0, "raw": "A"}
    path = write(tmp_path / "a.jsonl", [record, {**record, "prompt_id": "1"}])
    with pytest.raises(DataError, match="duplicate answer.*first at line 1") as error:
        backend(path).generator().generate([request("s", "1", 0)])
    assert "duplicate answer for sample_id='s', prompt_id='1', permutation=0 (first at line 1)" in str(error.value)
    assert error.value.row == 2


def test_records_are_matched_on_the_key_fields_named_by_the_request(tmp_path):
    # Replay knows no protocol: any request key's fields select the record; other fields are ignored.
    path = write(
        tmp_path / "a.jsonl",
        [
            {"item": "x", "round": 2, "raw": "first", "note": "ignored"},
            {"item": "x", "round": " 3 ", "raw": "second", "critique": "why"},
            {"item": "y", "round": 2, "raw": "third. More", "critique": 7},
        ],
    )
    generator = backend(path).generator()
    keys = [
        RequestKey.of({"item": "x", "round": 3}),
        RequestKey.of({"round": "2", "item": "x"}),
        RequestKey.of({"item": "x", "round": 3}, answer="critique"),
        RequestKey.of({"item": "y", "round": 2}, answer="critique"),  # not text: empty, like a missing turn
    ]
    replies = generator.generate([GenerationRequest(prompt="p", key=k.encode()) for k in keys])
    assert [r.text for r in replies] == ["second", "first", "why", ""]
    cut = generator.generate([GenerationRequest(prompt="p", key=keys[0].encode(), params=GenerationParams(stop=(".",)))])
    assert cut[0].text == "second"
    stopped = generator.generate([GenerationRequest(prompt="p", key=RequestKey.of({"item": "y", "round": 2}).encode(), params=GenerationParams(stop=(".",)))])
    assert stopped[0].text == "third"  # a reply ends before the request's first stop string, like any generator's
    with pytest.raises(ReplayMissingError, match="no answer for item='z', round=2"):
        generator.generate([GenerationRequest(prompt="p", key=RequestKey.of({"item": "z", "round": 2}).encode())])


def test_answer_keys_encode_to_generic_request_keys():
    key = AnswerKey("s1", "q_if_cot", 2, "reasoning")
    generic = RequestKey.decode(key.encode())
    assert generic.fields == (("sample_id", "s1"), ("prompt_id", "q_if_cot"), ("permutation", 2))
    assert generic.answer == "reasoning" and RequestKey.decode(AnswerKey("s1", "1", 0).encode()).answer == "raw"
    assert AnswerKey.decode(key.encode()) == key
    assert generic.describe() == "sample_id='s1', prompt_id='q_if_cot', permutation=2"
    with pytest.raises(ValueError):
        RequestKey.decode('["s1", "1", 0, "answer"]')


def test_replay_only_generates(tmp_path):
    replay = backend(write(tmp_path / "a.jsonl", []))
    for port in (replay.scorer, replay.templater, replay.pseudo_scorer):
        with pytest.raises(CapabilityError):
            port()
    with pytest.raises(CapabilityError):
        replay.generator().generate([GenerationRequest(prompt="no key")])
    with pytest.raises(ConfigError):
        create_backend(ReplayOptions(backend="replay"), Path("."))
    with pytest.raises(ConfigError):
        create_backend(ReplayOptions(backend="replay", path=str(tmp_path / "missing.jsonl")), Path("."))
