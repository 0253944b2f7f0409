"""The port contract suites: what every model backend and result store must do, as pytest tests.

Each module is a suite. This project runs them over every registered backend and store
(``tests/contract/``); a plugin runs them over its own adapter by importing the suite into
one of its test modules and giving the fixture the suite parametrizes (docs/plugins.md, "Testing a plugin")::

    from culturebias.testing.contracts.scorer import *  # noqa: F403  (the suite's tests)

    @pytest.fixture
    def make():
        return lambda batch_size=4: MyScorer(batch_size=batch_size)
"""
