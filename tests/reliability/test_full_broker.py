"""Hardening 6: the broker Redis at maxmemory while a worker runs or starts. The worker backs off and
keeps running; the outage never counts as a lost delivery; every accepted job finishes once it clears."""

import dataclasses
import os
import signal
import subprocess
import sys
import time

import pytest
import redis

from tests.reliability.conftest import StatusRecorder, slow_text

pytestmark = pytest.mark.slow


def fill_to_maxmemory(r) -> None:
    """Fill the broker with 2 MiB of data and set maxmemory below what it then uses, so every write
    that needs memory is refused (as at a real maxmemory, where the last few bytes decide)."""
    r.config_set("maxmemory-policy", "noeviction")
    for i in range(512):
        r.set(f"filler:{i}", "x" * 4096)
    r.config_set("maxmemory", int(r.info("memory")["used_memory"]) - 1024 * 1024)
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        r.set("filler:probe", "x")


def free_memory(r) -> None:
    r.config_set("maxmemory", 0)
    for key in r.scan_iter("filler:*", count=1000):
        r.delete(key)


def test_worker_rides_out_a_full_broker_mid_job_and_nothing_counts_as_lost(make_stack):
    s = make_stack(test_hooks=True)
    running = s.client.submit([slow_text(2, "满的时候在跑")])
    waiting = [s.client.submit([f"满的时候在排队{i}。"]) for i in range(3)]
    recorder = StatusRecorder(s, running["id"])
    s.wait_status(running["id"], ("running",), timeout=30)
    fill_to_maxmemory(s.r)
    time.sleep(6)  # the running job ends inside the outage; the queued messages are delivered into it
    worker = s.workers[0]
    assert worker.process.poll() is None, worker.log_tail()
    assert s.r.hget(f"transq:job:{running['id']}", "status") == "running"
    free_memory(s.r)
    for job in [running, *waiting]:
        done = s.client.wait(job["id"], timeout=60)
        assert done["status"] == "succeeded", (done, worker.log_tail())
        assert s.r.hget(f"transq:job:{job['id']}", "attempts") == "1", job["id"]
    recorder.stop()
    assert worker.process.poll() is None
    assert "Unrecoverable error" not in worker.log_tail(200000)
    assert s.client.wait(s.client.submit(["满了以后的工作。"])["id"], timeout=60)["status"] == "succeeded"


def test_worker_started_against_a_full_broker_waits_and_then_serves(make_stack):
    s = make_stack(worker=False)
    queued = s.client.submit(["启动时已满。"])
    fill_to_maxmemory(s.r)
    worker = s.add_worker(wait_ready=False)
    time.sleep(8)  # long enough to load the model and try to heartbeat and consume
    assert worker.process.poll() is None, worker.log_tail()
    free_memory(s.r)
    worker.wait_ready(timeout=60)
    assert s.client.wait(queued["id"], timeout=60)["status"] == "succeeded", worker.log_tail()
    assert s.r.hget(f"transq:job:{queued['id']}", "attempts") == "1"
    assert s.client.wait(s.client.submit(["满了以后启动的工作。"])["id"], timeout=60)["status"] == "succeeded"


def test_a_worker_whose_task_outlived_a_full_broker_consumes_again(make_stack):
    """The broker stays full longer than TRANSQ_TASK_TIME_LIMIT: the pool process waiting on it is killed by
    the hard time limit and its message cannot be acknowledged or given back while the broker is full. Once
    memory frees, the worker consumes again by itself and every job reaches a final status."""
    s = make_stack(test_hooks=True, task_soft_time_limit=5, task_time_limit=8)
    running = s.client.submit([slow_text(2, "超过时限的满")])
    waiting = [s.client.submit([f"超过时限的排队{i}。"]) for i in range(2)]
    s.wait_status(running["id"], ("running",), timeout=30)
    fill_to_maxmemory(s.r)
    worker = s.workers[0]
    deadline = time.monotonic() + 30
    while "TimeLimitExceeded" not in worker.log_tail(200000):  # the pool process was killed in the outage
        assert time.monotonic() < deadline, worker.log_tail()
        time.sleep(0.2)
    time.sleep(3)
    free_memory(s.r)
    for job in [running, *waiting]:
        done = s.client.wait(job["id"], timeout=90)
        assert done["status"] in ("succeeded", "failed"), (done, worker.log_tail())
    after = s.client.wait(s.client.submit(["满了又超时以后的工作。"])["id"], timeout=90)
    assert after["status"] == "succeeded", (after, worker.log_tail(6000))
    assert worker.process.poll() is None


def healthcheck(s, worker_id: str, tmp_path) -> int:
    """The image's health check (`python -m worker.translation.liveness.healthcheck`) for this worker."""
    id_file = tmp_path / f"id-{worker_id.rsplit(':', 1)[-1]}"
    id_file.write_text(worker_id)
    env = {**os.environ, **dataclasses.replace(s.settings, worker_id_file=str(id_file)).as_env()}
    return subprocess.run(
        [sys.executable, "-m", "worker.translation.liveness.healthcheck"], env=env, capture_output=True
    ).returncode


def test_a_worker_whose_consumer_no_longer_consumes_fails_its_healthcheck_and_exits(make_stack, tmp_path):
    """Whatever else leaves a consumer stuck after an outage: its pool process sees messages wait while it sits
    idle with the broker up, leaves the registry (the health check fails) and stops the worker, so that its
    supervisor starts a new one. Here the consumer is stopped outright (SIGSTOP to the main process)."""
    s = make_stack()
    worker = s.workers[0]
    assert s.client.wait(s.client.submit(["停下以前。"])["id"], timeout=60)["status"] == "succeeded"
    (child,) = worker.child_pids()
    (worker_id,) = [w for w in s.r.zrange("transq:workers", 0, -1) if f":{child}:" in w]
    assert healthcheck(s, worker_id, tmp_path) == 0
    os.kill(worker.process.pid, signal.SIGSTOP)
    try:
        job = s.client.submit(["停下的消费者。"])
        deadline = time.monotonic() + 4 * s.settings.lease_seconds + 30
        while worker.is_ready():
            assert time.monotonic() < deadline, worker.log_tail()
            time.sleep(0.2)
        assert healthcheck(s, worker_id, tmp_path) == 1
    finally:
        os.kill(worker.process.pid, signal.SIGCONT)
    worker.process.wait(timeout=60)  # it stopped itself: the supervisor's turn
    assert "no longer takes them" in worker.log_tail(200000)
    s.add_worker("restarted")
    assert s.client.wait(job["id"], timeout=60)["status"] == "succeeded"
