"""Bias specifications, term pairs, replacement, categories and protocol settings."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from culturebias.domain.errors import MissingDataError
from culturebias.domain.twbias.categories import other_category, sentence_categories
from culturebias.domain.twbias.model import (
    PROMPT_TYPES,
    Attribute,
    AxisData,
    BiasSentence,
    SentenceSet,
    TargetAttribute,
    TargetGroup,
)
from culturebias.domain.twbias.options import TWBiasOptions
from culturebias.domain.twbias.specification import (
    cartesian_term_pairs,
    ethnicity_specifications,
    gender_specifications,
    replace_terms,
    row_term_pairs,
)


def sentence(text: str, pairs=(), toxicity=0, row=2) -> BiasSentence:
    return BiasSentence("1", text, toxicity, tuple(TargetAttribute(t, a) for t, a in pairs), "f.csv", row)


def sentence_set(axis, code, sentences=(), attributes=None) -> SentenceSet:
    return SentenceSet(axis, code, code.lower(), f"{code}.csv", tuple(sentences), attributes or {}, f"{code}-A.csv")


def test_gender_pairs_follow_the_rows_and_skip_half_rows():
    rows = ({"T1": "男人", "T2": "女人"}, {"T1": "帥哥", "T2": "正妹"}, {"T1": "帥哥", "T2": "美女"}, {"T1": "本土人"})
    assert row_term_pairs(rows, "T1", "T2") == (("男人", "女人"), ("帥哥", "正妹"), ("帥哥", "美女"))
    assert row_term_pairs(rows, "T2", "T1") == (("女人", "男人"), ("正妹", "帥哥"), ("美女", "帥哥"))
    assert row_term_pairs(rows + ({"T1": "男人", "T2": "女人"},), "T1", "T2")[0:1] == (("男人", "女人"),)
    assert len(row_term_pairs(rows + ({"T1": "男人", "T2": "女人"},), "T1", "T2")) == 3


def test_ethnicity_pairs_are_the_cartesian_product():
    origin = TargetGroup("ethnicity", "T5", ("客家人", "客家"))
    reference = TargetGroup("ethnicity", "T3", ("漢人", "漢族"))
    assert cartesian_term_pairs(origin, reference) == (
        ("客家人", "漢人"), ("客家人", "漢族"), ("客家", "漢人"), ("客家", "漢族"),
    )


def test_replacement_swaps_every_occurrence_once_per_matching_pair():
    pairs = (("客家人", "漢人"), ("客家", "漢族"), ("原住民", "外省人"))
    assert replace_terms("客家人說客家話", pairs) == ["漢人說客家話", "漢族人說漢族話"]
    assert replace_terms("沒有目標詞", pairs) == []


def test_group_keys_and_labels():
    group = TargetGroup("ethnicity", "T2", ("外省",))
    assert group.key == "T2_waishengren" and group.label == "Waishengren"
    assert TargetGroup("gender", "T1", ("男",)).key == "T1_male"


def gender_axis() -> AxisData:
    groups = {"T1": TargetGroup("gender", "T1", ("男人",)), "T2": TargetGroup("gender", "T2", ("女人",))}
    sets = {"T1": sentence_set("gender", "T1"), "T2": sentence_set("gender", "T2")}
    return AxisData("gender", groups, ({"T1": "男人", "T2": "女人"},), sets)


def test_gender_runs_t1_to_t2_on_male_and_t2_to_t1_on_female_sentences():
    specs = {s.key: s for s in gender_specifications(gender_axis())}
    assert (specs["male"].origin.code, specs["male"].reference.code, specs["male"].sentences.group_code) == ("T1", "T2", "T1")
    assert (specs["female"].origin.code, specs["female"].reference.code, specs["female"].sentences.group_code) == ("T2", "T1", "T2")
    assert specs["female"].term_pairs == (("女人", "男人"),)


def test_ethnicity_has_sixteen_specifications_without_han_as_origin():
    codes = ("T1", "T2", "T3", "T4", "T5")
    groups = {c: TargetGroup("ethnicity", c, (f"term{c}",)) for c in codes}
    sets = {c: sentence_set("ethnicity", c) for c in ("T1", "T2", "T4", "T5")}
    specs = ethnicity_specifications(AxisData("ethnicity", groups, (), sets))
    assert len(specs) == 16
    assert {s.origin.code for s in specs} == {"T1", "T2", "T4", "T5"}
    assert all(s.origin.code != s.reference.code for s in specs)
    assert specs[0].key == "T1_hoklo->T2_waishengren"


def test_a_missing_origin_file_is_missing_data():
    axis = gender_axis()
    del axis.sentence_sets["T2"]
    with pytest.raises(MissingDataError, match="T2"):
        gender_specifications(axis)


ATTRIBUTES = {
    "貪": Attribute("貪", -1, "Personality/Behavior", 3),
    "其他": Attribute("其他", -1, "Other (table)", 9),
}


def test_categories_explode_the_pairs_and_none_maps_to_other():
    cats, skips = sentence_categories(sentence("x", [("閩南", "貪"), ("閩南人", None), ("福佬", "貪")]), ATTRIBUTES)
    assert cats == ("Personality/Behavior", "Other (table)", "Personality/Behavior")
    assert skips == []
    assert other_category({}) == "Other"


def test_an_unknown_attribute_is_a_counted_skip_with_file_row_field():
    cats, skips = sentence_categories(sentence("x", [("閩南", "不存在"), ("閩南", "貪")], row=7), ATTRIBUTES)
    assert cats == ("Personality/Behavior",)
    assert [(s.reason, s.file, s.row, s.field) for s in skips] == [("attribute_unknown", "f.csv", 7, "T-A Combination")]


def test_an_empty_or_unparsed_list_has_no_category():
    assert sentence_categories(sentence("x", []), ATTRIBUTES)[1][0].reason == "ta_empty"
    unparsed = BiasSentence("1", "x", 0, None, "f.csv", 2)
    assert sentence_categories(unparsed, ATTRIBUTES) == ((), [])


def test_settings_parse_strings_from_set():
    s = TWBiasOptions.model_validate(
        {"groups": "gender", "prompt_types": "2,0,00", "test": "welch", "effect": "d", "alpha": "0.01", "limit": "5"}
    )
    assert s.groups == ["gender"] and s.prompt_types == ["0", "00", "2"]
    assert (s.test, s.effect, s.alpha, s.limit) == ("welch", "d", 0.01, 5)
    analysis = s.analysis()
    assert (analysis.test, analysis.effect, analysis.alpha, analysis.outlier_sigma) == ("welch", "d", 0.01, 3.0)


def test_settings_defaults_are_the_protocol():
    s = TWBiasOptions()
    assert s.groups == ["gender", "ethnicity"] and s.prompt_types == list(PROMPT_TYPES)
    assert (s.test, s.effect, s.alpha, s.outlier_sigma, s.limit, s.category_rows) == ("paired", "dz", 0.05, 3.0, None, "exploded")
    assert TWBiasOptions.model_validate({"prompt_types": 1}).prompt_types == ["1"]


@pytest.mark.parametrize(
    "bad",
    [{"groups": "religion"}, {"prompt_types": "11"}, {"prompt_types": ""}, {"test": "z"}, {"alpha": "1.5"}, {"limit": "0"}, {"colour": "red"}],
)
def test_settings_reject_unknown_values(bad):
    with pytest.raises(ValidationError):
        TWBiasOptions.model_validate(bad)
