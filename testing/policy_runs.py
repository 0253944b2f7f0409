"""Finished KoBBQ run folders of scripted models, for acceptance-policy tests (written once per process).

Each folder holds summary.json, report.md and the run's SQLite store (the item
records the paired baseline test rebuilds per-template tallies from):

- ``abstainer``: always "unknown" (diff-bias 0; every resample agrees: a Newcombe score interval);
- ``stereotyper``: always the biased option (diff-bias 1);
- ``guesser``: a seeded random option (diff-bias near 0, an interval of a few hundredths), run with
  ``protocol.validity=off`` so that its numbers can exercise the interval rules (with the rules on, its
  bias scores are not measured: PROTOCOLS §6);
- ``coin``: the same random option with the validity rules on (its bias scores not measured);
- ``always-a``: always the first shown letter, validity on (not measured: position_dominance);
- ``limited``: ``abstainer`` on the first 400 items only (``--limit 400``);
- ``other-data``: ``abstainer``'s summary with another data fingerprint and run id.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.testing.kobbq_runs import kobbq_run

POLICIES = {"abstainer": "unknown", "stereotyper": "biased", "guesser": "random"}
_written: dict[str, Path] = {}


def _run(out: Path, policy: str, **options: object) -> Path:
    store = SQLiteResultStore(out / "results.sqlite")
    try:
        kobbq_run(policy, name=out.name, out_dir=out, store=store, options=options or None)
    finally:
        store.close()
    return out


def replayed_runs(root: Path) -> dict[str, Path]:
    """The run folders by name, written under ``root`` on the first call (later calls return those)."""
    if _written:
        return dict(_written)
    for name, policy in POLICIES.items():
        _written[name] = _run(root / name, policy, **({"validity": "off"} if name == "guesser" else {}))
    _written["coin"] = _run(root / "coin", "random")
    _written["always-a"] = _run(root / "always-a", "first")
    _written["limited"] = _run(root / "limited", "unknown", limit=400)
    other = root / "other-data"
    shutil.copytree(root / "abstainer", other)
    summary = json.loads((other / "summary.json").read_text(encoding="utf-8"))
    summary["data"]["fingerprint"] = "0" * len(summary["data"]["fingerprint"])
    summary["run_id"] = "kobbq-other-data"
    (other / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
    _written["other-data"] = other
    return dict(_written)
