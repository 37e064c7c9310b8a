"""The worker registry: heartbeats that say a worker is up with its model loaded, and the routes
(model, settings, language pair) workers have served."""

from __future__ import annotations

import json
import time
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
        now = time.time()
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

    def ready_count(self) -> int:
        return int(self.client.zcount(self.keys.workers, time.time() - self.ttl_seconds, "+inf"))

    def live_workers(self) -> list[dict[str, Any]]:
        """What each worker with a fresh heartbeat said of itself (its route, model, pid, ...)."""
        ids = self.client.zrangebyscore(self.keys.workers, time.time() - self.ttl_seconds, "+inf")
        infos = self.client.mget([self.keys.worker(i) for i in ids]) if ids else []
        return [json.loads(i) for i in infos if i]

    def routes(self) -> list[Route]:
        """Every route a worker has served."""
        found = self.client.hgetall(self.keys.routes)
        return [Route(key, **{k: v for k, v in json.loads(raw).items() if k != "route"}) for key, raw in found.items()]

    def cache_namespace(self, route: str) -> str | None:
        return self.client.get(self.keys.cache_namespace(route))
