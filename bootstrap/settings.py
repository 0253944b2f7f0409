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

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from culturebias.adapters.model_options import EMBEDDED_DEFAULT_MODEL, ModelOptions  # noqa: F401
from culturebias.domain.errors import ConfigError, UnknownNameError

SECRET_KEYS = frozenset({"api_key"})


class ModelSettings(ModelOptions):
    """The common ``model.*`` keys; every other ``model.*`` key belongs to the chosen backend.

    ``backend_options()`` validates all of them against the backend's own options
    model (``HFOptions``, ``OpenAIOptions``, ...), which is what adapters receive.
    """

    model_config = ConfigDict(extra="allow", frozen=False)

    @model_validator(mode="before")
    @classmethod
    def _secrets_stay_secret(cls, values: Any) -> Any:
        # Backend keys arrive untyped; a secret must be wrapped before anything can print it.
        if isinstance(values, dict):
            values = {k: SecretStr(v) if k in SECRET_KEYS and isinstance(v, str) else v for k, v in values.items()}
        return values

    def backend_options(self, keep_known_only: bool = False) -> ModelOptions:
        """The typed options of ``model.backend``; an unknown key is an error naming the backend's keys.

        ``keep_known_only`` drops keys the backend does not have (a judge on another
        backend inherits the evaluated model's settings, not all of which apply).
        """
        from culturebias.bootstrap.registry import registry

        descriptor = registry().backend(self.backend)
        options_model = descriptor.options_model()
        values = self.model_dump()
        if keep_known_only:
            values = {k: v for k, v in values.items() if k in options_model.model_fields}
        unknown = [k for k in values if k not in options_model.model_fields]
        owners = _backends_with_option(unknown[0]) if unknown else []
        if owners:
            raise ConfigError(
                f"model.{unknown[0]} is not a setting of backend {self.backend!r}; it belongs to "
                + ", ".join(repr(o) for o in owners)
                + f" (set model.backend={owners[0]}, or drop model.{unknown[0]})"
            )
        if unknown:
            raise UnknownNameError(
                "setting", f"model.{unknown[0]}", [f"model.{k}" for k in options_model.model_fields], f"for backend {self.backend!r}"
            )
        try:
            return options_model.model_validate(values)
        except ValidationError as error:
            raise ConfigError(explain_validation_error(error, prefix="model")) from None


def _backends_with_option(key: str) -> list[str]:
    from culturebias.bootstrap.registry import BackendDescriptor, registry

    return [
        d.name for d in registry().backends.all() if isinstance(d, BackendDescriptor) and key in d.options_model().model_fields
    ]


class JudgeSettings(BaseModel):
    """The judge model (McBE BA, LIBRA knowledge boundary). Unset fields follow ``model``."""

    model_config = ConfigDict(extra="forbid")

    backend: str | None = None
    path: str | None = None
    max_retries: int = 3


class StoreSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: str = "sqlite"  # sqlite | jsonl | memory | a plugin's
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

    @model_validator(mode="after")
    def _registered_names(self) -> "Settings":
        from culturebias.bootstrap.registry import registry

        registry().store(self.store.backend)
        self.model.backend_options()  # the backend exists and owns every model.* key given
        return self

    def redacted(self) -> dict[str, Any]:
        """The configuration as stored with a run: secrets never leave the process."""
        data = self.model_dump(mode="json")
        data["model"] = self.model.backend_options().model_dump(mode="json")
        if data["model"].get("api_key"):
            data["model"]["api_key"] = "**redacted**"
        return data

    def resume_identity(self) -> dict[str, Any]:
        """The part of the configuration that changes the numbers: it decides which run ``--resume`` continues.

        Where results go (``store``) and how a run shows progress, logs or reports
        (``run.*`` except ``seed``) do not count.
        """
        config = self.redacted()
        identity = {k: v for k, v in config.items() if k not in {"store", "run"}}
        identity["run"] = {"seed": config["run"]["seed"]}
        return identity

    def protocol_options(self, benchmark: str) -> BaseModel:
        """``protocol.*`` validated by the benchmark's own options model."""
        from culturebias.bootstrap.registry import registry

        options_model = registry().benchmark(benchmark).options_model()
        unknown = [k for k in self.protocol if k not in options_model.model_fields]
        if unknown:
            raise UnknownNameError(
                "setting", f"protocol.{unknown[0]}", [f"protocol.{k}" for k in options_model.model_fields], f"for benchmark {benchmark!r}"
            )
        try:
            return options_model.model_validate(self.protocol)
        except ValidationError as error:
            raise ConfigError(f"protocol settings for {benchmark}: " + explain_validation_error(error, prefix="protocol")) from None


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
        raise ConfigError(explain_validation_error(error)) from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config file {config_file}: {error}") from None
    return Settings.model_validate(loaded.model_dump())


def explain_validation_error(error: ValidationError, prefix: str = "") -> str:
    """One line per error, each naming the dotted key; an unknown key gets a did-you-mean."""
    lines = []
    for item in error.errors():
        parts = [str(p) for p in item["loc"]]
        key = ".".join([prefix, *parts] if prefix else parts)
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            section = parts[:-1] if not prefix else [prefix, *parts[:-1]]
            message = "not a setting" + _did_you_mean(parts[-1], _known_keys(section), section)
        lines.append(f"{key}: {message}")
    return ("invalid configuration: " if not prefix else "") + "; ".join(lines)


def _known_keys(section: list[str]) -> list[str]:
    model: Any = Settings
    for part in section:
        field = getattr(model, "model_fields", {}).get(part)
        annotation = getattr(field, "annotation", None)
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(getattr(model, "model_fields", {}))


def _did_you_mean(name: str, known: list[str], section: list[str]) -> str:
    import difflib

    full = [".".join([*section, k]) for k in known]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {'.'.join([*section, close[0]])!r}?"
    return f" (known: {', '.join(full)})" if full else ""
