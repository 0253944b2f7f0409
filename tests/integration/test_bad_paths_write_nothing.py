"""A bad model, data or store path fails before anything is written: no output folder, no store, no manifest."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import culturebias
from culturebias.adapters.hf import model_location
from culturebias.errors import ConfigError, DataError, ModelLoadError

BUNDLED_KOBBQ = Path(culturebias.__file__).parent / "adapters" / "bundled" / "kobbq"
OPTIONS = {"limit": 2, "prompts": "1"}


@pytest.fixture(autouse=True)
def _fresh_hub_resolutions(monkeypatch):
    monkeypatch.setattr(model_location, "_resolved", {})
    for name in model_location.OFFLINE_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def nothing_written(tmp_path: Path, *keep: str) -> None:
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(keep)


@pytest.mark.parametrize(
    ("model", "error", "text"),
    [
        ({"path": "{tmp}/missing-model"}, ConfigError, r"is not a model folder \(no such file or folder\)"),
        ({"path": "{tmp}/not-a-model"}, ConfigError, "a folder without config.json"),
        ({"path": "{tmp}/missing.gguf"}, ConfigError, "no such GGUF file"),
        ({"path": "embedded:smollm3"}, ConfigError, "unknown embedded model"),
        ({"backend": "replay", "path": "{tmp}/answers.jsonl"}, ConfigError, "does not exist"),
        ({"backend": "onnx", "path": "{tmp}/missing-model"}, ConfigError, "is not a model folder"),
    ],
)
def test_a_bad_model_path_writes_nothing(model, error, text, tmp_path):
    (tmp_path / "not-a-model").mkdir()
    model = {k: v.format(tmp=tmp_path) for k, v in model.items()}
    with pytest.raises(error, match=text):
        culturebias.evaluate("kobbq", model=model, options=OPTIONS, out=tmp_path / "out")
    nothing_written(tmp_path, "not-a-model")


def test_a_bad_judge_path_writes_nothing(tmp_path):
    (tmp_path / "answers.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match="missing-judge"):
        culturebias.evaluate(
            "mcbe", model={"backend": "replay", "path": str(tmp_path / "answers.jsonl")},
            judge={"path": str(tmp_path / "missing-judge")}, options={"limit": 1, "tasks": "ba"}, out=tmp_path / "out",
        )  # fmt: skip
    nothing_written(tmp_path, "answers.jsonl")


def test_unreadable_data_writes_nothing(tmp_path):
    data = tmp_path / "kobbq"
    shutil.copytree(BUNDLED_KOBBQ, data)
    samples = data / "KoBBQ_test_samples.tsv"
    samples.write_bytes(samples.read_bytes()[:4000] + b"\xff\xfe broken\n")  # an undecodable byte in a row
    with pytest.raises(DataError, match="KoBBQ_test_samples.tsv"):
        culturebias.evaluate("kobbq", model={"path": str(tmp_path / "no-model-needed")}, data=data, options=OPTIONS, out=tmp_path / "out")
    nothing_written(tmp_path, "kobbq")


@pytest.mark.parametrize(
    ("store", "text"),
    [
        ({"path": "{tmp}/a-file/results.sqlite"}, "lies under"),
        ({"path": "{tmp}/a-folder"}, "is a folder, not a SQLite file"),
        ({"backend": "jsonl", "path": "{tmp}/a-file"}, "is a file, not a JSONL store folder"),
    ],
)
def test_a_bad_store_path_writes_nothing(store, text, tmp_path):
    (tmp_path / "a-file").write_text("not a store", encoding="utf-8")
    (tmp_path / "a-folder").mkdir()
    store = {k: v.format(tmp=tmp_path) for k, v in store.items()}
    with pytest.raises(ConfigError, match=text):
        culturebias.evaluate("kobbq", store=store, options=OPTIONS, out=tmp_path / "out")
    nothing_written(tmp_path, "a-file", "a-folder")
    assert not list((tmp_path / "a-folder").iterdir())


def test_an_unresolvable_hub_id_fails_at_once_offline_naming_the_id_and_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(model_location, "_ask_hub", lambda *a: pytest.fail("offline: the hub is not asked"))
    with pytest.raises(ModelLoadError) as caught:  # at once: the hub is never asked (above), nothing is retried
        culturebias.evaluate("kobbq", model={"path": "no-such-org/no-such-model"}, options=OPTIONS, out=tmp_path / "out")
    message = str(caught.value)
    assert "'no-such-org/no-such-model'" in message and "HF_HUB_OFFLINE is set" in message
    assert "point model.path at its folder" in message
    nothing_written(tmp_path)


class RepositoryNotFoundError(Exception):
    """Stands for huggingface_hub's: the hub answered that it has no such model."""


@pytest.mark.parametrize(
    ("raised", "text"),
    [
        (RepositoryNotFoundError("404 Client Error: Repository Not Found"), "the hub has no such model"),
        (ConnectionError("[Errno -2] Name or service not known"), r"the hub cannot be reached \(ConnectionError"),
    ],
)
def test_a_hub_id_that_does_not_resolve_fails_after_one_request(raised, text, tmp_path, monkeypatch):
    asked = []

    def ask(repo_id, revision):
        asked.append(repo_id)
        raise raised

    monkeypatch.setattr(model_location, "_ask_hub", ask)
    monkeypatch.setattr(model_location, "in_hub_cache", lambda *a: False)
    with pytest.raises(ModelLoadError, match=text) as caught:
        culturebias.evaluate("kobbq", model={"path": "org/mistyped-model"}, options=OPTIONS, out=tmp_path / "out")
    assert asked == ["org/mistyped-model"] and "point model.path at its folder" in str(caught.value)
    nothing_written(tmp_path)


def test_an_unreachable_hub_loads_a_cached_model_from_the_cache_alone(monkeypatch):
    monkeypatch.setattr(model_location, "_ask_hub", lambda *a: (_ for _ in ()).throw(ConnectionError("no network")))
    monkeypatch.setattr(model_location, "in_hub_cache", lambda *a: True)
    assert model_location.resolve_hub_id("org/cached-model", None) is True  # from_pretrained(local_files_only=True)
    monkeypatch.setattr(model_location, "_ask_hub", lambda *a: None)
    assert model_location.resolve_hub_id("org/other-model", None) is False


def test_the_cli_exits_5_at_once_for_a_mistyped_hub_id_offline(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "culturebias.bootstrap.cli", "run", "kobbq", "--out", str(tmp_path / "out"), "--limit", "2",
         "--set", "model.path=no-such-org/no-such-model"],
        capture_output=True, text=True, timeout=120, env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert done.returncode == 5, done.stderr
    assert "Retrying" not in done.stderr and "retry" not in done.stderr.lower()  # one check, no waiting for the hub
    assert "no-such-org/no-such-model" in done.stderr and "point model.path at its folder" in done.stderr
    nothing_written(tmp_path)
