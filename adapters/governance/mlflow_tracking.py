"""A culturebias run in an MLflow tracking store, and a policy's thresholds as MLflow's ``MetricThreshold``.

``log_run`` logs into an existing MLflow run: params = the run's configuration
(flattened, secrets already redacted), metrics = each headline and its interval
bounds (``<metric>_ci_low`` / ``<metric>_ci_high``), artifacts = summary.json,
report.html / report.md and the items as a table (``items.json``, MLflow's
table format), tags = the model ports' identities and the data and config
fingerprints. ``policy_thresholds`` maps threshold criteria to
``MetricThreshold`` on those metric names: the whole interval below x is
``<metric>_ci_high <= x``, above x is ``<metric>_ci_low >= x``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from culturebias.adapters.governance.exported_run import ExportedRun, flat_params
from culturebias.adapters.governance.tracking_errors import WORKING_STORES, TrackingStoreError, mlflow_failure
from culturebias.domain.policy.model import Policy

# MLflow refuses longer param values; a longer one is cut and says so.
PARAM_LIMIT = 6000


def headline_metrics(run: ExportedRun) -> dict[str, float]:
    metrics: dict[str, float] = {}
    for headline in run.headline_values():
        if headline.value is None:
            continue
        metrics[headline.metric.name] = headline.value
        bounds = headline.bounds()
        if bounds is not None:
            metrics[f"{headline.metric.name}_ci_low"], metrics[f"{headline.metric.name}_ci_high"] = bounds
    return metrics


def _param(value: str) -> str:
    return value if len(value) <= PARAM_LIMIT else value[: PARAM_LIMIT - 12] + " [truncated]"


def items_table(run: ExportedRun) -> dict[str, list[Any]] | None:  # Any: JSON documents and their values
    """The run's item records as columns (one row per item), as culturebias export writes them; None without items."""
    if not run.items:
        return None
    from culturebias.domain.audit import columns, flat_record

    rows = [flat_record(r) for r in run.items]
    return {name: [row.get(name) for row in rows] for name in columns(run.items)}


def log_run(client: Any, mlflow_run_id: str, run: ExportedRun) -> tuple[dict[str, float], dict[str, str]]:  # Any: an MLflow tracking client
    """Log the run into MLflow run ``mlflow_run_id``; returns the metrics and the artifacts (file name → artifact path:
    summary.json, report.html, report.md, items)."""
    import pandas as pd
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.utils.time import get_current_time_millis

    metrics = headline_metrics(run)
    params = {key: _param(value) for key, value in flat_params(run.summary.config).items()}
    now = get_current_time_millis()
    client.log_batch(
        mlflow_run_id,
        metrics=[Metric(key, value, now, 0) for key, value in metrics.items()],
        params=[Param(key, value) for key, value in params.items()],
        tags=[RunTag(key, value) for key, value in run.run_tags().items()],
    )
    artifacts: dict[str, str] = {}
    for path in run.files():
        client.log_artifact(mlflow_run_id, str(path), "culturebias")
        artifacts[Path(path).name] = f"culturebias/{Path(path).name}"
    table = items_table(run)
    if table is not None:
        client.log_table(mlflow_run_id, data=pd.DataFrame(table), artifact_file="culturebias/items.json")
        artifacts["items"] = "culturebias/items.json"
    return metrics, artifacts


