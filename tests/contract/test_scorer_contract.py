"""The scorer contract suite (culturebias.testing.contracts.scorer) over every registered adapter."""

from culturebias.testing.contracts.scorer import *  # noqa: F401,F403  (the suite's fixtures and tests)
