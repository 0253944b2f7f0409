"""The typed StereoSet block of LIBRA's summary: the paper's iCAT column (PROTOCOLS §4)."""

from __future__ import annotations

from culturebias.domain.summary import Block, Count, Number


class StereoSetScores(Block):
    """StereoSet's lms, ss and iCAT (0–100; each a mean over target terms, iCAT from the means)."""

    lms: Number
    ss: Number
    icat: Number
    items: Count
    targets: Count  # distinct target terms the means run over


class StereoSetBlock(Block):
    file: str  # the StereoSet file's name
    overall: StereoSetScores  # both splits together, as StereoSet's "overall"
    by_split: dict[str, StereoSetScores]  # intrasentence, intersentence (those the file holds)
    by_bias_type: dict[str, dict[str, StereoSetScores]]  # split → bias type → scores
