"""Stable content fingerprints for data, configurations and requests."""

from __future__ import annotations

import hashlib
import json
def stable_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def fingerprint(value: object, length: int = 16) -> str:
    """sha256 of the canonical JSON form of ``value``."""
    return hashlib.sha256(stable_json(value).encode("utf-8")).hexdigest()[:length]


def fingerprint_bytes(chunks: list[tuple[str, bytes]], length: int = 16) -> str:
    """Fingerprint of named byte blobs (e.g. relative file paths and contents)."""
    digest = hashlib.sha256()
    for name, data in sorted(chunks):
        digest.update(name.encode("utf-8"))
        digest.update(b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()[:length]
