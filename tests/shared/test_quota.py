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


def parsing_job(redis_client, name: str) -> str:
    key = KEYS.job(name)
    redis_client.hset(key, "status", "parsing")
    return key


def test_a_document_is_settled_to_what_its_stage_parsed_once(redis_client):
    """Issue 31: a .docx was charged its bytes; the document stage settles its charge to the characters it
    parsed (a .docx is charged nothing at upload, a text document its file's characters), once per job."""
    book = quota(redis_client, quota_chars_per_day=100)
    assert book.charge("key:a", 0, 0, NOON) is None  # a .docx's upload: one job, no characters yet
    job = parsing_job(redis_client, "docx")
    assert book.settle("key:a", job, 60, 10, deposit=0, at=NOON) is None
    assert book.settle("key:a", job, 60, 10, deposit=0, at=NOON) is None  # a retried parse: charged once
    day, _ = book.usage("key:a", NOON)["day"]
    assert (day.characters, day.cached_characters, day.jobs) == (60, 10, 1)
    assert book.charge("key:a", 30, 0, NOON) is None  # an HTML page of 30 characters, 20 of them markup
    assert book.settle("key:a", parsing_job(redis_client, "html"), 10, 0, deposit=30, at=NOON) is None
    day, _ = book.usage("key:a", NOON)["day"]
    assert (day.characters, day.jobs) == (70, 2)
    assert book.totals() == {"key:a": (70, 10)}


def test_a_document_over_the_limit_is_refused_and_its_upload_refunded_once(redis_client):
    book = quota(redis_client, quota_chars_per_day=100)
    assert book.charge("key:a", 50, 0, NOON) is None
    assert book.charge("key:a", 20, 0, NOON) is None  # a text document's upload
    job = parsing_job(redis_client, "over")
    for _ in range(2):  # the same answer again, nothing refunded twice
        refused = book.settle("key:a", job, 60, 0, deposit=20, at=NOON)
        assert refused is not None and (refused.period, refused.limit, refused.used) == ("day", 100, 50)
        day, _ = book.usage("key:a", NOON)["day"]
        assert (day.characters, day.jobs) == (50, 1)
    assert book.charge("key:a", 0, 0, NOON) is None  # a .docx's upload
    refused = book.settle("key:a", parsing_job(redis_client, "docx"), 51, 0, deposit=0, at=NOON)
    assert refused is not None and refused.used == 50 and "51 characters" in refused.message("its 51 characters")
    assert book.usage("key:a", NOON)["day"][0].jobs == 1
    assert book.settle("key:a", KEYS.job("gone"), 60, 0, deposit=0, at=NOON) is None  # nothing to settle
    assert book.usage("key:a", NOON)["day"][0].characters == 50 and not redis_client.exists(KEYS.job("gone"))
