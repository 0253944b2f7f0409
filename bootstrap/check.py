"""Wiring of ``culturebias check`` and ``culturebias.check``: a policy file, runs by folder or id, the verdict out.

Reads stored results only (summary.json, the run's result store for the
paired test), unless asked to run the benchmarks first (``check_model``).
Bad input raises ``PolicyError`` before anything is written; the JUnit and
JSON files are written (atomically) once the verdict is whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from culturebias.adapters.policy.gherkin import read_gherkin_policy
from culturebias.adapters.policy.toml_policy import read_toml_policy
from culturebias.adapters.policy.verdict_files import FolderVerdicts, write_verdict
from culturebias.adapters.reports.html.verdict_report import ReportLook, VerdictHtmlReports
from culturebias.application.annotate_reports import annotate_reports as annotate
from culturebias.application.check import CheckRequest, check_policy
from culturebias.application.compare_runs import RunRef, StoreRef, load_runs
from culturebias.bootstrap.archive import ARCHIVE
from culturebias.bootstrap.registry import registry
from culturebias.application.compared_items import compared_items
from culturebias.domain.errors import CultureBiasError, PolicyError
from culturebias.domain.policy.model import Policy
from culturebias.domain.runs import RunInUseError
from culturebias.domain.policy.verdict import InconclusiveAs, PolicyVerdict
from culturebias.domain.summary import RunSummary
from culturebias.domain.uncertainty.interval import DEFAULT_RESAMPLES

PolicyRef = Policy | Mapping[str, Any] | str | Path  # Any: a policy as a dict (TOML values)
READERS = {".toml": read_toml_policy, ".feature": read_gherkin_policy}
__all__ = ["annotate_reports", "check", "check_model", "load_policy", "write_verdict", "RegistryCatalog", "StoredRuns"]


def load_policy(policy: PolicyRef) -> Policy:
    """A policy from a ``.toml`` or ``.feature`` file, a dict of the TOML form, or as it is."""
    if isinstance(policy, Policy):
        return policy
    if isinstance(policy, Mapping):
        from culturebias.adapters.policy.toml_policy import policy_from_mapping

        return policy_from_mapping(policy)
    file = Path(policy).expanduser()
    reader = READERS.get(file.suffix.lower())
    if reader is None:
        raise PolicyError(f"a policy is a .toml or a .feature file, not {file.suffix or 'a file without suffix'}", file=str(file))
    if not file.is_file():
        raise PolicyError("no such policy file", file=str(file))
    return reader(file)


class RegistryCatalog:
    """``ports.policy.BenchmarkCatalog`` over the registry (built-ins and plugins)."""

    def names(self) -> list[str]:
        return registry().benchmarks.names()

    def title(self, benchmark: str) -> str:
        return registry().benchmark(benchmark).title

    def headline_metrics(self, benchmark: str) -> tuple[Any, ...]:  # Any: HeadlineMetrics
        return registry().benchmark(benchmark).headline_metrics()

    def unit_values(self, benchmark: str) -> Any:  # Any: each benchmark's unit-values function
        return registry().benchmark(benchmark).unit_values_function()


class StoredRuns:
    """``ports.policy.RunReader``: runs named as ``compare`` names them (folder, summary.json, id in ``store``, object)."""

    def __init__(self, store: StoreRef | None = None, baseline_store: StoreRef | None = None):
        self.store = store
        self.baseline_store = baseline_store  # where the baselines are, when not in ``store`` (--baseline-store)
        self._objects: dict[str, RunSummary] = {}
        self._summaries: dict[str, RunSummary] = {}
        self._baselines: set[str] = set()

    def ref(self, run: RunRef, baseline: bool = False) -> str:
        """The reference of a run given as an object, a path or an id (``baseline``: one of the baselines)."""
        if isinstance(run, RunSummary):
            key = f"summary of run {run.run_id}"
            self._objects[key] = run
        else:
            key = str(run)
        if baseline:
            self._baselines.add(key)
        return key

    def _store(self, ref: str) -> StoreRef | None:
        return self.baseline_store if ref in self._baselines and self.baseline_store is not None else self.store

    def _given(self, ref: str) -> RunRef:
        return self._objects.get(ref, ref)

    def summary(self, ref: str) -> RunSummary:
        if ref not in self._summaries:
            store = self._store(ref)
            if store is None and ref in self._baselines and ref not in self._objects and not Path(ref).expanduser().exists():
                raise PolicyError("no such baseline run folder or summary.json (to name a baseline by its run id, give "
                                  "its store: --baseline-store PATH, baseline_store= in Python)", file=ref)
            self._summaries[ref] = load_runs([self._given(ref)], store, ARCHIVE)[0]
        return self._summaries[ref]

    def where(self, ref: str) -> str:
        return ref if ref in self._objects or Path(ref).expanduser().exists() else f"run {ref} in {self._store(ref)}"

    def items(self, ref: str) -> Sequence[Any] | None:  # Any: ItemRecords or their JSON
        summary = self.summary(ref)
        return compared_items([self._given(ref)], [summary], self._store(ref), ARCHIVE)(summary.run_id)


def _refs(reader: StoredRuns, runs: RunRef | Sequence[RunRef] | None, baseline: bool = False) -> list[str]:
    if runs is None:
        return []
    if isinstance(runs, (str, Path, RunSummary)):
        runs = [runs]
    return [reader.ref(r, baseline) for r in runs]


def check(
    policy: PolicyRef,
    runs: RunRef | Sequence[RunRef] = (),
    baseline: RunRef | Sequence[RunRef] | None = None,
    *,
    store: StoreRef | None = None,
    baseline_store: StoreRef | None = None,
    junit: str | Path | None = None,
    json: str | Path | None = None,
    inconclusive: InconclusiveAs = "inconclusive",
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> PolicyVerdict:
    """Check an acceptance policy on finished runs; returns the typed ``PolicyVerdict``.

    ``policy`` is a ``.toml`` or ``.feature`` file, a dict of the TOML form or a ``Policy``;
    ``runs`` and ``baseline`` are run folders, summary.json files, summaries, or run ids in
    ``store`` (``baseline_store``: the baselines', when they are kept elsewhere; a run folder's own records are
    found through its summary.json, ``application.run_store``): one per benchmark. ``junit`` / ``json`` write the verdict as JUnit XML / JSON
    (``inconclusive`` says how JUnit shows an inconclusive criterion). ``verdict.exit_code()``
    is the CLI's exit code. Bad input raises ``PolicyError`` and writes nothing.
    """
    from culturebias import __version__

    checked = load_policy(policy)
    reader = StoredRuns(store, baseline_store)
    request = CheckRequest(
        policy=checked,
        runs=_refs(reader, runs),
        baselines=_refs(reader, baseline, baseline=True),
        version=__version__,
        seed=seed,
        resamples=resamples,
    )
    try:
        verdict = check_policy(request, reader, RegistryCatalog())
    except (PolicyError, RunInUseError):  # a run still written is refused as --resume refuses it (exit 8)
        raise
    except CultureBiasError as error:  # a run that cannot be read is bad input of the check
        raise PolicyError(str(error)) from error
    write_verdict(verdict, junit=junit, json=json, inconclusive=inconclusive)
    return verdict


def annotate_reports(verdict: PolicyVerdict, runs: Sequence[str | Path], store: StoreRef | None = None) -> list[Path]:
    """Store the verdict in each checked run folder (verdict.json, which a comparison of the run opens with) and
    rewrite its report.html so that it opens with the verdict; the report files written."""
    return annotate(verdict, runs, store, archive=ARCHIVE, folders=FolderVerdicts(), reports=VerdictHtmlReports(report_look))


def report_look(benchmark: str) -> ReportLook:
    """What a registered benchmark's report shows besides the run."""
    descriptor = registry().benchmark(benchmark)
    return ReportLook(descriptor.title, descriptor.headline_metrics(), descriptor.language)


