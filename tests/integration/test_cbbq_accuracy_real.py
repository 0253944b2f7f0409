"""CBBQ accuracy on the authors' data: every ambiguous item counts in acc_amb (issue 17 point 4, PROTOCOLS §2).

The four released categories hold 4,856 ambiguous items, 22 of them without a
derivable biased answer. A model answering "unknown" to 1,483 resolved and 5
unresolved ambiguous items reads acc_amb 1,488 / 4,856 = 0.30643; leaving the 22
out, as the code once did, read 1,483 / 4,834 = 0.30679.
"""

from __future__ import annotations

import pytest

from culturebias.adapters.cbbq.files import CBBQFiles
from culturebias.testing.scripted import ScriptedGenerator
from culturebias.domain.bbq.answer_order import shown_order
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.testing.bbq_steps import biased
from culturebias.testing.context import run_with_fakes

pytestmark = pytest.mark.shared_data


def test_acc_amb_pools_every_ambiguous_item_and_s_amb_leaves_the_underivable_out(cbbq_data, tmp_path):
    dataset = CBBQFiles(str(cbbq_data)).load()
    ambiguous = [i for i in dataset.items if i.ambiguous]
    resolved = [i for i in ambiguous if i.biased_index is not None]
    unresolved = [i for i in ambiguous if i.biased_index is None]
    assert (len(ambiguous), len(unresolved)) == (4856, 22)
    says_unknown = {i.sample_id for i in resolved[:1483] + unresolved[:5]}
    by_id = {i.sample_id: i for i in dataset.items}

    def reply(request, _rendered: str) -> str:
        key = AnswerKey.decode(request.key)
        item = by_id[key.sample_id]
        choice = item.unknown_index if item.sample_id in says_unknown else biased(item)
        return "ABC"[shown_order(3, key.permutation).index(choice)]

    result = run_with_fakes(
        "cbbq",
        options={"mode": "generate", "overall": "pooled"},  # the counts below are pooled over categories
        dataset=dataset,
        out_dir=tmp_path,
        report=False,
        generator=ScriptedGenerator(reply),
    )
    overall = result.summary.metrics.overall
    assert result.summary.counts.ambiguous_items == 4856
    assert overall.counts.n_amb + overall.counts.n_amb_unresolved == 4856
    assert overall.acc_amb == pytest.approx(1488 / 4856)
    assert round(overall.acc_amb, 5) == 0.30643
    assert round(1483 / 4834, 5) == 0.30679  # what dropping the 22 read
    assert overall.s_amb == pytest.approx((4834 - 1483) / 4834)  # S_amb: the 22 stay out
