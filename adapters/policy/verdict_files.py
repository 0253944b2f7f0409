"""Policy verdicts on disk: ``check --json`` / ``--junit`` files, and the verdict.json ``check --annotate-reports``
keeps in a run folder (``ports.verdicts.RunFolderVerdicts``), which a comparison of the run opens with."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from culturebias.adapters.policy.junit import junit_xml
from culturebias.application.out_folder import write_text_atomically
from culturebias.domain.errors import DataError
from culturebias.domain.policy.verdict import InconclusiveAs, PolicyVerdict

VERDICT_FILE = "verdict.json"  # in a checked run folder (--annotate-reports)


def read_verdict(path: str | Path) -> PolicyVerdict:
    file = Path(path).expanduser()
    try:
        return PolicyVerdict.model_validate_json(file.read_text(encoding="utf-8"))
    except OSError as error:
        raise DataError(f"cannot read the verdict: {error.strerror or error}", file=str(file)) from None
    except ValueError as error:
        raise DataError(f"not a verdict of culturebias check --json: {str(error).splitlines()[0]}", file=str(file)) from None


def stored_verdicts(runs: Sequence[Any], files: Sequence[str | Path] = ()) -> list[PolicyVerdict]:  # Any: RunRefs
    """The verdicts stored in the run folders among ``runs``, then those in ``files`` (``check --json``):
    what a comparison of these runs opens with."""
    found = []
    for run in runs:
        if isinstance(run, (str, Path)) and Path(run).expanduser().exists():
            folder = Path(run).expanduser()
            stored = (folder if folder.is_dir() else folder.parent) / VERDICT_FILE
            if stored.is_file():
                found.append(read_verdict(stored))
    return found + [read_verdict(f) for f in files]


def write_verdict(
    verdict: PolicyVerdict, *, junit: str | Path | None, json: str | Path | None, inconclusive: InconclusiveAs
) -> None:
    """The verdict as JUnit XML (``inconclusive``: how a criterion neither met nor failed shows) and as JSON, atomically."""
    if junit is not None:
        write_text_atomically(Path(junit).expanduser(), junit_xml(verdict, inconclusive))
    if json is not None:
        write_text_atomically(Path(json).expanduser(), verdict.to_json() + "\n")


class FolderVerdicts:
    """``ports.verdicts.RunFolderVerdicts``: verdict.json next to the run's summary.json."""

    def run_folder(self, run: str | Path) -> Path | None:
        folder = Path(run).expanduser()
        folder = folder if folder.is_dir() else folder.parent
        return folder if (folder / "summary.json").is_file() else None

    def keep(self, verdict: PolicyVerdict, folder: Path) -> Path:
        write_text_atomically(folder / VERDICT_FILE, verdict.to_json() + "\n")
        return folder / VERDICT_FILE
