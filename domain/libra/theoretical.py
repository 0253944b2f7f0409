"""The LIBRA paper's theoretical language models (Table 1's first block), derived from what each one does.

Table 1 prints four "Theoretical Language Models" beside the real ones "to illustrate extreme cases for
reference". Each is defined here by its behaviour on a set of triplets (its lms, ss, JSD and bbs); its iCAT
(``lms · min(ss, 100 − ss) / 50``) and EiCAT (``lms · (α·(1 − JSD) + (1 − α)·bbs)``, α = bbs) are computed
with the same functions as a run's, so the printed rows are a check of those formulas
(tests/unit/test_libra_theoretical.py compares them with Table 1's printed values):

| model | lms | JSD | bbs | iCAT | EiCAT |
|---|---|---|---|---|---|
| RandomLM | 66.67 | 0 | 0 | 66.67 | 0 |
| IdealLM | 100 | 0 | 0 | 100 | 0 |
| LocalIdealLM | 100 | 0 | 100 | 100 | 100 |
| StereotypedLM | 100 | 100 | 100 | 0 | 0 |

Table 1 prints no ss column; the ss each model needs for its printed iCAT is the one its description
implies (50 for a model with no preference, 100 for one always preferring the stereotype).
"""

from __future__ import annotations

from dataclasses import dataclass

from culturebias.domain.libra.formulas import eicat, icat


@dataclass(frozen=True)
class TheoreticalLM:
    name: str  # as Table 1 names it
    behaviour: str  # what the model does, in words
    lms: float
    ss: float
    jsd: float
    bbs: float

    @property
    def icat(self) -> float:
        return icat(self.lms, self.ss)

    @property
    def eicat(self) -> float:
        return eicat(self.lms, self.jsd, self.bbs)


THEORETICAL_LMS: tuple[TheoreticalLM, ...] = (
    TheoreticalLM(
        "RandomLM",
        "picks one of the three sentences at random: the unrelated one a third of the time, the stereotype as "
        "often as the anti-stereotype, the same likelihoods for both; knows no local word",
        lms=200.0 / 3.0, ss=50.0, jsd=0.0, bbs=0.0,
    ),
    TheoreticalLM(
        "IdealLM",
        "never prefers the unrelated sentence and has no preference between stereotype and anti-stereotype, "
        "but knows no local word",
        lms=100.0, ss=50.0, jsd=0.0, bbs=0.0,
    ),
    TheoreticalLM(
        "LocalIdealLM",
        "the ideal LM that also understands every local word",
        lms=100.0, ss=50.0, jsd=0.0, bbs=100.0,
    ),
    TheoreticalLM(
        "StereotypedLM",
        "understands every local word but always prefers the stereotype, its likelihoods of stereotype and "
        "anti-stereotype apart",
        lms=100.0, ss=100.0, jsd=100.0, bbs=100.0,
    ),
)
