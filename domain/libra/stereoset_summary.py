"""The typed StereoSet block of LIBRA's summary: the paper's iCAT column (PROTOCOLS §4)."""

from __future__ import annotations

from pydantic import Field

from culturebias.domain.summary import Block, Count, Number


class StereoSetScores(Block):
    """StereoSet's lms, ss and iCAT (0–100; each a mean over target terms, iCAT from the means)."""

    lms: Number = Field(description="StereoSet's language modelling score, per target term then averaged")
    ss: Number = Field(description="StereoSet's stereotype score")
    icat: Number = Field(description="StereoSet's iCAT: lms · min(ss, 100 - ss) / 50 (the paper's iCAT column)")
    items: Count = Field(description="StereoSet items scored")
    targets: Count = Field(description="distinct target terms the means run over")


class StereoSetBlock(Block):
    file: str = Field(description="the StereoSet file's name")
    overall: StereoSetScores = Field(description='both splits together, as StereoSet\'s "overall"')
    by_split: dict[str, StereoSetScores] = Field(description="intrasentence and intersentence (those the file holds)")
    by_bias_type: dict[str, dict[str, StereoSetScores]] = Field(description="split → bias type → scores")
