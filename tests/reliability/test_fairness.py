"""Hardening 8: a big job does not hold the worker while small jobs wait; and a waiting job whose
message was lost is woken again. Real Redis, gunicorn and one Celery worker; `python -m bench.fairness`
measures the waits."""

import time

import pytest

from tests.reliability.conftest import StatusRecorder, slow_text

pytestmark = pytest.mark.slow


def test_a_small_job_finishes_while_a_big_one_runs(make_stack):
    # Two sentences per batch, each batch of the big job sleeps a second: 10 batches, about 10 s.
    s = make_stack(test_hooks=True, max_batch_sentences=2)
    big = s.client.submit([slow_text(1, f"大工作{i}") for i in range(20)])
    recorder = StatusRecorder(s, big["id"])
    deadline = time.monotonic() + 30
    while s.client.job(big["id"])["progress"]["sentences_done"] == 0:  # it is under way
        assert time.monotonic() < deadline
        time.sleep(0.1)
    small = s.client.wait(s.client.submit(["小工作。"])["id"], timeout=60)
    assert small["status"] == "succeeded"
    during = s.client.job(big["id"])
    assert during["status"] == "running", "the small job waited for the whole big one"
    assert during["progress"]["sentences_done"] < 20
    done = s.client.wait(big["id"], timeout=90)
    recorder.stop()
    assert done["status"] == "succeeded" and len(done["result"]["translations"]) == 20
    assert s.r.hget(f"transq:job:{big['id']}", "attempts") == "1"  # parking is not a lost delivery
    assert s.stat("sentences_translated") == 21  # nothing translated twice across its slices


def test_a_waiting_job_whose_message_was_lost_is_woken_again(make_stack):
    s = make_stack(worker=False)
    job = s.client.submit(["消息丢了。"])
    assert s.r.delete(s.queue) == 1  # its only message is gone (a consumer died holding it)
    s.add_worker()
    assert s.client.wait(job["id"], timeout=60)["status"] == "succeeded"
