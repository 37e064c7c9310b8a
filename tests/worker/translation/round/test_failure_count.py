"""`jobs_failed` counts every failed job, whichever way it failed: the store's one path does it (a failing
transition, or a claim that fails a job as lost), in the same atomic call."""

from __future__ import annotations

import subprocess
import sys

from shared.errors import ErrorCode
from tests.worker.translation.worker_jobs import SENTENCES, claim, make_parts, status, submit
from worker.translation.liveness.hard_timeouts import store_timeout
from worker.translation.liveness.worker_id import host_and_container
from worker.translation.round.job_outcomes import fail


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_every_way_a_job_fails_counts_once_in_jobs_failed(model_dir, redis_server):
    parts = make_parts(model_dir, redis_server, max_deliveries=1)
    jobs = [submit(parts, SENTENCES[i % len(SENTENCES)]) for i in range(7)]
    by_worker, lost, timed_out, no_memory, unfenced, taken_over, succeeds = jobs

    claim(parts, by_worker)  # a round fails its own job (internal error, a soft time limit, ...)
    fail(parts.outcomes, by_worker, ErrorCode.INTERNAL_ERROR, "the worker could not translate this job")
    fail(parts.outcomes, by_worker, ErrorCode.INTERNAL_ERROR, "again")  # already failed: refused, not counted twice

    claim(parts, lost)  # its worker died (its lease let go), once more than TRANSQ_MAX_DELIVERIES allows
    parts.job_claims.drop_lease(lost, parts.claims.fence(lost))
    assert parts.claims.claim(lost).outcome == "lost"

    killed = make_parts(model_dir, redis_server)  # the pool process killed at the hard time limit
    killed.claims.worker_id = f"{host_and_container()}:{_dead_pid()}:abcdef"
    claim(killed, timed_out)
    store_timeout(parts.store.once, parts.job_claims.once, parts.broker, parts.settings, timed_out)

    hungry = make_parts(model_dir, redis_server, memory_headroom_mb=2**30)  # its batch fits no free memory
    claim(hungry, no_memory)
    hungry.passes.run({w.job.id: w for w in hungry.loader.load([no_memory])})

    parts.store.once.fail(unfenced, ErrorCode.DOCUMENT_TOO_COMPLEX, "as the API and the document stage fail")

    claim(parts, taken_over)  # another worker took it over: this one's late failure is refused
    parts.job_claims.drop_lease(taken_over, parts.claims.fence(taken_over))
    stale_fence = parts.claims.fence(taken_over)
    claim(make_parts(model_dir, redis_server), taken_over)
    assert parts.store.fail(taken_over, ErrorCode.INTERNAL_ERROR, "late", stale_fence) == "fenced"

    claim(parts, succeeds)
    parts.passes.run({w.job.id: w for w in parts.loader.load([succeeds])})

    statuses = {job_id: status(parts, job_id) for job_id in jobs}
    assert statuses == {
        **dict.fromkeys([by_worker, lost, timed_out, no_memory, unfenced], "failed"),
        taken_over: "running",
        succeeds: "succeeded",
    }
    codes = [parts.store.get(j).error["code"] for j in (by_worker, lost, timed_out, no_memory, unfenced)]
    assert codes == ["internal_error", "worker_lost", "timeout", "resource_exhausted", "document_too_complex"]
    counters, _ = parts.backends.stats.read()
    assert counters["jobs_failed"] == list(statuses.values()).count("failed") == 5
