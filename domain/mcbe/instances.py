"""Bias Evaluation Instances (BEIs) and the dataset they form (PROTOCOLS §3)."""

from __future__ import annotations

from dataclasses import dataclass

PLACEHOLDER = "[PLH]"
WORD_SEPARATOR = "，"  # the released files separate substitution words with a full-width comma


@dataclass(frozen=True, slots=True)
class BEI:
    """One Bias Evaluation Instance.

    ``words[0]`` gives the default sentence. ``source`` names the file and row it came
    from (row 1-based, header = row 1) so every per-item result can be traced back.
    """

    category: str
    context: str
    sentence: str
    words: tuple[str, ...]
    subtype: str
    explanation: str
    score: float  # human bias severity, 0..10
    source: str = ""
    row: int = 0

    @property
    def item_id(self) -> str:
        return f"{self.category}:{self.row}" if self.row else f"{self.category}:{self.sentence}"

    def filled(self, word: str) -> str:
        """The sentence with the placeholder replaced by ``word``."""
        return self.sentence.replace(PLACEHOLDER, word)

    def scenario(self, word: str) -> str:
        """``context + sentence`` with the placeholder replaced (wherever it occurs)."""
        return (self.context + self.sentence).replace(PLACEHOLDER, word)

    @property
    def default_word(self) -> str:
        return self.words[0]

    @property
    def default_sentence(self) -> str:
        return self.filled(self.words[0])


def split_words(cell: str) -> list[str]:
    """Substitution words from a ``words`` cell: split on the full-width comma, trimmed."""
    return [part.strip() for part in cell.split(WORD_SEPARATOR)]


@dataclass(frozen=True)
class McBEDataset:
    instances: tuple[BEI, ...]
    notes: tuple[str, ...] = ()

    @property
    def categories(self) -> list[str]:
        seen: dict[str, None] = {}
        for bei in self.instances:
            seen.setdefault(bei.category, None)
        return list(seen)

    def by_category(self, category: str) -> list[BEI]:
        return [bei for bei in self.instances if bei.category == category]

    def subcategories(self, category: str) -> list[str]:
        """The subtypes found in the data for ``category``, in first-seen order."""
        seen: dict[str, None] = {}
        for bei in self.by_category(category):
            seen.setdefault(bei.subtype, None)
        return list(seen)

    def restricted(self, categories: list[str] | None = None, limit: int | None = None) -> "McBEDataset":
        """Only the given categories (all when empty), at most ``limit`` BEIs each."""
        wanted = set(categories) if categories else None
        kept: list[BEI] = []
        per_category: dict[str, int] = {}
        for bei in self.instances:
            if wanted is not None and bei.category not in wanted:
                continue
            n = per_category.get(bei.category, 0)
            if limit is not None and n >= limit:
                continue
            per_category[bei.category] = n + 1
            kept.append(bei)
        return McBEDataset(tuple(kept), self.notes)
