"""The sampling contract suite (culturebias.testing.contracts.sampling) over every registered adapter."""

from culturebias.testing.contracts.sampling import *  # noqa: F401,F403  (the suite's fixtures and tests)
