"""The result_store contract suite (culturebias.testing.contracts.result_store) over every registered adapter."""

from culturebias.testing.contracts.result_store import *  # noqa: F401,F403  (the suite's fixtures and tests)
