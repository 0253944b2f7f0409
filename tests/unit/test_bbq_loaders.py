"""KoBBQ and CBBQ loaders: the real files as they are, bad input, and CBBQ's derived biased answers."""

from __future__ import annotations

import csv
import shutil
from collections import Counter
from pathlib import Path

import pytest

from culturebias.adapters.cbbq.files import CBBQFiles
from culturebias.adapters.kobbq.files import BUNDLED, KoBBQFiles
from culturebias.domain.bbq.model import AnswerClass
from culturebias.domain.errors import DataError, MissingDataError

HEADER = "sample_id\tlabel_annotation\tcontext\tquestion\tchoices\tbiased_answer\tanswer\tbbq_id\tbbq_category\tprediction\n"


def kobbq_folder(tmp_path: Path, rows: list[str]) -> Path:
    (tmp_path / "KoBBQ_test_samples.tsv").write_text(HEADER + "".join(r + "\n" for r in rows), encoding="utf-8")
    shutil.copy(BUNDLED / "evaluation_prompts.tsv", tmp_path / "evaluation_prompts.tsv")
    return tmp_path


GOOD = "age-001a-002-dis-bsd\tST\t맥락\t질문?\t['손자', '할머니', '알 수 없음']\t할머니\t손자\t1.0\tAge\t"


def test_bundled_kobbq_loads_every_item_with_its_context_type():
    data = KoBBQFiles(None).load()
    assert len(data.items) == 2280 and not data.skips
    assert sorted(data.prompts) == ["1", "2", "3", "4", "5"]
    assert data.prompts["2"].unknown == "보기 중 답을 찾을 수 없음"
    by_type = Counter((i.context_condition, i.context_polarity) for i in data.items)
    assert by_type == {("ambiguous", None): 1140, ("disambiguated", "biased"): 570, ("disambiguated", "counter_biased"): 570}
    item = next(i for i in data.items if i.sample_id == "age-001b-002-dis-bsd")
    assert item.options == ("할머니", "손자", "알 수 없음")
    assert (item.answer_index, item.biased_index, item.unknown_index) == (0, 0, 2)
    assert item.template_id == "age-001" and item.label_annotation == "ST"
    assert Counter(i.label_annotation for i in data.items) == {"NC": 952, "ST": 856, "TM": 472}


@pytest.mark.shared_data
def test_the_shared_copy_is_the_bundled_copy(kobbq_data):
    assert KoBBQFiles(str(kobbq_data)).fingerprint() == KoBBQFiles(None).fingerprint()


def test_choice_lists_missing_the_answer_or_the_biased_answer_are_counted_skips(tmp_path):
    rows = [
        GOOD,
        "age-001a-003-dis-bsd\tST\t맥락\t질문?\t['손자', '할머니', '알 수 없음']\t할머니\t손녀\t\t\t",
        "age-001a-004-dis-bsd\tST\t맥락\t질문?\t['손자', '할머니', '알 수 없음']\t할아버지\t손자\t\t\t",
        "age-001a-005-amb-bsd\tST\t맥락\t질문?\t['손자', '할머니', '모름']\t할머니\t모름\t\t\t",
        "age-001x-006-amb-bsd\tST\t맥락\t질문?\t['손자', '할머니', '알 수 없음']\t할머니\t알 수 없음\t\t\t",
    ]
    data = KoBBQFiles(str(kobbq_folder(tmp_path, rows))).load()
    assert [i.sample_id for i in data.items] == ["age-001a-002-dis-bsd"]
    reasons = {s.sample_id: (s.row, s.detail) for s in data.skips}
    assert reasons["age-001a-003-dis-bsd"][0] == 3 and "answer '손녀'" in reasons["age-001a-003-dis-bsd"][1]
    assert "biased_answer '할아버지'" in reasons["age-001a-004-dis-bsd"][1]
    assert "unknown option" in reasons["age-001a-005-amb-bsd"][1]
    assert "version" in reasons["age-001x-006-amb-bsd"][1]
    codes = {s.sample_id: (s.reason, s.field) for s in data.skips}
    assert codes == {
        "age-001a-003-dis-bsd": ("answer not among the choices", "answer"),
        "age-001a-004-dis-bsd": ("biased_answer not among the choices", "biased_answer"),
        "age-001a-005-amb-bsd": ("unknown option not among the choices", "choices"),
        "age-001x-006-amb-bsd": ("unknown template version", "sample_id"),
    }
    assert all(s.file == str(tmp_path / "KoBBQ_test_samples.tsv") and s.effect for s in data.skips)


def test_duplicate_sample_ids_and_unreadable_choices_are_data_errors(tmp_path):
    with pytest.raises(DataError) as error:
        KoBBQFiles(str(kobbq_folder(tmp_path, [GOOD, GOOD]))).load()
    assert error.value.row == 3 and error.value.field == "sample_id" and "first at row 2" in str(error.value)
    broken = GOOD.replace("['손자', '할머니', '알 수 없음']", "['손자', '할머니'")
    with pytest.raises(DataError) as error:
        KoBBQFiles(str(kobbq_folder(tmp_path, [broken]))).load()
    assert error.value.field == "choices" and error.value.row == 2


