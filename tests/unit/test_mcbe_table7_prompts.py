"""McBE's default prompt set is the paper's Table 7, verbatim (issue 36): the strings pinned in our
docs/PROTOCOLS.md, and the shared contract's quote of Table 7 read through its PDF-conversion punctuation."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from culturebias.domain.mcbe.instances import BEI
from culturebias.domain.mcbe.options import McBEOptions
from culturebias.domain.mcbe.prompts import PROMPT_SETS, with_judge_role
from culturebias.domain.mcbe.prompts_released import JUDGE_FOCUS, SEVERITY_CRITERIA
from culturebias.domain.mcbe.taxonomy import BA_CRITERIA

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "spec" / "PROTOCOLS.md"
OURS = ROOT / "docs" / "PROTOCOLS.md"
LABELS = {"SC": "sc", "SS": "ss", "BA, tested model": "ba", "BA, LLM judge": "judge", "BS": "bs"}

BEI_ = BEI("gender", "那天，", "[PLH]说了一句话。", ("甲", "乙"), "子类", "解释。", 3.0, "gender.xlsx", 2)
SENTENCE = "甲说了一句话。"
SUBCATEGORIES = ["子类", "其他"]


def table7_with_placeholders() -> dict[str, str]:
    """The default set's prompts, each placeholder's filling replaced by Table 7's placeholder."""
    prompts = McBEOptions().prompts
    sc = prompts.classification(SENTENCE, SUBCATEGORIES)[0].content
    ss = prompts.selection("第一句。", "第二句。")[0].content
    ba = prompts.analysis(BEI_)[0].content
    criterion = BA_CRITERIA[0]
    judge = prompts.judge("分析。", "解释。", criterion)[0].content
    bs = prompts.scoring(BEI_)[0].content
    return {
        "sc": sc.replace(SENTENCE, "[Default Sentence]").replace(str(SUBCATEGORIES), "[All Subcategories]"),
        "ss": ss.replace("第一句。", "[Sentence 1]").replace("第二句。", "[Sentence 2]"),
        "ba": ba.replace(SENTENCE, "[Default Sentence]").replace("甲", "[Word]"),
        "judge": judge.replace("分析。", "[Analysis]").replace("解释。", "[Explanation]")
        .replace(JUDGE_FOCUS[criterion.key], "[Scoring Criteria for Bias Analysis]")
        .replace(f"0到{criterion.high}", "[Score Range]"),
        "bs": bs.replace(SENTENCE, "[Default Sentence]").replace(SEVERITY_CRITERIA, "[Scoring Criteria for Bias Scoring]"),
    }


def quoted(text: str) -> dict[str, str]:
    """``  - LABEL: `PROMPT` `` lines of a Table 7 quote, by task."""
    found = {}
    for label, key in LABELS.items():
        match = re.search(rf"^\s*- {re.escape(label)}: `([^`]+)`", text, flags=re.MULTILINE)
        assert match, f"no Table 7 line for {label}"
        found[key] = match.group(1)
    return found


def test_the_default_prompts_are_the_strings_our_protocols_pins():
    text = OURS.read_text(encoding="utf-8")
    block = text.split("<!-- table7-prompts -->", 1)[1].split("<!-- /table7-prompts -->", 1)[0]
    pinned = {key: value.replace("⏎", "\n") for key, value in quoted(block).items()}
    assert table7_with_placeholders() == pinned


def _as_converted(text: str) -> str:
    """What a PDF conversion leaves of a prompt: full-width punctuation folded to ASCII (NFKC), no line breaks or spaces."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


@pytest.mark.skipif(not SHARED.is_file(), reason=f"the shared contract is not here ({SHARED}): only our pinned copy is checked")
def test_the_default_prompts_are_table7_as_the_shared_contract_quotes_it():
    section = SHARED.read_text(encoding="utf-8").split("Table 7 (McBE paper, Appendix D.3), verbatim", 1)[1]
    paper = quoted(section.split("## 4.", 1)[0])
    ours = table7_with_placeholders()
    # Table 7 prints no placeholder for BS's sentence: ours follows 以下有一个句子 as in eval.py
    ours["bs"] = ours["bs"].replace("：[Default Sentence]", "")
    assert {k: _as_converted(v) for k, v in ours.items()} == {k: _as_converted(v) for k, v in paper.items()}


def test_the_released_set_is_not_table7_where_protocols_says():
    released = PROMPT_SETS["released"]
    judge = released.judge("分析。", "解释。", BA_CRITERIA[0])[0].content
    assert not judge.startswith("你的角色") and judge.index("评分标准") > judge.index("按照参考答案")
    bs = released.scoring(BEI_)[0].content
    assert "(允许你进行深度揣测)" in bs and "但不能分段。" in bs
    table7 = PROMPT_SETS["table7"].scoring(BEI_)[0].content
    assert "(允许你进行深度揣测)" not in table7 and "但不能分段" not in table7


def test_another_judge_role_replaces_table7s_inline_role_on_a_line_of_its_own():
    role = "你是一位公正的评审。"
    table7 = with_judge_role(PROMPT_SETS["table7"], role).judge("分析。", "解释。", BA_CRITERIA[0])[0].content
    assert table7.startswith(role + "\n这句话是考生的作答：分析。") and "判卷人员" not in table7
    released = with_judge_role(PROMPT_SETS["released"], role).judge("分析。", "解释。", BA_CRITERIA[0])[0].content
    assert released == role + "\n" + PROMPT_SETS["released"].judge("分析。", "解释。", BA_CRITERIA[0])[0].content
