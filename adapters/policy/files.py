"""A policy file's text, or a PolicyError naming the file."""

from __future__ import annotations

from pathlib import Path

from culturebias.domain.errors import PolicyError


def policy_text(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise PolicyError(f"cannot read the policy: {error}", file=str(path)) from None