def check_model(
    policy: PolicyRef,
    settings: Any,  # Any: a Settings object or a model section as a dict
    *,
    out: str | Path,
    baseline: RunRef | Sequence[RunRef] | None = None,
    junit: str | Path | None = None,
    json: str | Path | None = None,
    inconclusive: InconclusiveAs = "inconclusive",
    progress_bar: bool = False,
) -> tuple[PolicyVerdict, list[Path]]:
    """Run the benchmarks the policy needs on the configured model (``out/<benchmark>``), then check the policy.

    Returns the verdict and the runs' report.html files, which open with it.
    """
    from culturebias.application.check import validate_policy
    from culturebias.bootstrap.evaluation import run_evaluations

    checked = load_policy(policy)
    named = next((c for c in checked.criteria if c.run is not None), None)
    if named is not None:
        raise PolicyError(
            f"names its run ({named.run}); the runs checked are the model's: write 'Given the {named.benchmark} run'",
            criterion=named.name,
        )
    validate_policy(checked, RegistryCatalog())  # before any model loads
    reader = StoredRuns()
    for ref in _refs(reader, baseline, baseline=True):
        reader.summary(ref)  # a baseline that cannot be read fails before the runs
    results = run_evaluations(checked.benchmarks(), settings, out=out, progress_bar=progress_bar)
    runs = [str(result.summary_path.parent) for result in results.values() if result.summary_path is not None]
    verdict = check(checked, runs, baseline, junit=junit, json=json, inconclusive=inconclusive)
    return verdict, annotate_reports(verdict, runs)

