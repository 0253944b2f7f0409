"""Every error culturebias raises on purpose, for hosts that embed it.

``CultureBiasError`` is the base; the CLI maps each kind to its exit code
(``culturebias.bootstrap.cli.EXIT_CODES``).
"""

from culturebias.domain.errors import (
    CapabilityError,
    ConfigError,
    CultureBiasError,
    DataError,
    MissingDataError,
    ModelLoadError,
    PluginError,
    ReplayMissingError,
    ResumeMismatchError,
    SchemaVersionError,
    UnknownNameError,
)

__all__ = [
    "CapabilityError",
    "ConfigError",
    "CultureBiasError",
    "DataError",
    "MissingDataError",
    "ModelLoadError",
    "PluginError",
    "ReplayMissingError",
    "ResumeMismatchError",
    "SchemaVersionError",
    "UnknownNameError",
]
