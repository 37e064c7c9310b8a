"""Whether this worker process runs a round, since when it has been idle, and how many jobs its round holds:
read by its heartbeat (the API's busy gauges), the forgotten-job sweep and the consumer watch."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator


class Activity:
    def __init__(self) -> None:
        self.rounds_running = 0
        self.idle_since = time.monotonic()
        self.running_jobs = 0  # jobs of the running round (worker.translation.round.claims.LeaseKeeper)

    @property
    def busy(self) -> bool:
        return self.rounds_running > 0

    def idle_for(self) -> float:
        """Seconds since the last round ended (0 while one runs)."""
        return 0.0 if self.busy else time.monotonic() - self.idle_since

    @contextmanager
    def round(self) -> Iterator[None]:
        self.rounds_running += 1
        try:
            yield
        finally:
            self.rounds_running -= 1
            self.idle_since = time.monotonic()
