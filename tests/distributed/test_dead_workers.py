"""RELIABILITY 56-57 across hosts: a worker host killed, or cut off (link down) and healed, mid-job.

Broker, cache, API and two workers each on a host of its own (devstack.hosts), a 3 s lease and Celery's
production visibility timeout (900 s): only the lease hands the job to the live worker. A cut host's packets
are lost (no reset), so the cut-off worker keeps translating and retries its writes until the link heals.
"""

import time

import pytest

from tests.reliability.conftest import StatusRecorder, holder, record, slow_text, wait_claimed_by_another, wait_stat

pytestmark = pytest.mark.slow
LEASE = 3.0


def two_worker_hosts(host_stack, **overrides):
    return host_stack(
        workers=2, password="fencing", test_hooks=True, lease_seconds=LEASE, visibility_timeout=900, **overrides
    )


def test_a_killed_worker_host_s_job_is_finished_by_the_live_host(host_stack):
    s = two_worker_hosts(host_stack, max_batch_sentences=1)
    texts = [slow_text(1, f"主机{i}") for i in range(6)]
    job = s.client.submit(["".join(texts)])
    old, old_id = holder(s, job["id"])
    deadline = time.monotonic() + 60
    while int(record(s, job["id"]).get("sentences_done", 0)) < 2:
        assert time.monotonic() < deadline, record(s, job["id"])
        time.sleep(0.05)
    s.network.kill_processes(s.hosts[old.name])  # the host dies with everything on it
    taken = wait_claimed_by_another(s, job["id"], old_id)
    done = s.client.wait(job["id"], timeout=60)
    assert done["status"] == "succeeded", done
    final = record(s, job["id"])
    assert (final["attempts"], final["fence"], final["worker"]) == ("2", "2", taken["worker"])
    assert s.stat("jobs_succeeded") == 1


@pytest.mark.parametrize("old_finishes", ["first", "second"])
def test_a_cut_off_worker_host_s_late_writes_are_refused_after_the_link_heals(host_stack, old_finishes):
    s = two_worker_hosts(host_stack)
    seconds = 6 if old_finishes == "first" else 2
    job = s.client.submit([slow_text(seconds, f"断开{old_finishes}")])
    recorder = StatusRecorder(s, job["id"])
    old, old_id = holder(s, job["id"])
    host = s.hosts[old.name]
    time.sleep(0.5)  # in its batch
    s.network.cut(host)
    try:
        taken = wait_claimed_by_another(s, job["id"], old_id)
        if old_finishes == "second":
            assert s.client.wait(job["id"], timeout=60)["status"] == "succeeded"
    finally:
        s.network.heal(host)
    wait_stat(s, "fenced_writes", 1, timeout=90)  # its writes, retried through the cut, reach the broker
    if old_finishes == "first":
        assert record(s, job["id"])["status"] == "running"  # refused while the live worker still runs it
    done = s.client.wait(job["id"], timeout=60)
    assert recorder.stop()[-1] == "succeeded" and done["status"] == "succeeded"
    final = record(s, job["id"])
    assert (final["attempts"], final["fence"], final["worker"]) == ("2", "2", taken["worker"])
    assert s.stat("jobs_succeeded") == 1 and s.stat("jobs_failed") == 0
    assert "was taken over by another worker" in old.log_tail(50000)
