"""TWBias data: target groups and their terms, attributes, bias sentences (PROTOCOLS §1).

Plain frozen dataclasses; the loader in ``adapters/twbias/files.py``
builds them from the authors' CSV files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from culturebias.domain.skips import SkippedRow

Axis = Literal["gender", "ethnicity"]

# Prompt types in report order: 0 = the sentence alone, 00 = an empty user turn,
# 1..10 = the ten user prompts of prompts.json.
PROMPT_TYPES: tuple[str, ...] = ("0", "00", *(str(i) for i in range(1, 11)))
USER_PROMPT_TYPES: tuple[str, ...] = tuple(str(i) for i in range(1, 11))

# Column code of a target table → stable English key (used in summary.json and plots).
GROUP_KEYS: dict[Axis, dict[str, str]] = {
    "gender": {"T1": "male", "T2": "female"},
    "ethnicity": {"T1": "hoklo", "T2": "waishengren", "T3": "han", "T4": "indigenous", "T5": "hakka"},
}
GROUP_LABELS: dict[str, str] = {
    "male": "Male",
    "female": "Female",
    "hoklo": "Hoklo (Benshengren)",
    "waishengren": "Waishengren",
    "han": "Han",
    "indigenous": "Indigenous",
    "hakka": "Hakka",
}
# The attribute Content standing for "no particular attribute" (a None in a T-A list).
OTHER_ATTRIBUTE = "其他"
OTHER_CATEGORY = "Other"


@dataclass(frozen=True, slots=True)
class TargetGroup:
    axis: Axis
    code: str  # the target table's column, e.g. "T1"
    terms: tuple[str, ...]

    @property
    def key(self) -> str:
        """e.g. ``T1_hoklo``: the T-code and the English name."""
        return f"{self.code}_{GROUP_KEYS[self.axis].get(self.code, self.code.lower())}"

    @property
    def label(self) -> str:
        name = GROUP_KEYS[self.axis].get(self.code, self.code)
        return GROUP_LABELS.get(name, name)


@dataclass(frozen=True, slots=True)
class Attribute:
    content: str  # the attribute term as it appears in T-A lists
    type: int | None  # the table's ``Type`` (-1, 0, 1)
    category: str  # the table's ``Category`` (English)
    row: int


@dataclass(frozen=True, slots=True)
class TargetAttribute:
    target: str
    attribute: str | None  # None: the sentence names no particular attribute


@dataclass(frozen=True, slots=True)
class BiasSentence:
    sentence_id: str
    text: str
    toxicity: int | None  # 0 or 1; None when the cell is blank or invalid
    # None when the T-A list could not be parsed (the row then has no category).
    target_attributes: tuple[TargetAttribute, ...] | None
    file: str
    row: int  # line of the record in ``file`` (header = 1)


@dataclass(frozen=True, slots=True)
class SentenceSet:
    """The labelled sentences of one origin group, with that group's attribute table."""

    axis: Axis
    group_code: str
    name: str  # the file's own name for the group, e.g. "female", "B", "hakka"
    file: str
    sentences: tuple[BiasSentence, ...]
    attributes: dict[str, Attribute] = field(hash=False)
    attribute_file: str = ""


@dataclass(frozen=True, slots=True)
class AxisData:
    axis: Axis
    groups: dict[str, TargetGroup] = field(hash=False)  # by code
    # The target table's rows, each as {code: term} over its non-blank cells
    # (gender pairs terms by row; ethnicity pairs every term with every term).
    rows: tuple[dict[str, str], ...]
    sentence_sets: dict[str, SentenceSet] = field(hash=False)  # by group code


@dataclass(frozen=True, slots=True)
class TWBiasDataset:
    axes: dict[str, AxisData] = field(hash=False)
    prompts: dict[str, str] = field(hash=False)  # prompt type → user message
    skips: tuple[SkippedRow, ...] = ()
    # Rows repeating an earlier row's sentence in the same file under another Sentence ID: kept (each is a
    # row of its own, as in the authors' code), counted and reported; protocol.duplicate_sentences=refuse refuses them.
    duplicates: tuple[SkippedRow, ...] = ()
