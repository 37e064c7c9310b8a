import threading
import time

import pytest

from worker.fault_hooks import POISON_MARK, SLEEP_MARK

pytestmark = pytest.mark.slow


def slow_text(seconds: int, tag: str) -> str:
    """A sentence the test-hooked worker sleeps on (per batch), so a test can act mid-translation."""
    return f"{tag}{SLEEP_MARK}{seconds}。"


def poison_text(tag: str) -> str:
    return f"{tag}{POISON_MARK}。"


class StatusRecorder:
    """Polls a job in the background and records every status it saw, to prove it never went backwards."""

    ORDER = {"parsing": 0, "queued": 1, "running": 2, "rendering": 3, "succeeded": 4, "failed": 4, "cancelled": 4}

    def __init__(self, stack, job_id: str):
        self.stack, self.job_id, self.seen = stack, job_id, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                status = self.stack.client.job(self.job_id)["status"]
                if not self.seen or self.seen[-1] != status:
                    self.seen.append(status)
            except Exception:  # noqa: BLE001 - outages are part of some tests
                pass
            time.sleep(0.05)

    def stop(self):
        self._stop.set()
        self._thread.join()
        ranks = [self.ORDER[s] for s in self.seen]
        assert ranks == sorted(ranks), f"status went backwards: {self.seen}"
        return self.seen
