"""A run: its identity, configuration, data fingerprint and lifecycle."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field

SUMMARY_SCHEMA_VERSION = "1.0"

RunStatus = Literal["running", "finished", "failed"]


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class RunManifest(BaseModel):
    run_id: str
    benchmark: str
    config: dict[str, Any]
    config_fingerprint: str
    data_fingerprint: str
    model: dict[str, Any] = Field(default_factory=dict)
    status: RunStatus = "running"
    created_at: str = Field(default_factory=utc_now)
    finished_at: str | None = None


class ProtocolOutcome(BaseModel):
    """What a protocol service hands back to the run orchestrator."""

    metrics: dict[str, Any]
    counts: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    # Extra machine-readable detail (e.g. per-item predictions) kept in summary.json.
    details: dict[str, Any] = Field(default_factory=dict)
