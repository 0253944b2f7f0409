"""What TWBias asks the scorer, and how a sentence's replaced sentences make its replace PPL (PROTOCOLS §1.3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from culturebias.application.twbias.plan import RequestIndex, plan_specification
from culturebias.domain.twbias.model import BiasSentence, SentenceSet, TargetGroup
from culturebias.domain.twbias.specification import BiasSpecification

FEMALE = TargetGroup("gender", "T2", ("女人", "女生"))
MALE = TargetGroup("gender", "T1", ("男人", "男生"))


def sentence(i: int, text: str) -> BiasSentence:
    return BiasSentence(str(i), text, 0, (), "gender/f.csv", i + 2)


def plan(texts: list[str], contexts=("",)):
    rows = [sentence(i, t) for i, t in enumerate(texts)]
    sentences = SentenceSet("gender", "T2", "female", "gender/f.csv", tuple(rows), {}, "gender/fa.csv")
    spec = BiasSpecification("female", "gender", FEMALE, MALE, sentences, (("女人", "男人"), ("女生", "男生")))
    index = RequestIndex()
    return plan_specification(spec, rows, list(contexts), index), index


def ppl_of(index: RequestIndex, values: dict[str, float]) -> np.ndarray:
    return np.array([values[r.continuation] for r in index.requests])


VALUES = {
    "女人和女生": 4.0,
    "男人和女生": 6.0,  # two replaced sentences for the first row
    "女人和男生": 2.0,
    "女人愛錢": 3.0,
    "男人愛錢": 5.0,
}


def test_mean_is_the_default_and_min_takes_the_lowest_replaced_sentence():
    spec_plan, index = plan(["女人和女生", "女人愛錢"])
    ppl = ppl_of(index, VALUES)
    origin, mean = spec_plan.ppl_matrices(ppl)
    assert origin[:, 0].tolist() == [4.0, 3.0]
    assert mean[:, 0].tolist() == [4.0, 5.0]
    _, lowest = spec_plan.ppl_matrices(ppl, "min")
    assert lowest[:, 0].tolist() == [2.0, 5.0]  # a single replaced sentence is its own min and mean
    with pytest.raises(ValueError):
        spec_plan.ppl_matrices(ppl, "max")  # type: ignore[arg-type]


def test_an_undefined_replaced_ppl_leaves_the_row_undefined_either_way():
    spec_plan, index = plan(["女人和女生"])
    ppl = ppl_of(index, {**VALUES, "女人和男生": math.nan})
    for aggregate in ("mean", "min"):
        assert math.isnan(spec_plan.ppl_matrices(ppl, aggregate)[1][0, 0])  # type: ignore[arg-type]


def test_min_is_taken_per_prompt_type():
    spec_plan, index = plan(["女人和女生"], contexts=("", "提示"))
    by_request = {("", "男人和女生"): 6.0, ("", "女人和男生"): 2.0, ("提示", "男人和女生"): 1.0, ("提示", "女人和男生"): 7.0}
    ppl = np.array([by_request.get((r.context, r.continuation), 4.0) for r in index.requests])
    _, lowest = spec_plan.ppl_matrices(ppl, "min")
    assert lowest.tolist() == [[2.0, 1.0]]
