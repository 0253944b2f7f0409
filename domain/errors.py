"""Typed errors. Every data error names the file, the row and the field at fault."""

from __future__ import annotations


def _where(**parts: object) -> str:
    """``file x, row 3, field 'y'``: the parts that are set, in the order given; a field or criterion quoted."""
    shown = (f"{name} {value!r}" if name in ("field", "criterion") else f"{name} {value}" for name, value in parts.items() if value is not None)
    return ", ".join(shown)


class CultureBiasError(Exception):
    """Base class of every error culturebias raises on purpose."""


class ConfigError(CultureBiasError):
    """The configuration is invalid or incomplete."""


class DataError(CultureBiasError):
    """Input data is malformed. Names the file, the row (1-based, header = row 1) and the field."""

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None, field: str | None = None):
        self.file = file
        self.row = row
        self.field = field
        self.reason = message
        where = _where(file=file, row=row, field=field)
        super().__init__(f"{where}: {message}" if where else message)


class MissingDataError(ConfigError):
    """A benchmark needs data that is not configured or not where it was said to be."""


class CapabilityError(CultureBiasError):
    """A backend lacks a capability a protocol needs (e.g. prompt log-probabilities).

    Raised before a run starts, never mid-run and never hidden behind a default score.
    """

    def __init__(self, backend: str, capability: str, detail: str = ""):
        self.backend = backend
        self.capability = capability
        message = f"backend {backend!r} cannot provide {capability}"
        super().__init__(f"{message}: {detail}" if detail else message)


class ResumeMismatchError(CultureBiasError):
    """--resume was asked for a run whose configuration or data differs from the stored one."""


class ReplayMissingError(DataError):
    """A replay file lacks an answer the run needs."""


class UnknownNameError(ConfigError):
    """A benchmark, backend, store or setting name that is not registered; names the allowed values."""

    def __init__(self, what: str, name: str, allowed: list[str], where: str = ""):
        import difflib

        self.what = what
        self.name = name
        self.allowed = sorted(allowed)
        close = difflib.get_close_matches(name, self.allowed, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        place = f" {where}" if where else ""
        super().__init__(f"unknown {what} {name!r}{place}{hint} (choose one of: {', '.join(self.allowed)})")


class PluginError(ConfigError):
    """A plugin registered through an entry point failed to load or is not a valid descriptor."""


class ModelLoadError(CultureBiasError):
    """A model could not be loaded (missing files, no tokenizer, an unusable device or dtype)."""


class SchemaVersionError(DataError):
    """A summary.json written by an incompatible culturebias; names both schema versions."""


class PolicyError(DataError):
    """An acceptance policy or the runs it is checked on cannot be used (``culturebias check`` exit 3).

    Names the policy file and line where one is known, the criterion, and what was expected.
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None, criterion: str | None = None):
        self.line = line
        self.criterion = criterion
        where = _where(line=line, criterion=criterion)
        super().__init__(f"{where}: {message}" if where else message, file=file)
