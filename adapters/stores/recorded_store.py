"""The result store a run's summary.json names (its configuration's ``store`` section), as a store reference.

A file store (``store.path``: a SQLite file, a JSONL folder) is named by its path: as written when it is
absolute, else as the run saw it from its working directory, else beside the run folder. A server store
(``store.dsn``) is named by its settings: the DSN as recorded, less the redacted password, whose secret is
taken from the environment (``store.password_env``) or ``store.password_file`` as at run time, never from
the summary. A summary that names no store of its own (the run folder's default) names None.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from culturebias.domain.errors import DataError
from culturebias.domain.redaction import REDACTED

_SECRET = re.escape(REDACTED)
# Where redact_dsn put REDACTED: URL userinfo, a ?password= parameter, a password= keyword.
_URL_SECRET = re.compile(rf"(?P<user>://[^:/@]*):{_SECRET}@")
_QUERY_SECRET = re.compile(rf"(?P<sep>[?&])password={_SECRET}(?P<next>&?)")
_KEYWORD_SECRET = re.compile(rf"\s*\bpassword\s*=\s*{_SECRET}")
DEFAULT_PASSWORD_ENV = "PGPASSWORD"


def without_redacted_password(dsn: str) -> str:
    """The DSN with the password ``redact_dsn`` replaced left out (the secret then comes from elsewhere)."""
    dsn = _URL_SECRET.sub(lambda m: m["user"] + "@", dsn)
    dsn = _QUERY_SECRET.sub(lambda m: m["sep"] if m["next"] else "", dsn)
    return _KEYWORD_SECRET.sub("", dsn).strip()


def recorded_store(
    section: Mapping[str, Any],  # Any: the summary's store section (JSON values)
    folder: Path,
    where: str,
    environ: Mapping[str, str] | None = None,
) -> Path | dict[str, Any] | None:  # Any: a store settings section
    """What the store section of the run in ``folder`` names; ``where`` (the summary) names it in errors.

    A DSN whose password was written into it and is neither in the environment nor in a password file
    raises ``DataError`` (one line: the variable to set, or ``--store``).
    """
    env = os.environ if environ is None else environ
    dsn = section.get("dsn")
    if isinstance(dsn, str) and dsn:
        variable = section.get("password_env") or DEFAULT_PASSWORD_ENV
        password_file = section.get("password_file")
        named_variable = variable != DEFAULT_PASSWORD_ENV
        if (REDACTED in dsn or named_variable) and not password_file and not env.get(variable):
            raise DataError(
                f"the run's store is the server {dsn}, whose password is never kept with a run: set ${variable} as "
                "when it ran (store.password_env), or name the store with --store DSN",
                file=where, field="config.store.dsn",
            )
        return {
            "backend": section.get("backend") or "postgres",
            "dsn": without_redacted_password(dsn),
            "password_env": variable,
            "password_file": password_file,
        }
    path = section.get("path")
    if not isinstance(path, str) or not path:
        return None
    named = Path(path).expanduser()
    if named.is_absolute():
        return named
    beside = folder / named
    return beside if not named.exists() and beside.exists() else named.absolute()
