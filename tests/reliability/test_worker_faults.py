"""RELIABILITY 1-5, 10, 13: killed, stopped, poisoned and slow workers."""

import os
import signal
import time

import pytest
from kombu import Connection

from shared.celery_factory import TRANSLATE_TASK, make_celery
from tests.reliability.conftest import StatusRecorder, poison_text, slow_text

pytestmark = pytest.mark.slow


def wait_running(stack, job_id, timeout=30):
    return stack.wait_status(job_id, ("running", "succeeded", "failed"), timeout)


def test_01_sigkill_pool_process_mid_translation(make_stack):
    s = make_stack(test_hooks=True)
    worker = s.workers[0]
    job = s.client.submit([slow_text(2, "kill-child")])
    recorder = StatusRecorder(s, job["id"])
    wait_running(s, job["id"])
    time.sleep(0.5)
    (child,) = worker.child_pids()
    os.kill(child, signal.SIGKILL)
    done = s.client.wait(job["id"], timeout=90)
    seen = recorder.stop()
    assert done["status"] == "succeeded", done
    assert len(done["result"]["translations"]) == 1
    assert seen[-1] == "succeeded"
    assert worker.process.poll() is None  # the parent survived and forked a new child
    assert int(s.r.hget(f"transq:job:{job['id']}", "attempts")) == 2


def test_02_sigkill_whole_worker_then_a_new_one_finishes_it(make_stack):
    s = make_stack(test_hooks=True, visibility_timeout=12, task_soft_time_limit=6, task_time_limit=9)
    job = s.client.submit([slow_text(2, "kill-all")])
    recorder = StatusRecorder(s, job["id"])
    wait_running(s, job["id"])
    s.workers[0].kill_all()
    assert s.client.job(job["id"])["status"] == "running"
    s.add_worker(name="replacement")
    done = s.client.wait(job["id"], timeout=120)
    recorder.stop()
    assert done["status"] == "succeeded", done


def test_03_poison_job_fails_after_max_deliveries_and_others_flow(make_stack):
    s = make_stack(test_hooks=True, max_deliveries=2)
    poison = s.client.submit([poison_text("毒")])
    others = [s.client.submit([f"正常的工作{i}。"]) for i in range(3)]
    failed = s.client.wait(poison["id"], timeout=180)
    assert failed["status"] == "failed" and failed["error"]["code"] == "worker_lost", failed
    for other in others:
        assert s.client.wait(other["id"], timeout=120)["status"] == "succeeded"
    after = s.client.wait(s.client.submit(["毒以后的工作。"])["id"], timeout=120)
    assert after["status"] == "succeeded"


def test_04_sigterm_during_a_job_finishes_it_exactly_once(make_stack):
    """A deploy: the old worker drains (its running batch ends, an unfinished job is parked: test_drain.py),
    the new one finishes what is left."""
    s = make_stack(test_hooks=True)
    job = s.client.submit([slow_text(2, "deploy")])
    wait_running(s, job["id"])
    translated = s.stat("sentences_translated")
    s.workers[0].process.send_signal(signal.SIGTERM)  # warm shutdown
    s.workers[0].process.wait(timeout=60)
    s.add_worker("new")
    done = s.client.wait(job["id"], timeout=60)
    assert done["status"] == "succeeded"
    assert s.stat("sentences_translated") == translated + 1
    assert int(s.r.hget(f"transq:job:{job['id']}", "attempts")) == 1


def test_05_time_limit_fails_with_timeout_and_worker_keeps_serving(make_stack):
    s = make_stack(test_hooks=True, task_soft_time_limit=2, task_time_limit=6)
    job = s.client.wait(s.client.submit([slow_text(4, "slow")])["id"], timeout=60)
    assert job["status"] == "failed" and job["error"]["code"] == "timeout", job
    assert s.client.wait(s.client.submit(["超时以后的工作。"])["id"], timeout=60)["status"] == "succeeded"


def test_10_second_delivery_of_a_finished_job_changes_nothing(stack):
    job = stack.client.wait(stack.client.submit(["重复投递的工作。"])["id"])
    record_before = stack.r.hgetall(f"transq:job:{job['id']}")
    translated = stack.stat("sentences_translated")
    producer = make_celery(stack.settings)
    for _ in range(2):
        producer.send_task(TRANSLATE_TASK, args=[job["id"]])
    deadline = time.monotonic() + 10
    while stack.r.llen(stack.queue) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1)
    assert stack.r.hgetall(f"transq:job:{job['id']}") == record_before
    assert stack.stat("sentences_translated") == translated


def test_13_max_memory_per_child_replaces_the_child_after_its_task(make_stack):
    s = make_stack(max_memory_per_child_mb=1)
    worker = s.workers[0]
    (first_child,) = worker.child_pids()
    assert s.client.wait(s.client.submit(["内存上限一。"])["id"], timeout=60)["status"] == "succeeded"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and worker.child_pids() in ([first_child], []):
        time.sleep(0.2)
    assert worker.child_pids() and worker.child_pids() != [first_child]
    assert s.client.wait(s.client.submit(["内存上限二。"])["id"], timeout=90)["status"] == "succeeded"


def test_21_pickled_message_is_refused_and_runs_no_code(stack, tmp_path):
    """RELIABILITY 21: a pickle-serialised message on the queue never runs."""
    marker = tmp_path / "pwned"

    class Exploit:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    with Connection(stack.settings.redis_url) as conn:
        producer = conn.Producer(serializer="pickle")
        producer.publish(
            {"task": TRANSLATE_TASK, "id": "evil", "args": [Exploit()], "kwargs": {}},
            routing_key=stack.queue,
            headers={"task": TRANSLATE_TASK, "id": "evil", "lang": "py", "argsrepr": "", "kwargsrepr": ""},
        )
    deadline = time.monotonic() + 10
    while stack.r.llen(stack.queue) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1)
    assert not marker.exists()
    log = stack.workers[0].log_tail(50000)
    assert "ContentDisallowed" in log or "Refusing to deserialize" in log
    # The worker still serves.
    assert stack.client.wait(stack.client.submit(["拒绝以后的工作。"])["id"])["status"] == "succeeded"
