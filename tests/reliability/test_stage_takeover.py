"""A document stage killed mid-parse leaves its job to the next stage within the stage's lease, not the
broker's visibility timeout; a document that kills every stage that takes it fails `worker_lost` after
TRANSQ_MAX_DELIVERIES lost deliveries instead of staying `parsing`.

Real gunicorn, Redis, translation worker and document stage processes (tests/conftest.py Stack). The stage's
test hooks (worker/documents/stage_hooks.py) make a document parse slowly, or kill the whole stage (its
Celery parent and pool process) as a host's or a container's death would."""

import io
import time

import pytest
import requests

from tests.stack import DocumentStageProcess

pytestmark = pytest.mark.slow

LEASE = 2.0  # TRANSQ_DOCUMENT_LEASE_SECONDS: renewed every third of it, swept as often
SLEEP = 6  # seconds the first document's parse sleeps (the stage's test hook)


def upload(s, text: str, name: str) -> str:
    files = {"file": (name, io.BytesIO(text.encode()))}
    response = requests.post(s.api.url + "/v1/documents", files=files, timeout=30)
    assert response.status_code == 202, response.text
    return response.json()["id"]


def restart_stage(s, number: int, wait_ready: bool = True) -> DocumentStageProcess:
    """A new stage process (as compose's restart policy starts one), kept as the stack's (which stops it)."""
    s.documents = DocumentStageProcess(s.settings, s.tmp / f"documents{number}.log", name=f"documents{number}")
    return s.documents.start(wait_ready=wait_ready)


def wait_for(condition, timeout: float, what: str) -> float:
    """Seconds until `condition()` held."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, f"{what} did not happen within {timeout}s"
        time.sleep(0.05)
    return time.monotonic() - started


def test_a_stage_killed_mid_parse_leaves_its_job_to_the_next_stage_within_its_lease(make_stack):
    """The whole stage is SIGKILLed while it parses a document (its test hook sleeps 6 s first) and a new
    stage is started: its sweep finds the lapsed lease and the job is parsed again and succeeds, within
    3 leases of the new stage starting (+ the hook's 6 s and a few), not after the 60 s visibility timeout
    (before: `parsing` for ~70 s, until the broker gave the dead stage's message back)."""
    s = make_stack(
        test_hooks=True,
        document_lease_seconds=LEASE,
        visibility_timeout=60,
        task_soft_time_limit=20,
        task_time_limit=30,
        document_time_limit=30,
    )
    job_id = upload(s, f"# 标题\n\n这份文件解析得很慢TRANSQ-STAGE-SLEEP{SLEEP}。\n", "slow.md")
    wait_for(lambda: "test hook: sleeping" in s.documents.log_tail(100_000), 60, "the first stage's parse")
    time.sleep(1)  # mid-parse
    s.documents.kill_all()
    killed = time.monotonic()
    restart_stage(s, 2)
    started = time.monotonic() - killed
    left = started + wait_for(lambda: s.client.job(job_id)["status"] != "parsing", LEASE * 3 + SLEEP + 10, "a takeover")
    print(f"\nnew stage ready {started:.1f}s after the kill; the job left `parsing` {left:.1f}s after it")
    assert s.wait_status(job_id, ("succeeded", "failed", "cancelled"), timeout=120)["status"] == "succeeded"
    record = s.r.hgetall(f"{s.settings.key_prefix}job:{job_id}")
    assert record["stage_attempts"] == "1"  # the render's, its first (the parse took two)
    assert s.stat("leases_lapsed") >= 1
    assert left < s.settings.visibility_timeout / 2


def test_a_document_that_kills_every_stage_fails_worker_lost_after_max_deliveries(make_stack):
    """A document whose parse kills the whole stage, every time: each new stage takes it over (a lost
    delivery), and the take after TRANSQ_MAX_DELIVERIES (2) of them fails the job `worker_lost`; the last
    stage lives on. Before: the job stayed `parsing` (the dead stage's message came back after 900 s, to kill
    the next stage)."""
    s = make_stack(test_hooks=True, worker=False, max_deliveries=2, document_lease_seconds=LEASE)
    job_id = upload(s, "# 毒\n\n这份文件会杀死文档服务TRANSQ-STAGE-KILL。\n", "poison.md")
    kills, started = 0, time.monotonic()
    while s.client.job(job_id)["status"] == "parsing":
        assert time.monotonic() - started < 90, f"still parsing after {kills} stages were killed"
        if s.documents.process.poll() is not None:  # the hook killed it: start the next, as compose would
            kills += 1
            assert kills <= 4, "the job was taken again and again"
            restart_stage(s, kills + 1, wait_ready=False)
        time.sleep(0.05)
    job = s.wait_status(job_id, ("succeeded", "failed", "cancelled"), timeout=30)
    print(f"\nfailed {time.monotonic() - started:.1f}s after the upload, {kills} stages killed")
    assert job["status"] == "failed" and job["error"]["code"] == "worker_lost", job
    assert "TRANSQ_MAX_DELIVERIES" in job["error"]["message"]
    assert kills == 2
    time.sleep(1)
    assert s.documents.process.poll() is None  # the stage that failed it lives on
    after = upload(s, "# 之后\n\n文档服务还在工作。\n", "after.md")
    assert s.wait_status(after, ("queued", "failed"), timeout=60)["status"] == "queued"  # parsed (no worker)
