import threading
import time

import pytest

from worker.translation.fault_hooks import POISON_MARK, SLEEP_MARK

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
            self._sample()
            time.sleep(0.05)

    def _sample(self):
        try:
            status = self.stack.client.job(self.job_id)["status"]
            if not self.seen or self.seen[-1] != status:
                self.seen.append(status)
        except Exception:  # noqa: BLE001 - outages are part of some tests
            pass

    def stop(self):
        """Stop polling, after one last look (the thread's last poll may predate the caller's)."""
        self._stop.set()
        self._thread.join()
        self._sample()
        ranks = [self.ORDER[s] for s in self.seen]
        assert ranks == sorted(ranks), f"status went backwards: {self.seen}"
        return self.seen


# Takeover and fencing (test_takeover.py, tests/distributed/test_dead_workers.py)


def record(s, job_id):
    return s.r.hgetall(f"transq:job:{job_id}")


def holder(s, job_id, timeout=30):
    """The worker whose pool process claimed the job (its record's `worker`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        worker_id = record(s, job_id).get("worker", "")
        for worker in s.workers:
            if worker_id and worker.holds(worker_id):
                return worker, worker_id
        time.sleep(0.05)
    raise TimeoutError(f"job {job_id} was not claimed: {record(s, job_id)}")


def wait_claimed_by_another(s, job_id, old_worker_id, timeout=15):
    """The job's record once a worker other than `old_worker_id` claimed it (within the stacks' 3 s lease,
    a heartbeat, a message and a claim: ~4 s; 15 s on loaded CI cores)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = record(s, job_id)
        if current.get("worker") not in (None, old_worker_id):
            return current
        time.sleep(0.02)
    raise AssertionError(f"no live worker took job {job_id} over within {timeout}s: {record(s, job_id)}")


def wait_stat(s, name, at_least, timeout=30):
    deadline = time.monotonic() + timeout
    while s.stat(name) < at_least:
        assert time.monotonic() < deadline, f"{name} stayed at {s.stat(name)}"
        time.sleep(0.05)
