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

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from culturebias.domain.model_options import EMBEDDED_DEFAULT_MODEL, ModelOptions  # noqa: F401
from culturebias.domain.ray_options import RayOptions as RaySettings
from culturebias.domain.errors import ConfigError, UnknownNameError
from culturebias.domain.redaction import redact_dsn, redact_value
from culturebias.domain.sampling import SamplingSettings

SECRET_KEYS = frozenset({"api_key"})


def _wrap_secrets(values: Any) -> Any:  # Any: the raw input, before validation
    # Backend keys arrive untyped; a secret must be wrapped before anything can print it.
    if isinstance(values, dict):
        values = {k: SecretStr(v) if k in SECRET_KEYS and isinstance(v, str) else v for k, v in values.items()}
    return values


class ModelSettings(ModelOptions):
    """The common ``model.*`` keys; every other ``model.*`` key belongs to the chosen backend.

    ``backend_options()`` validates all of them against the backend's own options
    model (``HFOptions``, ``OpenAIOptions``, ...), which is what adapters receive.
    """

    model_config = ConfigDict(extra="allow", frozen=False)

    @model_validator(mode="before")
    @classmethod
    def _secrets_stay_secret(cls, values: Any) -> Any:  # Any: the raw input, before validation
        return _wrap_secrets(values)

    def backend_options(self) -> ModelOptions:
        """The typed options of ``model.backend``; an unknown key is an error naming the backend's keys."""
        from culturebias.bootstrap.registry import registry

        descriptor = registry().backend(self.backend)
        options_model = descriptor.options_model()
        values = self.model_dump()
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


def _options_fields(benchmark: str) -> dict[str, FieldInfo]:
    """A benchmark's protocol.* keys; none for a plugin that fails to load."""
    from culturebias.bootstrap.registry import registry
    from culturebias.domain.errors import PluginError

    try:
        return dict(registry().benchmark(benchmark).options_model().model_fields)
    except PluginError:
        return {}


def _backends_with_option(key: str) -> list[str]:
    from culturebias.bootstrap.registry import BackendDescriptor, registry

    return [
        d.name for d in registry().backends.all() if isinstance(d, BackendDescriptor) and key in d.options_model().model_fields
    ]


class JudgeSettings(BaseModel):
    """The judge model (McBE BA, LIBRA knowledge boundary): a model of its own, on any backend.

    ``judge.backend`` and ``judge.path`` name it; every other ``judge.*`` key except
    ``max_retries`` is an option of the judge's backend (``judge.api_base``,
    ``judge.api_key_env``, ``judge.max_concurrency``, ``judge.timeout_s``,
    ``judge.chat_template``, ``judge.sampling.*``, ...), checked against that backend's
    options like ``model.*`` (``Settings.judge_options``). A judge on the evaluated
    model's backend inherits its ``model.*`` settings; one on another backend takes
    only its own ``judge.*`` keys. Nothing set: the evaluated model judges.
    """

    model_config = ConfigDict(extra="allow")

    backend: str | None = None  # the judge's backend; unset: the evaluated model's
    path: str | None = None  # the judge model (as model.path); unset with backend unset: the evaluated model judges
    max_retries: int = 3  # how often a reply without a number is asked again (with a reminder) before it is counted

    @model_validator(mode="before")
    @classmethod
    def _secrets_stay_secret(cls, values: Any) -> Any:  # Any: the raw input, before validation
        return _wrap_secrets(values)

    @property
    def backend_keys(self) -> dict[str, Any]:  # Any: TOML/JSON values
        """The judge's own backend options (every ``judge.*`` key but ``max_retries``)."""
        own = {"backend": self.backend, "path": self.path}
        return {**{k: v for k, v in own.items() if v is not None}, **(self.model_extra or {})}


