"""Retry-After parsing and the backoff schedule."""

from __future__ import annotations

import random
from datetime import datetime, timezone

from culturebias.adapters.openai.client import public_base
from culturebias.adapters.openai.retry_policy import Backoff, retry_after_seconds


def test_retry_after_reads_seconds_and_http_dates():
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("0.5") == 0.5
    assert retry_after_seconds("Wed, 01 Jan 2025 12:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds("Wed, 01 Jan 2025 11:00:00 GMT", now=now) == 0.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


def test_retry_after_wins_over_backoff_but_is_capped():
    backoff = Backoff(base_s=1.0, cap_s=8.0, retry_after_cap_s=60.0, rng=random.Random(1))
    assert backoff.delay(0, 3.0) == 3.0
    assert backoff.delay(5, 3600.0) == 60.0


def test_backoff_doubles_up_to_the_cap_with_jitter_in_the_upper_half():
    backoff = Backoff(base_s=1.0, cap_s=8.0, rng=random.Random(2))
    for attempt, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (6, 8.0)]:
        delays = [backoff.delay(attempt, None) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert max(delays) - min(delays) > ceiling / 10  # jittered, not constant


def test_public_base_drops_credentials_from_the_url():
    assert public_base("https://user:secret@api.example.com:8443/v1/") == "https://api.example.com:8443/v1"
