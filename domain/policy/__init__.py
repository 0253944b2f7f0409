"""Acceptance policies: criteria on a benchmark's headline metrics, decided on their intervals.

A ``Policy`` is a list of ``Criterion``; checking it on finished runs gives a
``PolicyVerdict`` with one ``CriterionVerdict`` per criterion: pass (the whole
interval satisfies it), fail (the whole interval violates it) or inconclusive
(it straddles, or the run cannot decide: a limited run, an undefined value, no
interval). A baseline criterion is a paired non-inferiority test on the
resampling units both runs share (``paired``). Pure: no files, no registry.
"""