def judge_backend_options(judge: JudgeSettings, model: ModelSettings) -> ModelOptions | None:
    """The judge's typed backend options, or None when the evaluated model is the judge.

    An unknown key is an error naming ``judge.<key>`` and the judge backend's keys.
    """
    own = judge.backend_keys
    if not own:
        return None
    backend = own.get("backend") or model.backend
    from culturebias.bootstrap.registry import registry

    options_model = registry().backend(backend).options_model()
    unknown = [k for k in own if k not in options_model.model_fields]
    if unknown:
        owners = _backends_with_option(unknown[0])
        where = f"for the judge's backend {backend!r}" + (f" (a setting of {', '.join(owners)}: set judge.backend={owners[0]})" if owners else "")
        raise UnknownNameError("setting", f"judge.{unknown[0]}", [f"judge.{k}" for k in options_model.model_fields], where)
    # The judge decodes greedily unless judge.sampling says otherwise: model.sampling is the evaluated model's.
    inherited = {k: v for k, v in model.model_dump().items() if k != "sampling"} if backend == model.backend else {}
    try:
        return options_model.model_validate({**inherited, **own, "backend": backend})
    except ValidationError as error:
        raise ConfigError(explain_validation_error(error, prefix="judge")) from None


class StoreSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: str = "sqlite"  # sqlite | jsonl | memory | postgres | a plugin's
    path: str | None = None  # default: <out>/results.sqlite or <out>/results/
    # A database server's connection string (postgres: postgresql://user@host:5432/db). Kept out
    # of repr; a password written into it is redacted wherever the configuration is shown or stored.
    dsn: str | None = Field(None, repr=False)
    password_env: str = "PGPASSWORD"  # the environment variable holding the server's password
    password_file: str | None = None  # or a file holding it (first line); wins over password_env


class DataSettings(BaseModel):
    # The only extra keys allowed are per-benchmark sections, ``data.<benchmark>.path`` (checked below).
    model_config = ConfigDict(extra="allow")

    # The benchmark's data folder (or file), in the authors' format; unset: the bundled or embedded data.
    # With several benchmarks in one call, data.<benchmark>.path gives each its own.
    path: str | None = None

    @model_validator(mode="after")
    def _benchmark_sections(self) -> "DataSettings":
        from culturebias.bootstrap.registry import registry

        names = registry().benchmarks.names()
        for key, value in (self.model_extra or {}).items():
            if key not in names or not isinstance(value, dict):
                raise UnknownNameError("setting", f"data.{key}", ["data.path", *(f"data.{n}.path" for n in names)])
            for inner in value:
                if inner != "path":
                    raise UnknownNameError("setting", f"data.{key}.{inner}", [f"data.{key}.path"])
        return self

    def path_for(self, benchmark: str) -> str | None:
        """``data.<benchmark>.path`` where given, else ``data.path``."""
        section = (self.model_extra or {}).get(benchmark)
        return section.get("path") if section else self.path


class RunSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = 0  # the run's seed: bootstrap intervals, sampled generation (model.sampling.seed), samples
    # Resamples of the 95% bootstrap interval of every headline metric (seeded by ``seed``); 0: none.
    bootstrap_resamples: int = Field(2000, ge=0)
    # auto: bars on stderr only when it is a terminal and logs are not JSON; true/false mean always/never.
    progress: Literal["auto", "always", "never"] = "auto"
    log_format: Literal["console", "json"] = "console"  # json: one structlog JSON object per line, for machines
    log_level: str = "info"  # debug, info, warning, error
    chunk_size: int = Field(2048, ge=1)  # requests per backend call (its batches are planned within one)
    # A backend that delivers batch by batch has its results committed at least this often.
    commit_seconds: float = Field(2.0, ge=0)
    # A run's writer renews its lease in the store every quarter of this; a lease not renewed for this
    # long (or held by a process on this host that is gone) is stale, and --resume may take the run.
    lease_seconds: float = Field(60.0, gt=0)
    cache_dir: str | None = None  # converted/exported models; default ~/.cache/culturebias
    report: Literal["markdown", "none"] = "markdown"  # none: summary.json only, no report.md / report.html
    # The run is executed this many times, repeat i sampling with seed + i (application/repeats.py).
    repeats: int = Field(1, ge=1)
    # Where model requests run: this process (local), or model replicas on a Ray cluster (ray.*).
    executor: Literal["local", "ray"] = "local"
    # Budgets (``culturebias plan`` shows what a run needs): a run above one is refused before it starts,
    # a run that reaches one stops (its work stored, --resume continues). None: no limit.
    max_requests: int | None = Field(None, ge=1)
    max_tokens: int | None = Field(None, ge=1)  # input and output tokens
    max_cost: float | None = Field(None, gt=0)  # at model.price_per_1k_* (output at max_new_tokens)
    # The plan shown once a run is recorded (requests, tokens, distinct tokens, cost; plan.json): count (the
    # default) counts on placeholder ports and asks the model nothing (`culturebias plan` calibrates an ETA); auto
    # also calibrates an ETA on a local model; always calibrates on any; never makes none (a budget still does).
    plan: Literal["count", "auto", "always", "never"] = "count"

    @field_validator("progress", mode="before")
    @classmethod
    def _progress_as_boolean(cls, value: Any) -> Any:  # Any: the raw input, before validation
        if isinstance(value, bool):
            return "always" if value else "never"
        if isinstance(value, str) and value.strip().lower() in _BOOLEAN_WORDS:
            return "always" if _BOOLEAN_WORDS[value.strip().lower()] else "never"
        return value


