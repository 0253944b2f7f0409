"""Policy verdicts on disk: ``check --json`` files and the verdict.json ``check --annotate-reports`` stores in a run folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from culturebias.domain.errors import DataError
from culturebias.domain.policy.verdict import PolicyVerdict

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