def test_missing_kobbq_data_explains_how_to_point_at_it(tmp_path):
    with pytest.raises(MissingDataError, match="data.path"):
        KoBBQFiles(str(tmp_path / "nowhere"))
    with pytest.raises(MissingDataError, match="KoBBQ_test_samples.tsv"):
        KoBBQFiles(str(tmp_path))


def test_a_samples_file_without_prompts_beside_it_uses_the_bundled_prompts(tmp_path):
    path = tmp_path / "mine.tsv"
    path.write_text(HEADER + GOOD + "\n", encoding="utf-8")
    source = KoBBQFiles(str(path))
    assert source.prompts_path == BUNDLED / "evaluation_prompts.tsv"
    assert len(source.load().items) == 1


def test_bundled_cbbq_loads_and_derives_every_disambiguated_biased_answer():
    data = CBBQFiles(None).load()
    assert data.facts["categories"] == ["disease", "gender", "region", "sexual_orientation"]
    assert len(data.items) == 10016 and not data.skips
    derivation = data.facts["biased_answer_derivation"]
    assert derivation == {"label": 5160, "twin": 4814, "groups": 20, "unresolved": 22}
    unresolved = set(data.facts["biased_answer_unresolved_ids"])
    assert len(unresolved) == 22 and all("-amb-" in s for s in unresolved)
    for item in data.items:
        if not item.ambiguous:
            # the correct answer always contradicts the bias
            assert item.classify(item.answer_index) is AnswerClass.COUNTER_BIASED
        elif item.sample_id not in unresolved:
            assert item.biased_index in (0, 1) and item.answer_index == item.unknown_index == 2


@pytest.mark.shared_data
def test_cbbq_ambiguous_biased_answers_agree_with_their_disambiguated_instances(cbbq_data):
    """Independent check of the template-level twin rule on the shared categories.

    For an ambiguous instance whose disambiguated counterpart exists at instance level
    (same polarity, question and options, context extending the ambiguous context), the
    biased answer must be the option that is not that counterpart's label.
    """
    data = CBBQFiles(str(cbbq_data)).load()
    by_id = {i.sample_id: i for i in data.items}
    checked = 0
    for category in data.facts["categories"]:
        with (cbbq_data / category / "disambiguous" / "disambiguous.csv").open(encoding="utf-8-sig") as handle:
            dis = list(csv.DictReader(handle))
        index: dict[tuple, list[dict]] = {}
        for row in dis:
            index.setdefault((row["question_polarity"], row["question"], row["ans0"], row["ans1"]), []).append(row)
        with (cbbq_data / category / "ambiguous" / "ambiguous.csv").open(encoding="utf-8-sig") as handle:
            for row in csv.DictReader(handle):
                twins = [
                    d
                    for d in index.get((row["question_polarity"], row["question"], row["ans0"], row["ans1"]), [])
                    if d["context"].startswith(row["context"])
                ]
                expected = {1 - int(d["label"]) for d in twins}
                item = by_id[f"{category}-amb-{row['example_id']}"]
                if len(expected) == 1 and item.biased_index is not None:
                    assert item.biased_index == expected.pop(), item.sample_id
                    checked += 1
    assert checked == 4358


def test_cbbq_bad_rows(tmp_path):
    folder = tmp_path / "gender" / "disambiguous"
    folder.mkdir(parents=True)
    header = "example_id,question_index,question_polarity,context_condition,category,subcategory,bias_targeted_groups,source,context,question,ans0,ans1,ans2,label\n"
    rows = [
        "1,1,neg,disambiguous,gender,s,女性,x,一个男生和一个女生。,谁更差？,男生,女生,不知道,0",
        "2,1,neg,disambiguous,gender,s,女性,x,一个男生和一个女生。,谁更差？,男生,男生,不知道,0",
        "3,1,neg,disambiguous,gender,s,女性,x,一个男生和一个女生。,谁更差？,男生,女生,不知道,7",
    ]
    (folder / "disambiguous.csv").write_text("\ufeff" + header + "\n".join(rows) + "\n", encoding="utf-8")
    data = CBBQFiles(str(tmp_path)).load()
    assert [i.sample_id for i in data.items] == ["gender-dis-1"]
    assert data.items[0].biased_index == 1  # label 0 → the other group is the biased answer
    assert {s.sample_id: s.row for s in data.skips} == {"gender-dis-2": 3, "gender-dis-3": 4}
    assert {s.sample_id: (s.reason, s.field) for s in data.skips} == {
        "gender-dis-2": ("options not three distinct", "ans0/ans1/ans2"),
        "gender-dis-3": ("label not an option", "label"),
    }
    (folder / "disambiguous.csv").write_text("\ufeff" + header + rows[0] + "\n" + rows[0] + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="duplicate example_id"):
        CBBQFiles(str(tmp_path)).load()
    with pytest.raises(MissingDataError):
        CBBQFiles(str(tmp_path / "gender" / "disambiguous"))
