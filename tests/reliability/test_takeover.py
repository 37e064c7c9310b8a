"""RELIABILITY 56-57: a worker killed or cut off mid-job, whatever the visibility timeout; fencing.

Two real Celery workers on one real Redis, a 3 s lease and Celery's production visibility timeout (900 s):
the dead worker's message stays unacknowledged for the whole test, so only the lease can hand the job over.
A partition is a SIGSTOP of the whole worker (parent and pool process; its Redis connections stay open) and
healing it a SIGCONT: the worker carries on where it stopped, still believing it holds the job.
"""

import io
import logging
import time

import pytest
import requests

from tests.reliability.conftest import StatusRecorder, holder, record, slow_text, wait_claimed_by_another, wait_stat

pytestmark = pytest.mark.slow
log = logging.getLogger(__name__)

LEASE = 3.0


def two_workers(make_stack, **overrides):
    s = make_stack(test_hooks=True, lease_seconds=LEASE, visibility_timeout=900, **overrides)
    s.add_worker(name="w2")
    return s


def test_56_a_killed_worker_s_job_is_finished_by_a_live_one_long_before_the_visibility_timeout(make_stack):
    s = two_workers(make_stack, max_batch_sentences=1)  # one sentence per batch: progress after each
    texts = [slow_text(1, f"第{i}句") for i in range(8)]
    job = s.client.submit(["".join(texts)])
    recorder = StatusRecorder(s, job["id"])
    old, old_id = holder(s, job["id"])
    deadline = time.monotonic() + 60
    while int(record(s, job["id"]).get("sentences_done", 0)) < 3:
        assert time.monotonic() < deadline, record(s, job["id"])
        time.sleep(0.05)
    done_at_kill = int(record(s, job["id"])["sentences_done"])
    killed = time.monotonic()
    old.kill_all()
    taken = wait_claimed_by_another(s, job["id"], old_id)
    took_over = time.monotonic() - killed
    done = s.client.wait(job["id"], timeout=60)
    finished = time.monotonic() - killed
    log.warning("kill -> claimed by a live worker %.1fs, -> finished %.1fs (lease %.0fs)", took_over, finished, LEASE)
    assert recorder.stop()[-1] == "succeeded"
    assert done["status"] == "succeeded" and len(done["result"]["translations"]) == 1, done
    final = record(s, job["id"])
    # Attempts: the first claim and the takeover (a lost delivery); the killed worker's message, redelivered
    # after the visibility timeout, would find the job final and count nothing.
    assert (final["attempts"], final["fence"]) == ("2", "2")
    assert final["worker"] == taken["worker"] and not old.holds(final["worker"])
    assert int(taken["sentences_done"]) >= done_at_kill  # resumed from the saved progress, nothing lost
    assert s.stat("sentences_translated") <= len(texts) + 1  # at most the killed batch was made again
    assert s.stat("jobs_succeeded") == 1 and s.stat("leases_lapsed") >= 1


@pytest.mark.parametrize("old_finishes", ["first", "second"])
def test_57_a_healed_partition_s_late_result_is_refused_and_the_live_worker_s_stands(make_stack, old_finishes):
    """The cut-off worker resumes and tries to store its result while the live worker still translates the
    job ("first"), or after the live worker finished it ("second"): refused either way, counted once."""
    s = two_workers(make_stack)
    seconds = 6 if old_finishes == "first" else 2  # how long the job's one batch sleeps, on either worker
    job = s.client.submit([slow_text(seconds, f"分区{old_finishes}")])
    recorder = StatusRecorder(s, job["id"])
    old, old_id = holder(s, job["id"])
    time.sleep(0.5)  # in its batch
    old.pause()
    try:
        taken = wait_claimed_by_another(s, job["id"], old_id)
        if old_finishes == "second":
            assert s.client.wait(job["id"], timeout=60)["status"] == "succeeded"
        result_before = record(s, job["id"]).get("result")
    finally:
        old.resume()
    wait_stat(s, "fenced_writes", 1)  # the old worker finished its batch and tried to store the result
    if old_finishes == "first":
        assert record(s, job["id"])["status"] == "running"  # refused while the live worker still runs it
    done = s.client.wait(job["id"], timeout=60)
    assert recorder.stop()[-1] == "succeeded"
    final = record(s, job["id"])
    assert done["status"] == "succeeded"
    assert (final["attempts"], final["fence"], final["worker"]) == ("2", "2", taken["worker"])
    if old_finishes == "second":
        assert final["result"] == result_before  # the late write changed nothing
    assert s.stat("jobs_succeeded") == 1 and s.stat("jobs_failed") == 0
    assert "was taken over by another worker" in old.log_tail(20000)
    # The healed worker drops the job and keeps serving.
    assert s.client.wait(s.client.submit(["分区以后的工作。"])["id"], timeout=60)["status"] == "succeeded"


def test_a_worker_restarted_after_a_kill_takes_over_its_former_life_s_document_job(make_stack, tmp_path):
    """Issue 38 item 7: the only worker is SIGKILLed (parent and pool process) mid-way through a document job
    and started again with the same TRANSQ_WORKER_ID_FILE, as a container with a volume is. Its new process
    has a new worker id, so the job recorded under the old one is a lapsed lease to it: its sweep wakes the
    job and it finishes, resumed from its saved progress, with Celery's 900 s visibility timeout still
    holding the killed worker's message. (The trial saw the job stay `running` for 240 s; not reproduced
    here, on one host outside a container: this guards what it expects.)"""
    s = make_stack(
        lease_seconds=LEASE,
        visibility_timeout=900,
        task_soft_time_limit=20,
        task_time_limit=25,
        worker_id_file=str(tmp_path / "worker-id"),
        max_batch_sentences=8,
    )
    html = "<html><body>" + "".join(f"<p>第{i}段的句子各不相同{i * 7}。</p>" for i in range(160)) + "</body></html>"
    response = requests.post(
        s.api.url + "/v1/documents", files={"file": ("big.html", io.BytesIO(html.encode()))}, timeout=60
    )
    job_id = response.json()["id"]
    old, old_id = holder(s, job_id, timeout=120)
    deadline = time.monotonic() + 120
    while int(record(s, job_id).get("sentences_done", 0)) < 16:
        assert time.monotonic() < deadline, record(s, job_id)
        time.sleep(0.05)
    done_at_kill = int(record(s, job_id)["sentences_done"])
    old.kill_all()
    new = s.add_worker(name="w1-restarted", wait_ready=True)
    ready = time.monotonic()
    taken = wait_claimed_by_another(s, job_id, old_id, timeout=6 * LEASE)
    log.warning("restarted worker took its former job over %.1fs after it was ready", time.monotonic() - ready)
    assert new.holds(taken["worker"]) and int(taken["attempts"]) == 2
    assert int(taken["sentences_done"]) >= done_at_kill  # resumed, not started over
    assert s.wait_status(job_id, ("succeeded", "failed"), timeout=240)["status"] == "succeeded"
    assert (tmp_path / "worker-id").read_text() == taken["worker"]  # the container's health check reads it
