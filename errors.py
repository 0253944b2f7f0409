"""Every error culturebias raises on purpose, for hosts that embed it.

``CultureBiasError`` is the base; the CLI maps each kind to its exit code
(``culturebias.bootstrap.exit_codes.EXIT_CODES``, also importable from ``culturebias.bootstrap.cli``).
Importing this module imports no model runtime, HTTP client or database driver.
"""

from culturebias.adapters.governance.tracking_errors import TrackingServerError, TrackingStoreError
from culturebias.adapters.hf.chat_templates import ChatTemplateError
from culturebias.adapters.openai.client import ApiError, InvalidReplyError, ServerUnavailableError
from culturebias.adapters.openai.request_cache import RequestCacheError
from culturebias.adapters.openai.truth_probe import TruthProbeError
from culturebias.adapters.ray.errors import RayClusterError, ReplicasLostError
from culturebias.adapters.stores.postgres_store import PostgresConnectError, PostgresStoreError
from culturebias.application.run_plan import BudgetExceeded
from culturebias.domain.comparison.envelope import ComparisonMismatchError
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
from culturebias.domain.runs import OutputFolderBusyError, RunInterrupted, RunInUseError

__all__ = [
    "ApiError",
    "BudgetExceeded",
    "CapabilityError",
    "ChatTemplateError",
    "ComparisonMismatchError",
    "ConfigError",
    "CultureBiasError",
    "DataError",
    "InvalidReplyError",
    "MissingDataError",
    "ModelLoadError",
    "OutputFolderBusyError",
    "PluginError",
    "PostgresConnectError",
    "PostgresStoreError",
    "RayClusterError",
    "PolicyError",
    "ReplayMissingError",
    "ReplicasLostError",
    "RequestCacheError",
    "ResumeMismatchError",
    "RunInterrupted",
    "RunInUseError",
    "SchemaVersionError",
    "ServerUnavailableError",
    "TrackingServerError",
    "TrackingStoreError",
    "TruthProbeError",
    "UnknownNameError",
]