_BOOLEAN_WORDS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CULTUREBIAS_", env_nested_delimiter="__", extra="forbid")

    model: ModelSettings = Field(default_factory=ModelSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    data: DataSettings = Field(default_factory=DataSettings)
    run: RunSettings = Field(default_factory=RunSettings)
    ray: RaySettings = Field(default_factory=RaySettings)
    # Protocol options, validated by the chosen benchmark's own settings model.
    protocol: dict[str, Any] = Field(default_factory=dict)  # Any: TOML/JSON values, validated per benchmark
    # ``model.*`` as the backend's own frozen options (``model_options()``), and the section they were read from.
    _model_options: ModelOptions | None = PrivateAttr(default=None)
    _model_options_of: ModelSettings | None = PrivateAttr(default=None)

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
        self.model_options()  # the backend exists and owns every model.* key given
        self.judge_options()  # likewise the judge's backend and every judge.* key
        return self

    def model_options(self) -> ModelOptions:
        """``model.*`` validated once by the backend's own options model: the frozen object adapters receive
        (``batch_size`` a number or an ``AutoBatch`` policy). A replaced ``model`` section is read again."""
        if self._model_options is None or self._model_options_of is not self.model:
            self._model_options = self.model.backend_options()
            self._model_options_of = self.model
        return self._model_options

    def judge_options(self) -> ModelOptions | None:
        """The judge's backend options (``judge_backend_options``); None: the evaluated model judges."""
        return judge_backend_options(self.judge, self.model)

    def redacted(self) -> dict[str, Any]:  # Any: the JSON configuration
        """The configuration as stored with a run: secrets never leave the process."""
        data = self.model_dump(mode="json")
        data["model"] = self.model_options().model_dump(mode="json")
        for section in ("model", "judge"):
            if data[section].get("api_key"):
                data[section]["api_key"] = "**redacted**"
        if data["store"].get("dsn"):
            data["store"]["dsn"] = redact_dsn(data["store"]["dsn"])
        if data["store"].get("path"):  # as the run opened it: found again from any working directory
            data["store"]["path"] = str(Path(data["store"]["path"]).expanduser().absolute())

        # Every string, wherever a credential was written into it (URL userinfo, key-like query
        # parameters, secret-named keys), not only the fields known to hold one.
        return redact_value(data)

    def resume_identity(self, model_weights: dict[str, str] | None = None) -> dict[str, Any]:  # Any: TOML/JSON values
        """The part of the configuration that changes the numbers: it decides which run ``--resume`` continues.

        Where results go (``store``) and how a run shows progress, logs or reports
        (``run.*`` except ``seed`` and ``chunk_size``, which decides what a backend
        batches together) do not count. ``model.*`` (batch size, padding, prefix
        reuse, ...) does, and so does ``model_weights``: the sizes and hashes of a
        local model's weight files, which the caller reads (``adapters.hf.weights_fingerprint``).
        """
        config = self.redacted()
        # Where requests run (``ray.*``) changes no score beyond the float32 last bits that batch composition moves:
        # a local run and a Ray run resume each other.
        identity = {k: v for k, v in config.items() if k not in {"store", "run", "ray"}}
        identity["run"] = {"seed": config["run"]["seed"], "chunk_size": config["run"]["chunk_size"]}
        # How the openai request cache is used changes no number (it keeps valid replies only):
        # ``--resume --set model.cache=refresh`` continues the same run.
        # Nor do its prices and the run's budgets (they decide whether it runs, not what it computes).
        identity["model"] = {k: v for k, v in identity["model"].items() if k != "cache" and not k.startswith("price_per_1k")}
        # Nor does protocol.validity: the rules are computed on the answers at the end (PROTOCOLS §6), so a run
        # continues with them switched either way.
        if isinstance(identity.get("protocol"), dict) and "validity" in identity["protocol"]:
            identity["protocol"] = {k: v for k, v in identity["protocol"].items() if k != "validity"}
        # Sampling and repeats count where set; at their defaults the identity of earlier runs is kept.
        if self.model_options().sampling == SamplingSettings():
            identity["model"].pop("sampling", None)
        if self.run.repeats != 1:
            identity["run"]["repeats"] = self.run.repeats
        if model_weights:
            identity["model_weights"] = model_weights
        return identity

    def protocol_options(self, benchmark: str, selected: list[str] | None = None) -> BaseModel:
        """``protocol.*`` as it applies to ``benchmark`` (see ``for_benchmark``), validated by its options model."""
        from culturebias.bootstrap.registry import registry

        options_model = registry().benchmark(benchmark).options_model()
        try:
            return options_model.model_validate(self._protocol_for(benchmark, selected or [benchmark]))
        except ValidationError as error:
            own, others = self.protocol.get(benchmark), [n for n in selected or [] if n != benchmark]
            shared = sorted({str(e["loc"][0]) for e in error.errors() if e["loc"] and str(e["loc"][0]) in self.protocol
                             and others and not (isinstance(own, dict) and str(e["loc"][0]) in own)})
            hint = "".join(f"; a bare protocol.{k} reaches every benchmark of this run ({', '.join(selected or [])}): set it "
                           f"for one with protocol.<benchmark>.{k}, e.g. protocol.{others[0]}.{k}" for k in shared)
            raise ConfigError(f"protocol settings for {benchmark}: " + explain_validation_error(error, prefix="protocol") + hint) from None

    def for_benchmark(self, benchmark: str, selected: list[str] | None = None) -> "Settings":
        """These settings as ``benchmark`` runs them, one of ``selected`` (default: it alone).

        ``protocol.<benchmark>.<key>`` applies to that benchmark only and wins over a plain
        ``protocol.<key>``, which applies to every selected benchmark whose options have that
        key and is an error when none has it. ``data.<benchmark>.path`` wins over ``data.path``;
        with several benchmarks a plain ``data.path`` is an error (one folder cannot hold the
        data of two benchmarks). The result, recorded with the run, has a flat ``protocol`` and
        one ``data.path``, as a run of that benchmark alone with the same options would.
        """
        selected = selected or [benchmark]
        if len(selected) > 1 and self.data.path is not None and not (self.data.model_extra or {}).get(benchmark):
            raise ConfigError(
                f"data.path is one benchmark's data, and {len(selected)} benchmarks run ({', '.join(selected)}); "
                f"set data.{benchmark}.path instead"
            )
        self.protocol_options(benchmark, selected)  # every value valid before anything runs
        return self.model_copy(
            update={
                "protocol": self._protocol_for(benchmark, selected),
                "data": DataSettings(path=self.data.path_for(benchmark)),
            }
        )

    def _protocol_for(self, benchmark: str, selected: list[str]) -> dict[str, Any]:  # Any: TOML/JSON values
        from culturebias.bootstrap.registry import registry
        from culturebias.domain.errors import PluginError

        names = registry().benchmarks.names()
        sections = {k: v for k, v in self.protocol.items() if k in names and isinstance(v, dict)}
        plain = {k: v for k, v in self.protocol.items() if k not in sections}
        # A section of a benchmark not run here is ignored (one config file may hold every
        # benchmark's), but a key its benchmark does not have is still an error.
        for name, section in sections.items():
            try:
                fields = registry().benchmark(name).options_model().model_fields
            except PluginError:
                if name in selected:
                    raise
                continue  # a broken plugin's section, not run here: `culturebias list` reports the plugin
            unknown = [k for k in section if k not in fields]
            if unknown:
                raise UnknownNameError(
                    "setting", f"protocol.{name}.{unknown[0]}", [f"protocol.{name}.{k}" for k in fields], f"for benchmark {name!r}"
                )
        known = {k: None for name in selected for k in registry().benchmark(name).options_model().model_fields}
        unknown = [k for k in plain if k not in known]
        if unknown:
            runs = f"benchmark {selected[0]!r}" if len(selected) == 1 else f"any of the benchmarks {', '.join(selected)}"
            owners = [n for n in names if n not in selected and unknown[0] in _options_fields(n)]
            if owners:
                raise ConfigError(f"protocol.{unknown[0]} is not a setting of {runs}; it belongs to {', '.join(owners)}")
            raise UnknownNameError("setting", f"protocol.{unknown[0]}", [f"protocol.{k}" for k in known], f"for {runs}")
        own = registry().benchmark(benchmark).options_model().model_fields
        return {**{k: v for k, v in plain.items() if k in own}, **sections.get(benchmark, {})}


def parse_assignment(text: str) -> tuple[list[str], str]:
    if "=" not in text:
        raise ConfigError(f"--set expects key=value, got {text!r}")
    key, value = text.split("=", 1)
    parts = [p for p in key.strip().split(".") if p]
    if not parts:
        raise ConfigError(f"--set has an empty key in {text!r}")
    return parts, value.strip()


def _set_nested(target: dict[str, Any], parts: list[str], value: Any) -> None:  # Any: TOML/JSON values
    node = target
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def load_settings(
    config_file: str | Path | None = None,
    assignments: list[str] | None = None,
    *,
    limit: int | None = None,
    sample: int | None = None,
) -> Settings:
    """Build the settings: defaults, then the TOML file, the environment, ``limit`` (``--limit``) and
    ``sample`` (``--sample``), ints as given, under the assignments, and ``--set`` assignments."""
    if config_file is not None and not Path(config_file).is_file():
        what = "is a folder, not a TOML file" if Path(config_file).is_dir() else "does not exist"
        raise ConfigError(f"config file {config_file} {what}")
    given = {"limit": limit, "sample": sample}
    overrides: dict[str, Any] = {"protocol": {k: v for k, v in given.items() if v is not None}}  # Any: TOML/JSON values
    if not overrides["protocol"]:
        overrides = {}
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
    except UnicodeDecodeError as error:
        raise ConfigError(f"config file {config_file}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise ConfigError(f"config file {config_file}: cannot be read ({error.strerror or error})") from None
    except SettingsError as error:  # an environment variable holding a section that is not JSON
        cause = f" ({error.__cause__})" if error.__cause__ else ""
        raise ConfigError(f"{error}{cause}; a CULTUREBIAS_<SECTION> variable holds a JSON object") from None
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
    model: type[BaseModel] = Settings
    for part in section:
        field = model.model_fields.get(part)
        annotation = field.annotation if field is not None else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(model.model_fields)


def _did_you_mean(name: str, known: list[str], section: list[str]) -> str:
    import difflib

    full = [".".join([*section, k]) for k in known]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {'.'.join([*section, close[0]])!r}?"
    return f" (known: {', '.join(full)})" if full else ""
