"""A run: its identity, configuration, data fingerprint and lifecycle."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field

from culturebias.domain.summary import SUMMARY_SCHEMA_VERSION  # noqa: F401  (re-exported)


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
    failure: str | None = None  # why a failed run stopped
