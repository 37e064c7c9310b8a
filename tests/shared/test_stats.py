"""Histograms: one bucket written per observation, read back cumulative (as Prometheus wants them)."""

import redis

from shared.store.keys import Keys
from shared.store.stats import HISTOGRAMS, Stats


def test_an_observation_writes_three_fields_and_reads_back_cumulative(redis_client: redis.Redis) -> None:
    keys = Keys()
    stats = Stats(redis_client, keys)
    for size in (1, 3, 3, 100, 500):  # 500: above every bound, counted in +Inf only
        stats.observe("batch_size", size)
    assert len(redis_client.hkeys(keys.histograms)) == 5  # in:1, in:4, in:128, +Inf, sum
    _, histograms = stats.read()
    cumulative = {bound: histograms[f"batch_size:{bound}"] for bound in HISTOGRAMS["batch_size"]}
    assert cumulative == {1: 1, 2: 1, 4: 3, 8: 3, 16: 3, 32: 3, 64: 3, 128: 4}
    assert histograms["batch_size:+Inf"] == 5 and histograms["batch_size:sum"] == 607
    assert not any(":in:" in name for name in histograms)


def test_cumulative_buckets_older_processes_wrote_still_count(redis_client: redis.Redis) -> None:
    keys = Keys()
    stats = Stats(redis_client, keys)
    # what a process of the previous release wrote for one batch of 2: every bucket from 2 up
    redis_client.hset(keys.histograms, mapping={f"batch_size:{b}": 1 for b in HISTOGRAMS["batch_size"] if b >= 2})
    redis_client.hset(keys.histograms, mapping={"batch_size:+Inf": 1, "batch_size:sum": 2})
    stats.observe("batch_size", 1)
    _, histograms = stats.read()
    assert [histograms[f"batch_size:{b}"] for b in HISTOGRAMS["batch_size"]] == [1, 2, 2, 2, 2, 2, 2, 2]
    assert histograms["batch_size:+Inf"] == 2


def test_counters_of_zero_are_not_written(redis_client: redis.Redis) -> None:
    keys = Keys()
    stats = Stats(redis_client, keys)
    stats.add({"cache_hits": 0, "cache_misses": 2})
    assert redis_client.hgetall(keys.stats) == {"cache_misses": "2"}
