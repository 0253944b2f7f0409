"""The leaderboard of a result store: one row per run, with each benchmark's headline metrics.

Which numbers of a benchmark's typed summary a row shows is the benchmark's own
declaration (its descriptor's ``headlines``, ``domain/<benchmark>/headlines.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from culturebias.domain.caveats import Caveat, run_caveats
from culturebias.domain.headlines import HeadlineMetric, headline_values
from culturebias.domain.runs import RunLease, RunManifest, RunStatus, StageProgress
from culturebias.domain.summary import RunSummary
from culturebias.domain.validity import failed_rules, rule_reason

Headline = dict[str, float | None]


def headline(summary: RunSummary, metrics: Sequence[HeadlineMetric]) -> Headline:
    """A run's headline metrics by name (null: undefined), as its benchmark's descriptor declares them."""
    return headline_values(summary, metrics)


class LeaderboardRow(BaseModel):
    run_id: str
    benchmark: str
    status: RunStatus
    model: str | None  # the evaluated model's name (its identity's, else the configured path)
    backend: str | None
    created_at: str
    finished_at: str | None = None
    data_fingerprint: str
    config_fingerprint: str
    progress: dict[str, StageProgress] = Field(default_factory=dict)
    headline: Headline = Field(default_factory=dict)
    failure: str | None = None
    # The process writing an unfinished run, and whether it is alive (its lease not stale).
    holder: RunLease | None = None
    holder_live: bool | None = None
    # A finished run whose headline cannot be read: why (its summary's not_measured); its headline is null.
    not_measured: str | None = None
    # A finished run's caveats (domain/caveats.py): limited, sampled, small model, ...
    caveats: list[Caveat] = Field(default_factory=list)

    def caveats_text(self) -> str:
        return f"caveats: {'; '.join(c.short for c in self.caveats)}" if self.caveats else ""
    # Headlines a failed validity rule leaves not measured (PROTOCOLS §6): name → why; their headline value is null.
    not_measured_headlines: dict[str, str] = Field(default_factory=dict)

    def holder_text(self) -> str:
        if self.holder is None:
            return ""
        return f"held by {self.holder.text()}" + ("" if self.holder_live else ", stale: the process is gone")

    def text(self) -> str:
        """One tab-separated line: run id and status first (scripts cut on them)."""
        model = f"{self.model} ({self.backend})" if self.model else (self.backend or "-")
        metrics = " ".join(
            f"{k}=not measured ({self.not_measured_headlines[k].split(':')[0]})" if k in self.not_measured_headlines
            else f"{k}={'-' if v is None else f'{v:.3f}'}"
            for k, v in self.headline.items()
        )
        if self.not_measured is not None:
            metrics = f"not measured: {self.not_measured}"
        progress = ", ".join(f"{stage} {p.done}/{p.total}" for stage, p in sorted(self.progress.items()))
        fields = [self.run_id, self.status, self.benchmark, model, self.created_at, f"data={self.data_fingerprint}"]
        return "\t".join([*fields, *(part for part in (progress, metrics, self.caveats_text(), self.holder_text(), self.failure or "") if part)])


# The port whose model a run evaluates, first found wins (the judge and templater only serve it).
EVALUATED_ROLES = ("generator", "scorer", "pseudo_scorer")


def leaderboard_row(
    manifest: RunManifest,
    summary: RunSummary | None,
    metrics: Sequence[HeadlineMetric] = (),
    holder_live: bool | None = None,
) -> LeaderboardRow:
    """A run's row: model and headline (``metrics``, its benchmark's declared ones) from its typed summary when it
    finished, else from its configuration. ``holder_live``: whether the lease of an unfinished run is live (the
    stale-lease rule is the caller's)."""
    model, backend = None, None
    if summary is not None:
        roles = summary.model.roles()
        identity = next((roles[r] for r in EVALUATED_ROLES if r in roles), None)
        if identity is not None:
            model, backend = identity.model, identity.backend
    if model is None:
        found = manifest.config.get("model")
        configured = found if isinstance(found, dict) else {}
        model = configured.get("path") or configured.get("name") or None
        backend = backend or configured.get("backend")
    invalid = {m.name: why for m in metrics if summary is not None and (why := _invalid(summary, m.name))}
    shown = headline(summary, metrics) if summary is not None else {}
    return LeaderboardRow(
        run_id=manifest.run_id,
        benchmark=manifest.benchmark,
        status=manifest.status,
        model=None if model is None else str(model),
        backend=None if backend is None else str(backend),
        created_at=manifest.created_at,
        finished_at=manifest.finished_at,
        data_fingerprint=manifest.data_fingerprint,
        config_fingerprint=manifest.config_fingerprint,
        progress=manifest.progress,
        headline={k: None if k in invalid else v for k, v in shown.items()},
        not_measured_headlines=invalid,
        failure=manifest.failure,
        holder=manifest.lease if manifest.status != "finished" else None,
        holder_live=holder_live if manifest.lease is not None and manifest.status != "finished" else None,
        not_measured=summary.not_measured if summary is not None else None,
        caveats=run_caveats(summary, metrics) if summary is not None else [],
    )


def _invalid(summary: RunSummary, name: str) -> str | None:
    """Why a failed validity rule leaves this headline not measured; None otherwise (the run-level reason is apart)."""
    failed = failed_rules(summary, name)
    return "; ".join(rule_reason(r) for r in failed) if failed else None
