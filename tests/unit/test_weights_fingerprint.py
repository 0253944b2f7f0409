"""A local model's weights fingerprint: sizes and hashes of its weight files, hashed once per file version."""

from __future__ import annotations

import os
from pathlib import Path

from culturebias.adapters.hf import weights_fingerprint as wf
from culturebias.adapters.hf.options import HFOptions
from culturebias.domain.identity import ModelIdentity


def model_folder(root: Path) -> Path:
    folder = root / "model"
    (folder / "sub").mkdir(parents=True)
    (folder / "model-00001-of-00002.safetensors").write_bytes(b"a" * 100)
    (folder / "sub" / "model-00002-of-00002.safetensors").write_bytes(b"b" * 50)
    (folder / "config.json").write_text('{"hidden": 8}', encoding="utf-8")
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")  # fingerprinted separately
    (folder / "README.md").write_text("hello", encoding="utf-8")
    (folder / ".cache").mkdir()
    (folder / ".cache" / "x.safetensors").write_bytes(b"hidden")
    return folder


def test_weight_files_and_config_are_fingerprinted_by_size_and_hash(tmp_path):
    folder = model_folder(tmp_path)
    found = wf.weights_fingerprint(folder, tmp_path / "cache")
    assert sorted(found) == ["config.json", "model-00001-of-00002.safetensors", "sub/model-00002-of-00002.safetensors"]
    assert found["model-00001-of-00002.safetensors"].startswith("100:")


def test_each_file_is_hashed_once_per_version(tmp_path, monkeypatch):
    folder = model_folder(tmp_path)
    hashed: list[str] = []
    real = wf._sha256
    monkeypatch.setattr(wf, "_sha256", lambda path: hashed.append(path.name) or real(path))
    first = wf.weights_fingerprint(folder, tmp_path / "cache")
    assert len(hashed) == 3
    assert wf.weights_fingerprint(folder, tmp_path / "cache") == first and len(hashed) == 3, "read from the cache"

    weights = folder / "model-00001-of-00002.safetensors"
    stat = weights.stat()
    weights.write_bytes(b"c" * 100)  # same size, other weights
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    second = wf.weights_fingerprint(folder, tmp_path / "cache")
    assert hashed[3:] == ["model-00001-of-00002.safetensors"], "only the changed file is hashed again"
    assert second["model-00001-of-00002.safetensors"] != first["model-00001-of-00002.safetensors"]
    assert {k: v for k, v in second.items() if "00001" not in k} == {k: v for k, v in first.items() if "00001" not in k}


def test_the_resume_identity_names_local_weights_only(tmp_path):
    folder = model_folder(tmp_path)
    local = wf.model_weights_identity(HFOptions(path=str(folder)), tmp_path / "cache")
    assert local is not None and "config.json" in local
    assert wf.model_weights_identity(HFOptions(path="org/some-hub-model"), tmp_path / "cache") is None
    embedded = wf.model_weights_identity(HFOptions(path=None), tmp_path / "cache")
    assert embedded is not None and set(embedded) == {"package"}


def test_the_weights_fingerprint_is_part_of_the_cache_key_only_when_known():
    base = ModelIdentity(backend="hf", model="/m")
    assert base.cache_key() == ModelIdentity(backend="hf", model="/m", description="other").cache_key()
    assert ModelIdentity(backend="hf", model="/m", weights="aa").cache_key() != base.cache_key()
    assert ModelIdentity(backend="hf", model="/m", weights="aa").cache_key() != ModelIdentity(backend="hf", model="/m", weights="bb").cache_key()
    # Keys of identities without a weights fingerprint are what they were before the field existed.
    import hashlib
    import json

    stable = {k: v for k, v in base.model_dump().items() if k not in {"description", "parameters", "weights"}}
    assert base.cache_key() == hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest()[:16]
