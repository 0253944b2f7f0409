"""Bias specifications ``B = (T_o, T_r, A_o)`` and target-term replacement (PROTOCOLS §1, §1.1)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from culturebias.domain.errors import MissingDataError
from culturebias.domain.twbias.model import AxisData, Axis, SentenceSet, TargetGroup

# Gender: T1→T2 on the male sentences, T2→T1 on the female sentences (headline keys).
GENDER_SPECS: dict[str, tuple[str, str]] = {"female": ("T2", "T1"), "male": ("T1", "T2")}
ETHNICITY_ORIGINS: tuple[str, ...] = ("T1", "T2", "T4", "T5")
ETHNICITY_GROUPS: tuple[str, ...] = ("T1", "T2", "T3", "T4", "T5")


@dataclass(frozen=True, slots=True)
class BiasSpecification:
    key: str  # e.g. "female" or "T1_hoklo->T2_waishengren"
    axis: Axis
    origin: TargetGroup
    reference: TargetGroup
    sentences: SentenceSet  # the origin's sentences with its attribute table A_o
    term_pairs: tuple[tuple[str, str], ...]  # (origin term, reference term)

    @property
    def label(self) -> str:
        return f"{self.origin.key} → {self.reference.key}"


def row_term_pairs(rows: tuple[dict[str, str], ...], origin: str, reference: str) -> tuple[tuple[str, str], ...]:
    """Row-aligned pairs (gender): one pair per table row holding both terms; duplicates once."""
    pairs = [(row[origin], row[reference]) for row in rows if origin in row and reference in row]
    return tuple(dict.fromkeys(pairs))


def cartesian_term_pairs(origin: TargetGroup, reference: TargetGroup) -> tuple[tuple[str, str], ...]:
    """Every origin term with every reference term (ethnicity); duplicates once."""
    return tuple(dict.fromkeys(product(origin.terms, reference.terms)))


def replace_terms(sentence: str, term_pairs: tuple[tuple[str, str], ...]) -> list[str]:
    """One replaced sentence per pair whose origin term occurs (all its occurrences replaced)."""
    return [sentence.replace(origin, reference) for origin, reference in term_pairs if origin in sentence]


def _sentence_set(axis: AxisData, code: str) -> SentenceSet:
    try:
        return axis.sentence_sets[code]
    except KeyError:
        raise MissingDataError(f"the {axis.axis} data has no labelled sentences for origin group {code}") from None


def gender_specifications(axis: AxisData) -> list[BiasSpecification]:
    specs = []
    for key, (origin, reference) in GENDER_SPECS.items():
        specs.append(
            BiasSpecification(
                key=key,
                axis="gender",
                origin=axis.groups[origin],
                reference=axis.groups[reference],
                sentences=_sentence_set(axis, origin),
                term_pairs=row_term_pairs(axis.rows, origin, reference),
            )
        )
    return specs


def ethnicity_spec_key(origin: TargetGroup, reference: TargetGroup) -> str:
    return f"{origin.key}->{reference.key}"


def ethnicity_specifications(axis: AxisData) -> list[BiasSpecification]:
    """The 16 pairs: every origin in {T1,T2,T4,T5} against every other group in {T1..T5}."""
    specs = []
    for origin_code in ETHNICITY_ORIGINS:
        origin = axis.groups[origin_code]
        sentences = _sentence_set(axis, origin_code)
        for reference_code in ETHNICITY_GROUPS:
            if reference_code == origin_code:
                continue
            reference = axis.groups[reference_code]
            specs.append(
                BiasSpecification(
                    key=ethnicity_spec_key(origin, reference),
                    axis="ethnicity",
                    origin=origin,
                    reference=reference,
                    sentences=sentences,
                    term_pairs=cartesian_term_pairs(origin, reference),
                )
            )
    return specs
