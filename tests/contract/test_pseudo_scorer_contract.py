"""The pseudo_scorer contract suite (culturebias.testing.contracts.pseudo_scorer) over every registered adapter."""

from culturebias.testing.contracts.pseudo_scorer import *  # noqa: F401,F403  (the suite's fixtures and tests)
