"""The typed comparison.json: one envelope, one body per benchmark (subclasses fix ``benchmark`` and ``body``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Generic, TypeVar

from pydantic import BaseModel, Field, SerializeAsAny

from culturebias.domain.caveats import Caveat, items_words, run_caveats
from culturebias.domain.errors import ConfigError
from culturebias.domain.comparison.headline_pairs import HeadlinePair
from culturebias.domain.headlines import HeadlineMetric, HeadlineValue
from culturebias.domain.summary import Block, RunSummary
from culturebias.domain.validity import rule_reason

# 1.1: the envelope carries every run's headline metrics (``headline_metrics``, ``headlines``); each compared
#      run says whether it was measured (``runs[].not_measured``, its summary's).
# 1.2: ``headline_pairs`` (each pair of runs on each headline: difference, interval, p-value); McBE bodies gain
#      ``runs``, ``std`` and ``prompt_robustness``. 1.1 files load with them empty.
# 1.3: each compared run carries its caveats (``runs[].caveats``: limited, sampled, small model, ... from
#      domain/caveats.py) and what it evaluated in words (``runs[].items``, e.g. "168 of 2,280 (stratified
#      sample)"); 1.2 files load with no caveats and ``items`` null (read from ``limit`` as before).
COMPARISON_SCHEMA_VERSION = "1.3"
MODEL_ROLES = ("generator", "scorer", "pseudo_scorer", "judge", "templater")


class ComparisonMismatchError(ConfigError):
    """Runs that cannot be compared: names the run, the field and both values."""

    def __init__(self, run_id: str, field: str, value: str, expected: str, reference_run: str, hint: str = ""):
        self.run_id = run_id
        self.field = field
        self.value = value
        self.expected = expected
        self.reference_run = reference_run
        message = f"run {run_id} has {field} {value!r} where run {reference_run} has {expected!r}; runs of one comparison must agree"
        super().__init__(f"{message}{hint}")


class ComparedRun(Block):
    """One compared run as the tables name it (``label``) and what identifies it."""

    label: str  # the model's name, made unique with a short run id where two runs share a model
    run_id: str
    model: str  # the main model port's model ("-" where the run built none)
    backend: str | None
    models: dict[str, str]  # role → "backend:model" of every model port the run built
    data_source: str
    data_fingerprint: str
    config_fingerprint: str
    schema_version: str
    culturebias_version: str
    finished_at: str
    limit: int | None = None  # the run's --limit N: it covered only part of the data
    # Why the run's headline cannot be read (its summary's ``not_measured``): shown as "not measured", never as 0.
    not_measured: str | None = None
    # What the run evaluated, in words: "all", "first 400 (--limit)", "168 of 2,280 (stratified sample)"; null in 1.2 files.
    items: str | None = None
    # Everything that limits what its numbers say (domain/caveats.py), in the order run_caveats gives them.
    caveats: list[Caveat] = Field(default_factory=list)

    def items_text(self) -> str:
        """The "items" cell of the runs table; never "all" for a sampled run of a 1.3 file."""
        if self.items is not None:
            return self.items
        return "all" if self.limit is None else f"first {self.limit} (--limit)"


BodyT = TypeVar("BodyT", bound=BaseModel)


class Comparison(Block, Generic[BodyT]):
    """The common envelope; ``body`` holds the benchmark's cross-model views."""

    schema_version: str = COMPARISON_SCHEMA_VERSION
    benchmark: str
    created_at: str
    runs: list[ComparedRun]
    data_mismatch_allowed: bool = False
    data_fingerprints: list[str]  # distinct fingerprints, in run order (one unless a mismatch was allowed)
    notes: list[str] = Field(default_factory=list)
    # The benchmark's declared headline metrics, and each run's values of them by run label.
    headline_metrics: list[HeadlineMetric] = Field(default_factory=list)
    headlines: dict[str, dict[str, HeadlineValue]] = Field(default_factory=dict)
    # Every two runs on every headline: the paired difference, its interval and p-value (or why untested).
    headline_pairs: list[HeadlinePair] = Field(default_factory=list)
    body: SerializeAsAny[BodyT]

    def labels(self) -> list[str]:
        return [run.label for run in self.runs]

    def not_measured(self) -> dict[str, str]:
        """The runs whose headline cannot be read, by label, with why."""
        return {run.label: run.not_measured for run in self.runs if run.not_measured is not None}

    def caveats(self) -> dict[str, list[Caveat]]:
        """Each run's caveats by label (runs without any left out)."""
        return {run.label: run.caveats for run in self.runs if run.caveats}

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)


def main_model(summary: RunSummary) -> tuple[str, str | None]:
    """The model the run measured: its generator, else its scorer, else its masked scorer (judge and templater serve it)."""
    roles = summary.model.roles()
    for role in MODEL_ROLES[:3]:
        if role in roles:
            return roles[role].model, roles[role].backend
    return "-", None


