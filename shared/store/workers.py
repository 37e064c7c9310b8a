"""The worker registry: heartbeats that say a worker is up with its model loaded, and the routes
(model, settings, language pair) workers have served.

A beat is scored, and liveness judged, by the broker's clock (Redis `TIME`), as leases are: with each
worker's own clock, one running 30 s ahead evicted the others at every beat and one 30 s behind was never
counted."""

from __future__ import annotations

import json
from typing import Any

import redis

from shared.routing.routes import Route
from shared.store.keys import Keys


class WorkerRegistry:
    def __init__(self, client: redis.Redis, keys: Keys, ttl_seconds: float):
        self.client = client
        self.keys = keys
        self.ttl_seconds = ttl_seconds

    def beat(self, worker_id: str, info: dict[str, Any], route: Route, cache_namespace: str) -> None:
        """Say this worker is alive and ready for its route; publish the route and its cache namespace
        for the API (the route stays known when its workers stop, so its jobs are still accepted)."""
        now = self.server_time()
        ttl = max(1, int(self.ttl_seconds))
        pipe = self.client.pipeline(transaction=False)
        pipe.zadd(self.keys.workers, {worker_id: now})
        pipe.zremrangebyscore(self.keys.workers, 0, now - self.ttl_seconds)
        described = {**info, **route.describe(), "namespace": cache_namespace, "seen": now}
        pipe.set(self.keys.worker(worker_id), json.dumps(described), ex=ttl)
        pipe.set(self.keys.cache_namespace(route.key), cache_namespace, ex=ttl)
        pipe.hset(self.keys.routes, route.key, json.dumps(route.describe()))
        pipe.execute()

    def leave(self, worker_id: str) -> None:
        pipe = self.client.pipeline(transaction=False)
        pipe.zrem(self.keys.workers, worker_id)
        pipe.delete(self.keys.worker(worker_id))
        pipe.execute()

    def server_time(self) -> float:
        """The broker's clock, in seconds: what beats are scored and judged by."""
        seconds, microseconds = self.client.time()
        return seconds + microseconds / 1e6

    def seen(self, worker_id: str) -> float | None:
        """Seconds since the worker's last beat, by the broker's clock (None: no beat on record)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.zscore(self.keys.workers, worker_id)
        pipe.time()
        score, (seconds, microseconds) = pipe.execute()
        return None if score is None else seconds + microseconds / 1e6 - float(score)

    def ready_count(self) -> int:
        return int(self.client.zcount(self.keys.workers, self.server_time() - self.ttl_seconds, "+inf"))

    def live_workers(self) -> list[dict[str, Any]]:
        """What each worker with a fresh heartbeat said of itself (its route, model, pid, ...)."""
        ids = self.client.zrangebyscore(self.keys.workers, self.server_time() - self.ttl_seconds, "+inf")
        infos = self.client.mget([self.keys.worker(i) for i in ids]) if ids else []
        return [json.loads(i) for i in infos if i]

    def routes(self) -> list[Route]:
        """Every route a worker has served."""
        found = self.client.hgetall(self.keys.routes)
        return [Route(key, **{k: v for k, v in json.loads(raw).items() if k != "route"}) for key, raw in found.items()]

    def cache_namespace(self, route: str) -> str | None:
        return self.client.get(self.keys.cache_namespace(route))
