"""RELIABILITY 70: SIGTERM to a worker mid-job (pod deletion, scale-in, a rolling update) drains it: the round
stops at the next batch boundary, parks its unfinished jobs with their translations so far, acknowledges and
exits; another worker finishes the job without counting a lost delivery or translating anything twice."""

import signal
import time

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from shared.routing.routes import route_for
from tests.reliability.conftest import StatusRecorder, slow_text

pytestmark = pytest.mark.slow

BATCH_SECONDS = 2  # each sentence is its own batch (max_batch_sentences=1) and sleeps this long
SENTENCES = 20  # a 40 s job
GRACE_SECONDS = 20  # the terminationGracePeriodSeconds this test allows (the job alone is longer)


def holder(s, job_id):
    """The WorkerProcess whose pool process holds the job now."""
    worker_id = s.r.hget(f"transq:job:{job_id}", "worker") or ""
    for worker in s.workers:
        if any(f":{pid}:" in worker_id for pid in worker.child_pids()):
            return worker
    return None


def route_gauges(s) -> dict[str, float]:
    """The stack's route's gauges on /metrics, as KEDA's metrics-api trigger reads them (by route label)."""
    route = route_for(s.settings).key
    text = requests.get(s.api.url + "/metrics", timeout=5).text
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name.startswith("transq_route_") and sample.labels.get("route") == route
    }


def test_sigterm_mid_job_parks_it_and_another_worker_finishes_it(make_stack):
    s = make_stack(test_hooks=True, max_batch_sentences=1, worker=False)
    s.add_worker("w1")
    s.add_worker("w2")
    texts = [slow_text(BATCH_SECONDS, f"排水{i:02d}") for i in range(SENTENCES)]
    job = s.client.submit(texts)
    recorder = StatusRecorder(s, job["id"])
    deadline = time.monotonic() + 60
    while s.client.job(job["id"])["progress"]["sentences_done"] < 2:
        assert time.monotonic() < deadline, "the job did not start"
        time.sleep(0.1)
    first = holder(s, job["id"])
    assert first is not None
    (other,) = [w for w in s.workers if w is not first]
    translated = s.stat("sentences_translated")
    # what an autoscaler sees meanwhile: one busy worker of two (so it keeps at least one), one running job
    deadline = time.monotonic() + 10
    while route_gauges(s).get("transq_route_workers_busy") != 1:
        assert time.monotonic() < deadline, route_gauges(s)
        time.sleep(0.2)
    gauges = route_gauges(s)
    assert gauges["transq_route_workers_ready"] == 2 and gauges["transq_route_jobs_running"] == 1, gauges

    signalled = time.monotonic()
    first.process.send_signal(signal.SIGTERM)
    first.process.wait(timeout=GRACE_SECONDS)  # raises if it outlives the grace period
    exited = time.monotonic() - signalled
    # it ends after the batch it was running (at most one batch), not after the whole job (~30 s left)
    assert exited < BATCH_SECONDS + 12, (exited, first.log_tail())  # a loaded machine shuts down slowly
    assert first.process.returncode == 0, first.log_tail()
    assert "park" in first.log_tail(200000)

    taken_over = None
    deadline = signalled + GRACE_SECONDS + BATCH_SECONDS
    while taken_over is None and time.monotonic() < deadline:
        if holder(s, job["id"]) is other:
            taken_over = time.monotonic() - signalled
        time.sleep(0.1)
    assert taken_over is not None, ("the other worker did not resume the job", other.log_tail())

    done = s.client.wait(job["id"], timeout=120)
    recorder.stop()
    assert done["status"] == "succeeded", done
    assert len(done["result"]["translations"]) == SENTENCES
    record = s.r.hgetall(f"transq:job:{job['id']}")
    assert record["attempts"] == "1"  # parked, not lost: no delivery counted
    assert holder(s, job["id"]) is other
    # the translations made before the drain were kept: every sentence was translated exactly once
    assert s.stat("sentences_translated") == SENTENCES, (translated, s.stat("sentences_translated"))
    assert s.stat("jobs_failed") == 0
    assert other.process.poll() is None
