"""check --sequential draws its own samples: run options that fix one (``--limit``, ``protocol.sample``) are refused."""

from __future__ import annotations

import pytest

from culturebias.application.sequential_check import refuse_fixed_samples
from culturebias.bootstrap.registry import registry
from culturebias.domain.errors import PolicyError
from culturebias.domain.policy.model import Policy

POLICY = Policy.model_validate(
    {"name": "gate", "criteria": [{"name": "amb", "benchmark": "kobbq", "metric": "diff_bias_amb", "between": [-0.2, 0.2]}]}
)


def options(**given):
    return registry().benchmark("kobbq").options_model()(**given)


def test_options_without_a_fixed_sample_pass():
    refuse_fixed_samples(POLICY, lambda benchmark: options())


@pytest.mark.parametrize("given", [{"limit": 10}, {"sample": 50}])
def test_a_limit_or_a_sample_is_refused_naming_the_benchmark(given):
    with pytest.raises(PolicyError, match="--sequential draws its own samples of kobbq"):
        refuse_fixed_samples(POLICY, lambda benchmark: options(**given))
