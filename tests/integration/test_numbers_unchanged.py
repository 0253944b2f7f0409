"""Numbers unchanged: each reference run equals its stored summary to its tolerance (issue 22 point 7, issue 34 point 6):
1e-12 for replay runs, the float32 model tolerance for runs a tiny model computed.

The runs and the comparison are ``culturebias.testing.reference_runs``; the stored
files are written by ``python perf/numbers_unchanged.py record`` (only when a
change of numbers is intended, and said so in the commit).
"""

from __future__ import annotations

import pytest

from culturebias.testing import reference_runs as ref


@pytest.mark.parametrize(
    "name",
    [pytest.param(name, marks=[pytest.mark.shared_data] if run.shared else []) for name, run in ref.RUNS.items()],
)
def test_reference_run_equals_its_stored_numbers(name):
    run = ref.RUNS[name]
    reason = ref.skip_reason(run)
    if reason:
        pytest.skip(reason)
    found = list(ref.differences(ref.read_stored(name), run.produce(), tolerance=run.tolerance))
    assert not found, f"{name} ({run.what}; {run.tolerance}): {len(found)} number(s) changed:\n" + "\n".join(found[:40])


def test_a_difference_above_the_tolerance_is_reported_with_its_path():
    stored = {"metrics": {"overall": {"acc": 0.5, "n": 3, "name": "x"}}, "details": [1.0, None]}
    assert list(ref.differences(stored, stored)) == []
    nudged = {"metrics": {"overall": {"acc": 0.5 + 1e-9, "n": 3, "name": "x"}}, "details": [1.0 + 1e-13, None]}
    assert list(ref.differences(stored, nudged)) == ["$.metrics.overall.acc: 0.5 != 0.500000001 (difference 1e-09)"]
    changed = {"metrics": {"overall": {"acc": 0.5, "n": 3.0, "name": "y", "new": 1}}, "details": [1.0]}
    assert list(ref.differences(stored, changed)) == [  # keys in sorted order
        "$.details: 2 elements expected, 1 found",
        "$.metrics.overall.n: 3 != 3.0",
        "$.metrics.overall.name: 'x' != 'y'",
        "$.metrics.overall.new: unexpected 1",
    ]
