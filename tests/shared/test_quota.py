"""Characters per client per UTC day and month, counted by one Lua call against a real Redis: counted until a
limit, refused over it (nothing counted), refunded, rolled over at the period's end, per-key overrides."""

import threading
from datetime import datetime, timezone

import pytest

from shared.settings import Settings
from shared.store.keys import Keys
from shared.store.quota import CharacterQuota, parse_overrides

KEYS = Keys()
NOON = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def quota(redis_client, **limits) -> CharacterQuota:
    return CharacterQuota(redis_client, KEYS, Settings(**limits))


def test_characters_count_until_the_daily_limit_then_a_request_is_refused_whole(redis_client):
    book = quota(redis_client, quota_chars_per_day=100)
    assert book.charge("key:a", 60, 10, NOON) is None
    refused = book.charge("key:a", 41, 0, NOON)
    assert refused is not None and (refused.period, refused.limit, refused.used) == ("day", 100, 60)
    assert refused.resets_at == datetime(2026, 12, 2, tzinfo=timezone.utc)
    assert book.charge("key:a", 40, 0, NOON) is None  # exactly at the limit
    day, _ = book.usage("key:a", NOON)["day"]
    assert (day.characters, day.cached_characters, day.jobs, day.limit) == (100, 10, 2, 100)
    assert book.charge("key:b", 100, 0, NOON) is None  # another client has its own count


def test_the_monthly_limit_holds_across_days_and_a_new_month_starts_at_zero(redis_client):
    book = quota(redis_client, quota_chars_per_month=150)
    assert book.charge("key:a", 100, 0, NOON) is None
    tomorrow = datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)
    refused = book.charge("key:a", 60, 0, tomorrow)
    assert refused is not None and refused.period == "month"
    assert refused.resets_at == datetime(2027, 1, 1, tzinfo=timezone.utc)
    january = datetime(2027, 1, 1, 0, 0, 1, tzinfo=timezone.utc)
    assert book.charge("key:a", 60, 0, january) is None
    month, last = book.usage("key:a", january)["month"]
    assert (month.characters, last.characters, last.start.month) == (60, 100, 12)


def test_a_refund_takes_a_charge_back(redis_client):
    book = quota(redis_client, quota_chars_per_day=100)
    assert book.charge("key:a", 90, 30, NOON) is None
    book.refund("key:a", 90, 30, NOON)
    day, _ = book.usage("key:a", NOON)["day"]
    assert (day.characters, day.cached_characters, day.jobs) == (0, 0, 0)
    assert book.charge("key:a", 90, 0, NOON) is None
    assert book.totals() == {"key:a": (90, 0)}


def test_a_key_of_its_own_overrides_the_default(redis_client):
    book = quota(redis_client, quota_chars_per_day=10, quota_overrides="key:big=1000/0, key:none=0/0")
    assert book.charge("key:small", 11, 0, NOON) is not None
    assert book.charge("key:big", 999, 0, NOON) is None
    assert book.charge("key:none", 10**9, 0, NOON) is None


def test_concurrent_charges_never_pass_the_limit_together(redis_client):
    book = quota(redis_client, quota_chars_per_day=1000)
    accepted = []

    def submit() -> None:
        for _ in range(20):
            if book.charge("key:a", 7, 0, NOON) is None:
                accepted.append(7)

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(accepted) == 7 * (1000 // 7)
    assert book.usage("key:a", NOON)["day"][0].characters == sum(accepted)


def test_overrides_are_checked_when_settings_are_read():
    assert parse_overrides("key:a=1/2,key:b=0/5") == {
        "key:a": parse_overrides("key:a=1/2")["key:a"],
        "key:b": parse_overrides("key:b=0/5")["key:b"],
    }
    with pytest.raises(ValueError, match="TRANSQ_QUOTA_OVERRIDES"):
        Settings.from_env({"TRANSQ_QUOTA_OVERRIDES": "key:a=10"})
