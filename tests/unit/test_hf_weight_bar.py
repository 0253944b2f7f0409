"""transformers' own "Loading weights" bar stays out of log files (stderr not a terminal) and is restored after."""

from __future__ import annotations

import io
import sys

import pytest

pytest.importorskip("transformers")

from transformers.utils import logging as hf_logging  # noqa: E402

from culturebias.adapters.hf import loading  # noqa: E402


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal, bar_while_loading", [(False, False), (True, True)])
def test_the_weight_bar_is_drawn_on_terminals_only_and_restored(monkeypatch, terminal, bar_while_loading):
    monkeypatch.setattr(sys, "stderr", _Terminal() if terminal else io.StringIO())
    hf_logging.enable_progress_bar()
    seen = []
    with loading._weight_bar_on_terminals_only():
        seen.append(hf_logging.is_progress_bar_enabled())
    assert seen == [bar_while_loading]
    assert hf_logging.is_progress_bar_enabled()


def test_a_host_that_turned_the_bar_off_keeps_it_off(monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Terminal())
    hf_logging.disable_progress_bar()
    try:
        with loading._weight_bar_on_terminals_only():
            assert not hf_logging.is_progress_bar_enabled()
        assert not hf_logging.is_progress_bar_enabled()
    finally:
        hf_logging.enable_progress_bar()
