"""The worker registry: heartbeats that say a worker is up with its model loaded."""

from __future__ import annotations

import json
import time
from typing import Any

import redis

from shared.keys import Keys


class WorkerRegistry:
    def __init__(self, client: redis.Redis, keys: Keys, ttl_seconds: float):
        self.client = client
        self.keys = keys
        self.ttl_seconds = ttl_seconds

    def beat(self, worker_id: str, info: dict[str, Any], model: str, cache_namespace: str) -> None:
        """Say this worker is alive and ready; publish its cache namespace for the API."""
        now = time.time()
        ttl = max(1, int(self.ttl_seconds))
        pipe = self.client.pipeline(transaction=False)
        pipe.zadd(self.keys.workers, {worker_id: now})
        pipe.zremrangebyscore(self.keys.workers, 0, now - self.ttl_seconds)
        pipe.set(self.keys.worker(worker_id), json.dumps({**info, "seen": now}), ex=ttl)
        pipe.set(self.keys.cache_namespace(model), cache_namespace, ex=ttl)
        pipe.execute()

    def leave(self, worker_id: str) -> None:
        pipe = self.client.pipeline(transaction=False)
        pipe.zrem(self.keys.workers, worker_id)
        pipe.delete(self.keys.worker(worker_id))
        pipe.execute()

    def ready_count(self) -> int:
        return int(self.client.zcount(self.keys.workers, time.time() - self.ttl_seconds, "+inf"))

    def cache_namespace(self, model: str) -> str | None:
        return self.client.get(self.keys.cache_namespace(model))
