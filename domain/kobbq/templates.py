"""KoBBQ template expansion: ``KoBBQ_templates.tsv`` rows to samples (PROTOCOLS §2).

A template row (category, ID, version a/b/c/d) writes its varying parts as
bracketed lists, ``[N1: 손자와, 손녀와]``, in the contexts, questions and
answers; the ``Names`` and ``Lexical_diversity`` columns declare each slot's
values (``N1: [손자, 손녀]; N2: [...]``, ``W1: [...]``, ``X1: [...]``). One
sample picks one value index per slot; the k-th entry of every bracket of
that slot is used (brackets carry the inflected forms).

Every combination of slot values is a sample number ``n`` (1-based, the
last slot varying fastest). Slots are taken in the order they are declared,
except that versions b and d (the same template with the groups swapped)
number their combinations as versions a and c do: their N1/N2 (and X1/X2)
are visited in swapped order, so sample ``n`` of version a and of version b
describe the same pair of people. This numbering reproduces every one of the
2,280 items of ``KoBBQ_test_samples.tsv`` (their ids, contexts, questions,
choices and answers).

Each combination gives four samples: ambiguous/disambiguated context ×
biased/counter-biased question. Choices are (answer to the biased question in
the disambiguated context, answer to the counter-biased one, 알 수 없음).
Versions b and d disambiguate in line with the stereotype, a and c against it:
the biased answer to the biased question is the disambiguated answer of the
biased question in b/d, of the counter-biased question in a/c.

Whitespace runs (including no-break spaces) collapse to one space; list
entries and whole texts are stripped of spaces and stray control characters
at their ends, as in the authors' released samples.
"""

from __future__ import annotations

import itertools
import re
from typing import Iterator, Mapping, Sequence, TypedDict

from culturebias.domain.kobbq.prompts import DATASET_UNKNOWN
from culturebias.domain.errors import DataError


class Sample(TypedDict):
    """One row of ``KoBBQ_test_samples.tsv``."""

    sample_id: str
    label_annotation: str
    context: str
    question: str
    choices: list[str]
    biased_answer: str
    answer: str
    bbq_id: str
    bbq_category: str


BRACKET = re.compile(r"\[(\w+)\s*:([^\]]*)\]")
DECLARATION = re.compile(r"(\w+)\s*:\s*\[(.*)\]\s*$")
TEXT_COLUMNS = (
    "Ambiguous_context",
    "Disambiguating_context",
    "Biased_question",
    "Counter-biased_question",
    "Biased_question_answer",
    "Counter-biased_question_answer",
)
REQUIRED_COLUMNS = ("Category", "ID", "version", "Label_annotation", "Names", "Lexical_diversity", *TEXT_COLUMNS)
SWAPPED = {"N1": "N2", "N2": "N1", "X1": "X2", "X2": "X1"}
BIASED_DISAMBIGUATION_VERSIONS = ("b", "d")
_STRIP = " \t\r\n\x08\x0b\x0c\u00a0\u200b"


def list_entries(body: str) -> list[str]:
    return [entry.strip(_STRIP) for entry in body.split(",")]


def tidy(text: str) -> str:
    return " ".join(text.split()).strip(_STRIP)


def declared_slots(row: Mapping[str, str], row_number: int | None = None) -> dict[str, list[str]]:
    """Slot → values, from the Names and Lexical_diversity columns, in declaration order."""
    slots: dict[str, list[str]] = {}
    for column in ("Names", "Lexical_diversity"):
        for part in (row.get(column) or "").split(";"):
            if not part.strip():
                continue
            match = DECLARATION.match(part.strip())
            if not match:
                raise DataError(f"cannot read slot declaration {part.strip()!r}", row=row_number, field=column)
            slots[match.group(1)] = list_entries(match.group(2))
    return slots


def fill(text: str, choice: Mapping[str, int], row_number: int | None = None, column: str | None = None) -> str:
    def pick(match: re.Match[str]) -> str:
        slot = match.group(1)
        if slot not in choice:
            raise DataError(f"bracket slot {slot} is not declared in Names or Lexical_diversity", row=row_number, field=column)
        entries = list_entries(match.group(2))
        if choice[slot] >= len(entries):
            raise DataError(
                f"bracket [{slot}: ...] has {len(entries)} entries, fewer than the {choice[slot] + 1} declared",
                row=row_number,
                field=column,
            )
        return entries[choice[slot]]

    return tidy(BRACKET.sub(pick, text))


def numbering_order(row: Mapping[str, str], slots: Mapping[str, Sequence[str]]) -> list[str]:
    order = list(slots)
    if row["version"] in BIASED_DISAMBIGUATION_VERSIONS:
        order = [SWAPPED[s] if SWAPPED.get(s) in slots else s for s in order]
    return order


def template_key(row: Mapping[str, str]) -> str:
    """``age-001``: category and template number, as in sample ids (all versions together)."""
    return f"{row['Category'].strip().lower()}-{int(row['ID']):03d}"


def expand_template(row: Mapping[str, str], row_number: int | None = None, unknown: str = DATASET_UNKNOWN) -> Iterator[Sample]:
    """The samples of one template row, as rows of ``KoBBQ_test_samples.tsv``."""
    missing = [c for c in REQUIRED_COLUMNS if c not in row]
    if missing:
        raise DataError(f"missing template column(s) {missing}", row=row_number)
    version = row["version"].strip()
    try:
        base = f"{template_key(row)}{version}"
    except ValueError:
        raise DataError(f"template ID {row['ID']!r} is not a number", row=row_number, field="ID") from None
    slots = declared_slots(row, row_number)
    order = numbering_order(row, slots)
    biased_version = version in BIASED_DISAMBIGUATION_VERSIONS
    for number, combination in enumerate(itertools.product(*(range(len(slots[s])) for s in order)), start=1):
        choice = dict(zip(order, combination))
        text = {column: fill(row[column], choice, row_number, column) for column in TEXT_COLUMNS}
        ambiguous = text["Ambiguous_context"]
        disambiguated = tidy(ambiguous + " " + text["Disambiguating_context"])
        biased_q_answer = text["Biased_question_answer"]
        counter_q_answer = text["Counter-biased_question_answer"]
        biased_for = {
            "bsd": biased_q_answer if biased_version else counter_q_answer,
            "cnt": counter_q_answer if biased_version else biased_q_answer,
        }
        questions = {"bsd": text["Biased_question"], "cnt": text["Counter-biased_question"]}
        dis_answers = {"bsd": biased_q_answer, "cnt": counter_q_answer}
        choices = [biased_q_answer, counter_q_answer, unknown]
        for condition, context in (("amb", ambiguous), ("dis", disambiguated)):
            for polarity in ("bsd", "cnt"):
                yield {
                    "sample_id": f"{base}-{number:03d}-{condition}-{polarity}",
                    "label_annotation": row["Label_annotation"].strip(),
                    "context": context,
                    "question": questions[polarity],
                    "choices": list(choices),
                    "biased_answer": biased_for[polarity],
                    "answer": unknown if condition == "amb" else dis_answers[polarity],
                    "bbq_id": (row.get("BBQ_id") or "").strip(),
                    "bbq_category": (row.get("BBQ_category") or "").strip(),
                }


def expand_templates(rows: Sequence[Mapping[str, str]], versions: Sequence[str] | None = None) -> Iterator[Sample]:
    """Samples of every template row (row numbers are 1-based file rows, header = 1)."""
    for index, row in enumerate(rows):
        if versions is not None and row.get("version", "").strip() not in versions:
            continue
        yield from expand_template(row, row_number=index + 2)
