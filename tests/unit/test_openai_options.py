"""The openai backend's ``model.*`` options as the configuration sees them."""

from __future__ import annotations

import pytest

from culturebias.bootstrap.settings import load_settings
from culturebias.domain.errors import ConfigError


def test_the_cache_mode_is_no_part_of_the_resume_identity():
    base = ["model.backend=openai", "model.api_base=http://127.0.0.1:9/v1", "model.path=m"]
    use = load_settings(None, base).resume_identity()
    refresh = load_settings(None, [*base, "model.cache=refresh"]).resume_identity()
    assert use == refresh and "cache" not in use["model"]


def test_the_cache_mode_is_checked():
    with pytest.raises(ConfigError, match="model.cache"):
        load_settings(None, ["model.backend=openai", "model.cache=sometimes"]).model.backend_options()
