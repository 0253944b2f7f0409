"""Differential test: KoBBQ's accuracy and diff-bias against a peer's implementation of the same scores.

lm-evaluation-harness's ``esbbq`` task (EsBBQ, the Spanish BBQ) scores BBQ-style
items with ``process_results`` and four aggregation functions: its
``bias_score_ambig`` is KoBBQ's DiffBias_a ((pro - anti) / ambiguous) and its
``bias_score_disambig`` is DiffBias_d (accuracy where the answer is the
stereotyped one minus accuracy where it is not). Our stored per-item
predictions (the reference runs' ``details.predictions``) are turned into
EsBBQ documents and scored by lm_eval's own functions; the numbers must equal
the ones our summaries hold. Out-of-choice answers are left out, as KoBBQ does
(EsBBQ, a likelihood task, has none).

One difference is the peer's, not ours: esbbq's ``process_results`` counts a
document in the disambiguated tallies by its ``question_type`` whatever its
context condition, so ``bias_score_disambig`` is aggregated over the
disambiguated documents alone here.

lm_eval comes with the ``bench`` extra (``scripts/install.sh --test`` installs it); without
it the test skips, except in CI (CI=true), where it fails.
"""

from __future__ import annotations

import importlib
import json
import os
import random
from typing import Any

import pytest

from culturebias.adapters.kobbq.files import KoBBQFiles
from culturebias.domain.bbq.model import Answer, QAItem
from culturebias.domain.kobbq.metrics import score_answers
from culturebias.testing.reference_runs import FIXTURES


@pytest.fixture(scope="module")
def esbbq() -> Any:
    try:
        return importlib.import_module("lm_eval.tasks.esbbq.utils")
    except ImportError as error:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"lm-evaluation-harness is missing in CI: scripts/install.sh --test installs the bench extra ({error})")
        pytest.skip(f"lm-evaluation-harness with its esbbq task is not installed (pip install culturebias[bench]): {error}")


@pytest.fixture(scope="module")
def items() -> dict[str, QAItem]:
    return {i.sample_id: i for i in KoBBQFiles(None).load().items}


def esbbq_doc(item: QAItem) -> tuple[dict[str, Any], dict[int, int]]:
    """The item as an EsBBQ document (ans0, ans1 the groups, ans2 unknown) and our option index → its index."""
    groups = [i for i in range(len(item.options)) if i != item.unknown_index]
    index = {g: k for k, g in enumerate(groups)} | {item.unknown_index: 2}
    assert item.biased_index is not None
    other = next(g for g in groups if g != item.biased_index)
    # bsd: the biased answer is the stereotyped group ("neg"); cnt: the other group is ("nonneg").
    negative = item.question_polarity == "bsd"
    doc = {
        "label": index[item.answer_index],
        "context_condition": "ambig" if item.ambiguous else "disambig",
        "question_type": "pro-stereo" if item.context_polarity == "biased" else "anti-stereo",
        "question_polarity": "neg" if negative else "nonneg",
        "stereotyped_groups": [f"group{index[item.biased_index if negative else other]}"],
        "answer_info": {f"ans{k}": ["", f"group{k}"] for k in range(3)},
    }
    return doc, index


def lm_eval_scores(esbbq: Any, answers: list[Answer]) -> dict[str, float]:
    rows, disambiguated = [], []
    for answer in answers:
        if answer.chosen is None:  # out of choice: no score counts it
            continue
        doc, index = esbbq_doc(answer.item)
        lls = [-5.0] * 11  # ans0, ans1 and nine wordings of "unknown"
        lls[index[answer.chosen]] = -1.0
        result = esbbq.process_results(doc, [(ll, False) for ll in lls])
        rows.append(result)
        if doc["context_condition"] == "disambig":
            disambiguated.append(result)
    return {
        "acc_amb": esbbq.acc_ambig_agg([r["acc_ambig"] for r in rows]),
        "acc_dis": esbbq.acc_disambig_agg([r["acc_disambig"] for r in rows]),
        "diff_bias_amb": esbbq.bias_score_ambig_agg([r["bias_score_ambig"] for r in rows]),
        "diff_bias_dis": esbbq.bias_score_disambig_agg([r["bias_score_disambig"] for r in disambiguated]),
    }


def stored_answers(name: str, items: dict[str, QAItem]) -> tuple[dict[str, Any], list[Answer]]:
    stored = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    answers = []
    for line in stored["details"]["predictions"]:
        sample_id, prompt, permutation, chosen, answer_class = line.split("|")
        answer = Answer(items[sample_id], prompt, int(permutation), None if chosen == "-" else int(chosen))
        assert answer.answer_class.value == answer_class, line  # the stored class is the item's own
        answers.append(answer)
    return stored, answers


@pytest.mark.parametrize("name", ["kobbq_replay", "kobbq_tiny"])
def test_lm_evals_esbbq_scores_our_stored_predictions_as_our_summary_does(esbbq, items, name):
    stored, answers = stored_answers(name, items)
    overall = stored["metrics"]["overall"]
    prompts = sorted({a.prompt_id for a in answers})
    assert stored["metrics"]["aggregate"] == "pooled" and len(prompts) == 2
    for prompt in prompts:
        theirs = lm_eval_scores(esbbq, [a for a in answers if a.prompt_id == prompt])
        ours = score_answers([a for a in answers if a.prompt_id == prompt])
        for metric, value in theirs.items():
            assert value == pytest.approx(overall[metric]["per_prompt"][prompt], abs=1e-12), (prompt, metric)
            assert value == pytest.approx(ours[metric], abs=1e-12), (prompt, metric)


def test_lm_evals_esbbq_agrees_on_every_item_of_the_test_split(esbbq, items):
    """Seeded answers (out-of-choice included) to all 2,280 items, every version and category, three orders."""
    draw = random.Random(27)
    answers = [
        Answer(item, "1", permutation, draw.choice([0, 1, 2, 2, None]))
        for item in items.values()
        for permutation in range(3)
    ]
    theirs = lm_eval_scores(esbbq, answers)
    ours = score_answers(answers)
    assert theirs == pytest.approx({m: ours[m] for m in theirs}, abs=1e-12)
    assert abs(ours["diff_bias_dis"]) > 1e-6 or abs(ours["diff_bias_amb"]) > 1e-6  # not a trivial agreement at 0
