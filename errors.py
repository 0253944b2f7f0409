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
    PolicyError,
    ReplayMissingError,
    ResumeMismatchError,
    SchemaVersionError,
    UnknownNameError,
)
from culturebias.domain.comparison.envelope import ComparisonMismatchError
from culturebias.domain.runs import OutputFolderBusyError, RunInterrupted

__all__ = [
    "CapabilityError",
    "ComparisonMismatchError",
    "ConfigError",
    "CultureBiasError",
    "DataError",
    "MissingDataError",
    "OutputFolderBusyError",
    "ModelLoadError",
    "PluginError",
    "PolicyError",
    "ReplayMissingError",
    "ResumeMismatchError",
    "RunInterrupted",
    "SchemaVersionError",
    "UnknownNameError",
]
