"""The settings of one API call: keyword sections (objects, dicts or plain paths) layered over a base
``Settings``, the store object a host passes, and the quiet context an embedded call runs in."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeGuard

from pydantic import BaseModel, ValidationError

from culturebias.bootstrap.settings import (
    DataSettings,
    ModelSettings,
    RunSettings,
    Settings,
    StoreSettings,
    explain_validation_error,
    load_settings,
)
from culturebias.domain.errors import ConfigError
from culturebias.ports.results import ResultStore

SectionInput = BaseModel | Mapping[str, Any] | str | Path | None  # Any: a section given as a dict (TOML/JSON values)


def section(value: SectionInput, shorthand: str | None = None) -> dict[str, Any] | None:  # Any: TOML/JSON values
    """A settings section given as a model, a dict, or a plain string (that section's ``path``)."""
    if value is None:
        return None
    if isinstance(value, (str, Path)) and shorthand:
        return {shorthand: str(value)}
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_unset=False)
    if isinstance(value, Mapping):
        return dict(value)
    raise ConfigError(f"expected a settings object, a dict or a path, got {type(value).__name__}")


def is_store(value: object) -> TypeGuard[ResultStore]:
    return value is not None and not isinstance(value, (BaseModel, Mapping, str, Path)) and hasattr(value, "save_results")


def make_settings(
    *,
    settings: Settings | None = None,
    model: ModelSettings | Mapping[str, Any] | str | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    data: DataSettings | Mapping[str, Any] | str | Path | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    options: BaseModel | Mapping[str, Any] | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    store: StoreSettings | Mapping[str, Any] | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    judge: Mapping[str, Any] | BaseModel | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    run: RunSettings | Mapping[str, Any] | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    config_file: str | Path | None = None,
) -> Settings:
    """Settings from keyword sections layered over ``settings`` (or over defaults, a TOML file and the environment)."""
    base = settings if settings is not None else load_settings(config_file)
    values = base.model_dump()
    values["model"] = base.model.model_dump()
    for name, given in (
        ("model", section(model, "path")),
        ("data", section(data, "path")),
        ("store", section(store, "path")),
        ("judge", section(judge, "path")),
        ("run", section(run)),
        ("protocol", section(options)),
    ):
        if given is not None:
            values[name] = {**values[name], **given} if name != "protocol" else given
    try:
        return Settings.model_validate(values)
    except ValidationError as error:
        raise ConfigError(explain_validation_error(error)) from None


def with_sample(options: BaseModel | Mapping[str, Any] | None, sample: int | None) -> BaseModel | Mapping[str, Any] | None:  # Any: JSON-like settings sections
    """``options`` with ``sample`` (the API's ``sample=N``) as ``protocol.sample``; unchanged without one."""
    if sample is None:
        return options
    given = options.model_dump(exclude_unset=True) if isinstance(options, BaseModel) else dict(options or {})
    return {**given, "sample": sample}


def embedded(configured: bool) -> contextlib.AbstractContextManager[None]:
    """Third-party bars and warnings of the call into the ``culturebias`` logger, unless the host asked for our logging."""
    from culturebias.adapters.progress.quiet import quiet_call

    return contextlib.nullcontext() if configured else quiet_call()


def call_settings(
    settings: Settings | None,
    model: Any,  # Any: a section as evaluate() takes it
    data: Any,  # Any: a section as evaluate() takes it
    options: Any,  # Any: a section as evaluate() takes it
    store: Any,  # Any: a section or a store, as evaluate() takes it
    judge: Any,  # Any: a section as evaluate() takes it
    run: Any,  # Any: a section as evaluate() takes it
    configure_logging: bool,
) -> tuple[Settings, ResultStore | None]:
    """The settings of one API call, and the store object the host passed (if it passed one)."""
    store_object = store if is_store(store) else None
    resolved = make_settings(
        settings=settings,
        model=model,
        data=data,
        options=options,
        store=None if store_object is not None else store,
        judge=judge,
        run=run,
    )
    if configure_logging:
        from culturebias.bootstrap.logging import configure_logging as configure

        configure(resolved.run.log_format, resolved.run.log_level)
    return resolved, store_object
