"""Container healthcheck: healthy only once this container's worker has its model loaded.

python -m worker.translation.liveness.healthcheck     (exit 0: heartbeat fresh; 1: not ready)
"""

from __future__ import annotations

import sys

import redis

from shared.settings import Settings
from shared.store.keys import Keys
from shared.store.redis_client import broker_redis
from shared.store.workers import WorkerRegistry
from worker.translation.liveness.worker_id import read_id_file


def main() -> int:
    settings = Settings.from_env()
    worker_id = read_id_file(settings)
    if worker_id is None:
        sys.stderr.write("model not loaded yet\n")
        return 1
    try:
        registry = WorkerRegistry(broker_redis(settings), Keys(settings.key_prefix), settings.worker_silence_seconds)
        silent = registry.seen(worker_id)  # by the broker's clock, as beats are scored
    except redis.RedisError as exc:
        sys.stderr.write(f"broker unavailable: {exc}\n")
        return 1
    if silent is None or silent > settings.worker_silence_seconds:
        sys.stderr.write("no fresh heartbeat\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
