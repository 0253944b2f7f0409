"""A finished run as the governance formats read it: summary, headlines, files, items, and a verdict if checked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from culturebias.domain.caveats import Caveat, items_words, run_caveats
from culturebias.domain.comparison.envelope import main_model
from culturebias.domain.headlines import HeadlineMetric, interval_of, value_of
from culturebias.domain.uncertainty.interval import Interval
from culturebias.domain.validity import failed_rules, rule_reason


@dataclass(frozen=True)
class Headline:
    metric: HeadlineMetric
    value: float | None
    interval: Interval | None
    not_measured: str | None = None  # a failed validity rule (PROTOCOLS §6): value and interval are then None

    def bounds(self) -> tuple[float, float] | None:
        i = self.interval
        return (i.low, i.high) if i is not None and i.low is not None and i.high is not None else None


@dataclass(frozen=True)
class ExportedRun:
    summary: Any  # the run's typed RunSummary
    title: str  # the benchmark's title (KoBBQ)
    culture: str
    headlines: tuple[HeadlineMetric, ...]
    folder: Path | None = None  # where summary.json (and report.html) are, if the run has a folder
    items: Sequence[Any] | None = None  # its ItemRecords, where its store is at hand
    verdict: Any = None  # a PolicyVerdict the run was checked with

    def headline_values(self) -> list[Headline]:
        out = []
        for metric in self.headlines:
            failed = failed_rules(self.summary, metric.name)
            if failed:  # exported as not measured, never as a result; the value stays in summary.json
                out.append(Headline(metric, None, None, "; ".join(rule_reason(r) for r in failed)))
                continue
            try:
                out.append(Headline(metric, value_of(self.summary, metric), interval_of(self.summary, metric)))
            except KeyError:  # an optional block this run does not have
                continue
        return out

    def caveats(self) -> list[Caveat]:
        """Everything that limits what the run's numbers say (domain/caveats.py)."""
        return run_caveats(self.summary, self.headlines)

    def caveats_of(self, metric: str) -> list[Caveat]:
        """The caveats a headline metric carries: the whole run's, and those naming it."""
        return [c for c in self.caveats() if c.metric is None or metric in c.metric.split(", ")]

    def model(self) -> tuple[str, str | None]:
        """(model, backend) the run measured."""
        return main_model(self.summary)

    def files(self) -> list[Path]:
        """summary.json and the reports beside it."""
        if self.folder is None:
            return []
        return [self.folder / name for name in ("summary.json", "report.html", "report.md") if (self.folder / name).is_file()]

    def model_tags(self) -> dict[str, str]:
        """Every model port's identity and fingerprints, as flat string tags."""
        tags = {}
        for role, identity in self.summary.model.roles().items():
            tags[f"culturebias.model.{role}"] = f"{identity.backend}:{identity.model}"
            for field in ("revision", "tokenizer", "weights", "dtype"):
                value = getattr(identity, field, None)
                if value:
                    tags[f"culturebias.model.{role}.{field}"] = str(value)
        return tags

    def run_tags(self) -> dict[str, str]:
        s = self.summary
        tags = {
            "culturebias.benchmark": s.benchmark,
            "culturebias.run_id": s.run_id,
            "culturebias.data_fingerprint": s.data.fingerprint,
            "culturebias.data_source": s.data.source,
            "culturebias.config_fingerprint": s.config_fingerprint,
            "culturebias.version": s.culturebias_version,
            **self.model_tags(),
        }
        if s.limit is not None:
            tags["culturebias.limit"] = str(s.limit.n)
        tags["culturebias.items"] = items_words(s)
        caveats = self.caveats()
        if caveats:
            tags["culturebias.caveats"] = "; ".join(c.short for c in caveats)
        for kind in dict.fromkeys(c.kind for c in caveats):
            tags[f"culturebias.caveat.{kind}"] = " ".join(c.text for c in caveats if c.kind == kind)
        if self.verdict is not None and any(c.allowed_limited for c in self.verdict.criteria):
            tags["culturebias.verdict_allow_limited"] = "true"
        for h in self.headline_values():
            if h.not_measured is not None:
                tags[f"culturebias.not_measured.{h.metric.name}"] = h.not_measured
        if self.verdict is not None:
            tags["culturebias.verdict"] = f"{self.verdict.policy}: {self.verdict.outcome}"
        return tags


def flat_params(config: Any, prefix: str = "") -> dict[str, str]:  # Any: JSON documents and their values
    """A nested configuration as ``a.b.c`` → text; None left out."""
    out: dict[str, str] = {}
    if isinstance(config, dict):
        for key, value in config.items():
            out.update(flat_params(value, f"{prefix}{key}."))
    elif config is not None:
        out[prefix.rstrip(".")] = config if isinstance(config, str) else str(config)
    return out