def policy_thresholds(policy: Policy) -> dict[str, Any]:  # Any: JSON documents and their values
    """Each threshold criterion (no breakdown) as MLflow ``MetricThreshold``s on the logged metric names.

    On the interval (the default): at_most x → ``<metric>_ci_high`` <= x, at_least x → ``<metric>_ci_low`` >= x,
    between → both; on the point: the metric itself. Baseline criteria have no MLflow equivalent (MLflow compares
    two results' point values, not a paired interval) and breakdowns are not logged: both are left out.
    """
    from mlflow.models import MetricThreshold

    out: dict[str, Any] = {}  # Any: JSON documents and their values
    for c in policy.criteria:
        if c.needs_baseline or c.breakdown is not None:
            continue
        point = c.confidence == "point"
        upper, lower = (c.metric, c.metric) if point else (f"{c.metric}_ci_high", f"{c.metric}_ci_low")
        if c.at_most is not None:
            out[upper] = MetricThreshold(threshold=c.at_most, greater_is_better=False)
        elif c.at_least is not None:
            out[lower] = MetricThreshold(threshold=c.at_least, greater_is_better=True)
        elif c.between is not None:
            out[lower] = MetricThreshold(threshold=c.between[0], greater_is_better=True)
            out[upper] = MetricThreshold(threshold=c.between[1], greater_is_better=False)
    return out


def tracking_store(uri: str | None) -> str:
    """The tracking URI MLflow will use (``uri`` or MLflow's own setting), refused early where MLflow 3 refuses it:
    a file store (``file:``, a bare path), or a SQLite file that cannot be opened (a missing or read-only folder,
    which MLflow would retry for minutes). ``TrackingStoreError`` naming the stores that work."""
    import mlflow

    resolved = uri or mlflow.get_tracking_uri()
    scheme = urlparse(resolved).scheme
    if scheme in ("", "file") or len(scheme) == 1:  # a bare path, file:, or a Windows drive letter
        raise TrackingStoreError(
            f"MLflow {mlflow.__version__} refuses the file tracking store {resolved!r} (MLflow 3 keeps runs in a "
            f"database or a server); use {WORKING_STORES}"
        )
    if scheme == "sqlite":
        _sqlite_opens(resolved)
    if scheme in ("http", "https"):
        _server_answers(resolved)
    return resolved


def _server_answers(uri: str, timeout_s: float = 10.0) -> None:
    """A tracking server that refuses connections (or whose host does not resolve) is one line now, not after
    MLflow's minutes of retries. Behind a proxy the proxy decides: not probed."""
    import socket
    from urllib.request import getproxies, proxy_bypass

    parsed = urlparse(uri)
    host = parsed.hostname
    if not host or (parsed.scheme in getproxies() and not proxy_bypass(host)):
        return
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        socket.create_connection((host, port), timeout=timeout_s).close()
    except (OSError, ValueError) as error:  # refused, unresolvable, unroutable, timed out; a bad port number
        raise mlflow_failure(f"Failed to establish a new connection: {error}", uri) from None


def _sqlite_opens(uri: str) -> None:
    import sqlite3

    path = uri.partition(":///")[2].partition("?")[0]
    if not path or path == ":memory:":
        return
    try:
        sqlite3.connect(path).close()  # creates the file MLflow would create
    except sqlite3.Error as error:
        raise TrackingStoreError(
            f"the MLflow tracking store {uri!r} cannot be opened ({error}: is its folder there and writable?); "
            f"use {WORKING_STORES}"
        ) from None


def export_to_mlflow(run: ExportedRun, tracking_uri: str | None = None, experiment: str = "culturebias") -> str:
    """A new MLflow run in ``experiment`` holding the culturebias run; returns its MLflow run id.

    A store MLflow refuses raises ``TrackingStoreError``, one it cannot reach ``TrackingServerError``
    (``adapters/governance/tracking_errors.py``), never MLflow's own exception."""
    from mlflow.exceptions import MlflowException

    uri = tracking_store(tracking_uri)
    try:
        return _export(run, uri, experiment)
    except MlflowException as error:
        raise mlflow_failure(str(error), uri) from None


def _export(run: ExportedRun, uri: str, experiment: str) -> str:
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    experiment_id = found.experiment_id if found is not None else client.create_experiment(experiment)
    created = client.create_run(experiment_id, run_name=run.summary.run_id)
    try:
        log_run(client, created.info.run_id, run)
    except BaseException:
        client.set_terminated(created.info.run_id, status="FAILED")
        raise
    client.set_terminated(created.info.run_id)
    return created.info.run_id