SHORT_RUN_ID = 6  # the fewest characters of a run id a label shows


def short_run_ids(run_ids: Sequence[str], benchmark: str) -> list[str]:
    """Each run id without its ``<benchmark>-`` prefix, cut to the shortest length (at least
    ``SHORT_RUN_ID``) at which the given ids still differ."""
    bare = [r[len(benchmark) + 1:] if r.startswith(f"{benchmark}-") and len(r) > len(benchmark) + 1 else r for r in run_ids]
    if len(set(bare)) < len(bare):  # only the benchmark prefix told them apart
        bare = list(run_ids)
    for length in range(SHORT_RUN_ID, max(map(len, bare), default=0) + 1):
        cut = [b[:length] for b in bare]
        if len(set(cut)) == len(cut):
            return cut
    return bare


def run_labels(summaries: Sequence[RunSummary]) -> list[str]:
    """The model's name; where two runs share a model, followed by the shortest run-id prefix that tells them apart."""
    names = [main_model(s)[0] for s in summaries]
    labels = list(names)
    for name, n in Counter(names).items():
        if n < 2:
            continue
        at = [i for i, other in enumerate(names) if other == name]
        shorts = short_run_ids([summaries[i].run_id for i in at], summaries[at[0]].benchmark)
        for i, short in zip(at, shorts):
            labels[i] = f"{name} (run {short})"
    return labels


def compared_runs(summaries: Sequence[RunSummary], headlines: Sequence[HeadlineMetric] = ()) -> list[ComparedRun]:
    runs = []
    for summary, name, label in zip(summaries, [main_model(s)[0] for s in summaries], run_labels(summaries)):
        _, backend = main_model(summary)
        runs.append(
            ComparedRun(
                label=label,
                run_id=summary.run_id,
                model=name,
                backend=backend,
                models={role: f"{i.backend}:{i.model}" for role, i in summary.model.roles().items()},
                data_source=summary.data.source,
                data_fingerprint=summary.data.fingerprint,
                config_fingerprint=summary.config_fingerprint,
                schema_version=summary.schema_version,
                culturebias_version=summary.culturebias_version,
                finished_at=summary.finished_at,
                limit=summary.limit.n if summary.limit is not None else None,
                not_measured=summary.not_measured,
                items=items_words(summary),
                caveats=run_caveats(summary, headlines),
            )
        )
    return runs


def check_comparable(summaries: Sequence[RunSummary], allow_data_mismatch: bool = False) -> list[str]:
    """Refuse runs of other benchmarks, schema versions or (unless allowed) data; the notes an allowed mismatch needs."""
    if len(summaries) < 2:
        raise ConfigError(f"a comparison needs at least two runs, got {len(summaries)}")
    first = summaries[0]
    seen: dict[str, str] = {}
    for summary in summaries:
        if summary.run_id in seen:
            raise ConfigError(f"run {summary.run_id} is given twice ({seen[summary.run_id]} and again)")
        seen[summary.run_id] = summary.benchmark
    for summary in summaries[1:]:
        for field, value, expected in (
            ("benchmark", summary.benchmark, first.benchmark),
            ("schema_version", summary.schema_version, first.schema_version),
        ):
            if value != expected:
                raise ComparisonMismatchError(summary.run_id, field, value, expected, first.run_id)
    notes = []
    for summary in summaries[1:]:
        if summary.data.fingerprint == first.data.fingerprint:
            continue
        if not allow_data_mismatch:
            raise ComparisonMismatchError(
                summary.run_id,
                "data fingerprint",
                summary.data.fingerprint,
                first.data.fingerprint,
                first.run_id,
                hint=" (allow_data_mismatch=True / --allow-data-mismatch compares across data versions)",
            )
        notes.append(
            f"data differ: run {summary.run_id} ran on {summary.data.source} (fingerprint {summary.data.fingerprint}), "
            f"run {first.run_id} on {first.data.source} (fingerprint {first.data.fingerprint}); "
            "compared anyway (data mismatch allowed)"
        )
    for summary in summaries:
        if summary.not_measured is not None:
            notes.append(f"run {summary.run_id} was not measured: {summary.not_measured}; its numbers are null, shown as not measured")
        elif summary.validity is not None and summary.validity.enabled and summary.validity.failed():
            failed = summary.validity.failed()
            guarded = ", ".join(sorted({m for r in failed for m in r.guards}))
            notes.append(f"run {summary.run_id}: {guarded} not measured ({'; '.join(rule_reason(r) for r in failed)}); "
                         "shown as not measured, never as a result")
    covered = [items_words(s) for s in summaries]
    if len(set(covered)) > 1:
        notes.append(
            "the runs cover different parts of the data (--limit, --sample): "
            + ", ".join(f"{s.run_id}: {words}" for s, words in zip(summaries, covered))
        )
    return notes


def distinct_fingerprints(summaries: Sequence[RunSummary]) -> list[str]:
    return list(dict.fromkeys(s.data.fingerprint for s in summaries))
