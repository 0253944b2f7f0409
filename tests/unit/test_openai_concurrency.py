"""The adaptive limit on requests in flight, driven by explicit events (no threads racing, no clock)."""

from __future__ import annotations

import threading

import pytest

from culturebias.adapters.openai.client import ApiClient
from culturebias.adapters.openai.concurrency import Abandoned, AdaptiveLimit, Change


def fill(limit: AdaptiveLimit) -> list:
    """Start requests until the limit refuses one."""
    slots = []
    while (slot := limit.try_acquire()) is not None:
        slots.append(slot)
    return slots


def test_starts_at_the_initial_limit_capped_by_the_maximum_and_never_lets_more_start():
    assert AdaptiveLimit(2, 8).limit == 2
    assert AdaptiveLimit(16, 8).limit == 8
    assert AdaptiveLimit(0, 8).limit == 1
    limit = AdaptiveLimit(3, 8)
    assert len(fill(limit)) == 3 and limit.in_flight == 3


def test_an_overload_halves_the_limit_once_and_never_below_one():
    changes: list[Change] = []
    limit = AdaptiveLimit(8, 8, on_change=changes.append)
    slots = fill(limit)
    limit.release(slots[0], "overload", "timed out")
    assert limit.limit == 4
    # the other seven were sent under the old limit: their timeouts are the same news, not a new halving
    for slot in slots[1:]:
        limit.release(slot, "overload", "timed out")
    assert limit.limit == 4
    # requests started after the decrease that time out lower it again, down to 1 and no further
    for expected in (2, 1, 1):
        limit.release(limit.try_acquire(), "overload", "HTTP 429")
        assert limit.limit == expected
    assert limit.lowest == 1
    assert [(c.old, c.new, c.direction, c.reason) for c in changes] == [
        (8, 4, "lowered", "timed out"),
        (4, 2, "lowered", "HTTP 429"),
        (2, 1, "lowered", "HTTP 429"),
    ]


def test_a_run_of_successes_at_the_limit_raises_it_by_one_up_to_the_maximum():
    limit = AdaptiveLimit(1, 3, min_run=2)
    for expected in (2, 3, 3, 3):
        run = max(limit.limit, 2)
        for _ in range(run):
            slots = fill(limit)  # the whole limit in flight: the server is tested at it
            for slot in slots:
                limit.release(slot, "ok")
        assert limit.limit == expected
    assert limit.highest == 3 and [c.direction for c in limit.changes] == ["raised", "raised"]


def test_successes_that_never_used_the_whole_limit_do_not_raise_it():
    limit = AdaptiveLimit(2, 8, min_run=1)
    for _ in range(20):  # one request at a time: the server never saw two
        limit.release(limit.try_acquire(), "ok")
    assert limit.limit == 2 and limit.changes == []


def test_a_hanging_request_of_the_run_holds_growth_until_its_timeout_lowers_the_limit():
    limit = AdaptiveLimit(2, 8, min_run=2)
    hanging, served = fill(limit)
    limit.release(served, "ok")
    for _ in range(10):  # the other slot keeps serving while the first request hangs
        limit.release(limit.try_acquire(), "ok")
    assert limit.limit == 2
    limit.release(hanging, "overload", "timed out")
    assert limit.limit == 1


def test_another_failure_breaks_the_run_but_does_not_lower_the_limit():
    limit = AdaptiveLimit(2, 8, min_run=2)
    first, second = fill(limit)
    limit.release(first, "ok")
    limit.release(second, "other", "HTTP 500")
    assert limit.limit == 2  # the run broke: one success is not two
    for slot in fill(limit):  # a fresh run of two, at the limit
        limit.release(slot, "ok")
    assert limit.limit == 3


def test_an_overload_after_a_raise_still_lowers_the_limit():
    limit = AdaptiveLimit(1, 8, min_run=1)
    limit.release(limit.try_acquire(), "ok")
    assert limit.limit == 2
    first, second = fill(limit)  # the run at 2
    limit.release(second, "ok")
    late = limit.try_acquire()  # started at 2, after the run's first two
    limit.release(first, "ok")
    assert limit.limit == 3
    limit.release(late, "overload", "HTTP 503")  # sent after the last decrease: news about these limits
    assert limit.limit == 1


def test_without_adaptation_the_limit_stays_where_it_started():
    limit = AdaptiveLimit(8, 8, adaptive=False)
    slots = fill(limit)
    assert len(slots) == 8
    for slot in slots:
        limit.release(slot, "overload", "timed out")
    assert limit.limit == 8 and limit.changes == []


def test_a_full_limit_blocks_acquire_until_a_release_and_a_stop_abandons_the_wait():
    limit = AdaptiveLimit(1, 1)
    held = limit.acquire()
    stop = threading.Event()
    stop.set()
    with pytest.raises(Abandoned):
        limit.acquire(stop)
    got = []
    waiter = threading.Thread(target=lambda: got.append(limit.acquire()))
    waiter.start()
    limit.release(held, "ok")
    waiter.join(timeout=30)
    assert len(got) == 1 and limit.in_flight == 1


def test_the_timeout_grows_with_the_prompt_or_the_chat_messages():
    client = ApiClient("http://127.0.0.1:9/v1", timeout_s=60.0, timeout_s_per_1k_chars=20.0)
    try:
        assert client.timeout_for({"prompt": ""}) == 60.0
        assert client.timeout_for({"prompt": "x" * 500}) == 70.0
        assert client.timeout_for({"prompt": "台" * 2000}) == 100.0  # characters, not bytes
        chat = {"messages": [{"role": "system", "content": "a" * 250}, {"role": "user", "content": "b" * 750}]}
        assert client.timeout_for(chat) == 80.0
    finally:
        client.close()


def test_the_client_starts_at_the_initial_concurrency_capped_by_the_maximum():
    for initial, maximum, expected in ((2, 8, 2), (16, 8, 8), (None, 4, 4)):
        client = ApiClient("http://127.0.0.1:9/v1", max_concurrency=maximum, initial_concurrency=initial)
        assert client.concurrency.limit == expected and client.max_concurrency == maximum
        client.close()
