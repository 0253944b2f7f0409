"""LIBRA's named methods: the comparison chosen, masked L(S) spans, and the masked LM's choice of meaning."""

from __future__ import annotations

from dataclasses import replace

import pytest
from pydantic import ValidationError

from culturebias.application.libra.method import comparison_kind
from culturebias.domain.libra.meaning_choice import choice_text, distractors
from culturebias.domain.libra.options import LibraOptions
from culturebias.domain.libra.stereoset import intrasentence_span
from culturebias.domain.libra.triplets import GlossaryEntry
from culturebias.testing.context import fake_context

GLOSSARY = [
    GlossaryEntry("whānau", "extended family group"),
    GlossaryEntry("kai", "food or a meal"),
    GlossaryEntry("marae", "a meeting ground"),
    GlossaryEntry("whanau-ora", "extended family group"),  # same definition: never a distractor of whānau
    GlossaryEntry("bach", "a holiday house"),
]


@pytest.mark.parametrize(
    ("option", "configured", "expected"),
    [
        ("auto", True, "judge"),
        ("auto", False, "embedding"),
        ("embedding", True, "embedding"),
        ("judge", False, "judge"),
    ],
)
def test_the_judge_compares_wherever_one_is_configured(option, configured, expected):
    ctx = replace(fake_context(), judge_configured=configured)
    assert comparison_kind(LibraOptions(comparison=option), ctx) == expected


def test_the_default_comparison_is_auto():
    assert LibraOptions().comparison == "auto" and LibraOptions().masked_likelihood == "sum"


def test_distractors_are_other_definitions_in_a_fixed_order_per_seed():
    first = distractors(GLOSSARY[0], GLOSSARY, 3, seed=0)
    assert len(first) == 3 and all(d.definition != "extended family group" for d in first)
    assert first == distractors(GLOSSARY[0], list(reversed(GLOSSARY)), 3, seed=0)  # not the glossary's order
    orders = {tuple(d.term for d in distractors(GLOSSARY[0], GLOSSARY, 3, seed=s)) for s in range(8)}
    assert len(orders) > 1  # the seed decides the order
    assert len(distractors(GLOSSARY[0], GLOSSARY, 10, seed=0)) == 3  # no more than there are


def test_choice_text_marks_the_definition_span():
    template = LibraOptions().meaning_choice_template
    text, start, end = choice_text(template, term="kai", sentence="The men brought kai.", definition="food or a meal")
    assert text == 'In the sentence "The men brought kai.", the word "kai" means: food or a meal'
    assert text[start:end] == "food or a meal"
    # a slot-like text inside the sentence is not filled again
    text, start, end = choice_text("{sentence} {term}: {definition}.", term="x", sentence="a {definition} b", definition="d")
    assert text == "a {definition} b x: d." and text[start:end] == "d"


@pytest.mark.parametrize("template", ["{term} means", "{definition} {definition} {term}", "{definition} only"])
def test_a_choice_template_needs_one_definition_slot_and_the_term(template):
    with pytest.raises(ValidationError):
        LibraOptions(meaning_choice_template=template)


@pytest.mark.parametrize(
    ("context", "sentence", "span"),
    [
        ("The chess player was BLANK.", "The chess player was nerdy.", (21, 26)),
        ("BLANK people are tall.", "Dutch people are tall.", (0, 5)),
        ("The chess player was BLANK.", "The chess player is nerdy.", None),
        ("The chess player was BLANK.", "The chess player was .", None),  # nothing filled in
        ("No blank here.", "No blank here.", None),
    ],
)
def test_the_intrasentence_span_is_the_filled_in_blank(context, sentence, span):
    assert intrasentence_span(context, sentence) == span
