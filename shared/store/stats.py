"""Counters and histograms kept in the broker Redis, so every worker and API process adds to one set.

The API's /metrics exports them in Prometheus format. Failures to count are
logged and ignored: metrics never break a job.

A histogram observation adds to its one bucket (`name:in:bound`) rather than to every cumulative bucket it
falls under: 3 commands instead of up to 16 (bench/per_job_cost.py counts them per job). read() sums the
buckets into the cumulative `name:bound` fields Prometheus wants, adding what older processes wrote there.
"""

from __future__ import annotations

import logging
import time

import redis

from shared.store.keys import Keys

log = logging.getLogger(__name__)

HISTOGRAMS: dict[str, tuple[float, ...]] = {
    "job_latency_seconds": (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600),
    "queue_wait_seconds": (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
    "batch_size": (1, 2, 4, 8, 16, 32, 64, 128),
    "batch_seconds": (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30),
}


class Stats:
    def __init__(self, client: redis.Redis, keys: Keys):
        self.client = client
        self.keys = keys

    def incr(self, name: str, amount: int = 1) -> None:
        if amount:
            self._safe(lambda pipe: pipe.hincrby(self.keys.stats, name, amount))

    def add(self, counters: dict[str, int]) -> None:
        """Add to several counters in one round trip (those of 0 are left alone)."""
        counters = {name: amount for name, amount in counters.items() if amount}

        def write(pipe: redis.client.Pipeline) -> None:
            for name, amount in counters.items():
                pipe.hincrby(self.keys.stats, name, amount)

        if counters:
            self._safe(write)

    def observe(self, name: str, value: float) -> None:
        self._safe(lambda pipe: self._observe(pipe, name, value))

    def observe_batch(self, size: int, seconds: float) -> None:
        def write(pipe: redis.client.Pipeline) -> None:
            self._observe(pipe, "batch_size", size)
            self._observe(pipe, "batch_seconds", seconds)
            pipe.hincrby(self.keys.stats, "batches", 1)

        self._safe(write)

    def job_finished(self, status: str, submitted: float | None) -> None:
        def write(pipe: redis.client.Pipeline) -> None:
            pipe.hincrby(self.keys.stats, f"jobs_{status}", 1)
            if submitted:
                self._observe(pipe, "job_latency_seconds", time.time() - submitted)

        self._safe(write)

    def read(self) -> tuple[dict[str, int], dict[str, float]]:
        """The counters, and the histograms as cumulative buckets (`name:bound`), `name:+Inf` and `name:sum`."""
        counters = {k: int(v) for k, v in (self.client.hgetall(self.keys.stats) or {}).items()}
        stored = {k: float(v) for k, v in (self.client.hgetall(self.keys.histograms) or {}).items()}
        histograms = {k: v for k, v in stored.items() if ":in:" not in k}
        for name, bounds in HISTOGRAMS.items():
            below = 0.0
            for bound in bounds:
                below += stored.get(f"{name}:in:{bound}", 0.0)
                histograms[f"{name}:{bound}"] = stored.get(f"{name}:{bound}", 0.0) + below
        return counters, histograms

    def _observe(self, pipe: redis.client.Pipeline, name: str, value: float) -> None:
        bound = next((b for b in HISTOGRAMS[name] if value <= b), None)
        if bound is not None:  # (above the last bound: counted in +Inf only)
            pipe.hincrby(self.keys.histograms, f"{name}:in:{bound}", 1)
        pipe.hincrby(self.keys.histograms, f"{name}:+Inf", 1)
        pipe.hincrbyfloat(self.keys.histograms, f"{name}:sum", value)

    def _safe(self, write) -> None:  # type: ignore[no-untyped-def]
        try:
            pipe = self.client.pipeline(transaction=False)
            write(pipe)
            pipe.execute()
        except redis.RedisError as exc:
            log.warning("could not record metrics: %s", exc)
