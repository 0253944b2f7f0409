"""The per-item audit trail kept in the run's result store (stage ``items``, keyed by item id).

Records are committed in batches, each batch one ``save_results`` transaction,
so a run killed while recording keeps every batch committed before the kill. An
item already stored with the same content is not written again: a resumed run
adds only what is new, and an append-only store (JSONL) does not grow on resume.
Texts are redacted as everything else culturebias stores (``domain.redaction``).
"""

from __future__ import annotations

from typing import Any, Iterable

from culturebias.domain.audit import ITEMS_STAGE, ORDER_KEY, ItemRecord
from culturebias.domain.redaction import redact_text
from culturebias.ports.results import ResultStore

DEFAULT_BATCH = 2000
# Every pattern redact_text hides holds one of these (lower-cased): a text with none of them is returned
# unchanged, so the (much slower) full redaction runs only on the few texts that could hold a secret.
_SECRET_MARKERS = (
    "://", "bearer", "basic", "key", "token", "secret", "pass", "pwd", "auth", "credential", "sig", "cookie",
    "session", "sk-", "sk_", "hf_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "akia", "aiza",
)


def _redacted(text: str) -> str:
    lowered = text.lower()
    return redact_text(text) if any(marker in lowered for marker in _SECRET_MARKERS) else text


def item_payload(record: ItemRecord) -> dict[str, Any]:  # Any: a stored JSON payload
    """The stored JSON of a record, its texts redacted."""
    payload = record.model_dump(mode="json")
    for name in ("prompt", "answer"):
        if isinstance(payload.get(name), str):
            payload[name] = _redacted(payload[name])
    payload["texts"] = [_redacted(t) for t in payload["texts"]]
    return payload


class StoredItemLog:
    """``ports.audit.ItemLog`` over a ``ResultStore``.

    ``repeat``: which of ``run.repeats`` records (0-based). Every record gets ``meta.repeat``; after the
    first repeat its id ends in ``#<repeat>``, so each repeat's items are kept apart and a single run's
    ids stay as they are.
    """

    def __init__(self, store: ResultStore, run_id: str, batch: int = DEFAULT_BATCH, repeat: int = 0):
        self._store = store
        self._run_id = run_id
        self._batch = max(1, batch)
        self._repeat = repeat
        self._stored: dict[str, dict[str, Any]] | None = None  # Any: stored JSON payloads

    def _known(self) -> dict[str, dict[str, Any]]:  # Any: stored JSON payloads
        if self._stored is None:
            self._stored = self._store.load_results(self._run_id, ITEMS_STAGE)
        return self._stored

    def record(self, items: Iterable[ItemRecord]) -> None:
        known = self._known()
        pending: dict[str, dict[str, Any]] = {}  # Any: JSON payloads
        for index, item in enumerate(items):
            payload = item_payload(item)
            key = item.item_id if self._repeat == 0 else f"{item.item_id}#{self._repeat}"
            payload["item_id"] = key
            payload["metadata"]["repeat"] = self._repeat
            payload[ORDER_KEY] = [self._repeat, index]
            if known.get(key) == payload:
                continue
            pending[key] = payload
            if len(pending) >= self._batch:
                self._commit(pending)
                pending = {}
        self._commit(pending)

    def _commit(self, pending: dict[str, dict[str, Any]]) -> None:  # Any: JSON payloads
        if pending:
            self._store.save_results(self._run_id, ITEMS_STAGE, pending)
            self._known().update(pending)


def stored_items(store: ResultStore, run_id: str) -> list[ItemRecord]:
    """A run's item records in the order they were recorded (repeat by repeat), whatever order the store keeps."""
    stored = store.load_results(run_id, ITEMS_STAGE)

    def position(key: str) -> tuple[list[int], str]:
        order = stored[key].get(ORDER_KEY)
        return (order if isinstance(order, list) else [0, 0]), key

    return [ItemRecord.model_validate(stored[key]) for key in sorted(stored, key=position)]
