"""Why an MLflow export failed, as one typed line: a tracking store MLflow refuses, or one it cannot reach.

MLflow raises its own ``MlflowException`` (and SQLAlchemy's errors for a SQLite file it cannot open,
after minutes of retries); ``export --format mlflow`` turns each into one of these, which the CLI prints
as one line (``bootstrap/cli.py``): ``TrackingStoreError`` exits 2 (the ``--tracking-uri`` is the
configuration at fault), ``TrackingServerError`` exits 1 (the store was right but did not answer).
Importing this module imports no MLflow.
"""

from __future__ import annotations

from culturebias.domain.errors import ConfigError, CultureBiasError

WORKING_STORES = (
    "a database (--tracking-uri sqlite:///mlflow.db, postgresql://HOST/DB, mysql://HOST/DB) "
    "or a tracking server (http://HOST:PORT, https://HOST, databricks)"
)
UNREACHABLE = ("Failed to establish a new connection", "Max retries exceeded", "Connection refused",
               "Name or service not known", "timed out", "Temporary failure in name resolution")


class TrackingStoreError(ConfigError):
    """MLflow refuses the tracking store: a file store (MLflow 3), an unknown scheme, a SQLite file it cannot open.

    The message names the URI and the stores that work (``WORKING_STORES``). Exit code 2.
    """


class TrackingServerError(CultureBiasError):
    """The MLflow tracking store could not be reached or refused a request. Exit code 1."""


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), text.strip())


def mlflow_failure(message: str, uri: str) -> CultureBiasError:
    """An MLflow error's message as the typed error it means, naming the tracking URI."""
    line = first_line(message)
    if "unsupported URI" in message or "maintenance mode" in message or "filesystem tracking backend" in message:
        return TrackingStoreError(f"MLflow refuses the tracking store {uri!r} ({line[:200]}); use {WORKING_STORES}")
    if any(sign in message for sign in UNREACHABLE):
        return TrackingServerError(
            f"the MLflow tracking server {uri!r} cannot be reached ({line[:300]}); is it running? "
            "(MLFLOW_HTTP_REQUEST_MAX_RETRIES and MLFLOW_HTTP_REQUEST_TIMEOUT bound how long MLflow tries)"
        )
    return TrackingServerError(f"MLflow tracking store {uri!r}: {line[:400]}")
