"""Helpers of the round and liveness tests: a worker process's parts on a real Redis and the tiny test model,
and jobs submitted to its route as the API stores them."""

from __future__ import annotations

import time

from shared.settings import Settings
from shared.store.job_record import Job, new_job_id, utc_now
from shared.store.job_status import JobStatus
from worker.translation.process_parts import ProcessParts

SENTENCES = ["今天天气很好。", "谢谢你的帮助！", "明天可能会下雨。", "我们去公园散步吧。", "请把门关上。"]


def make_parts(model_dir, redis_server, **overrides) -> ProcessParts:  # type: ignore[no-untyped-def]
    options = {"max_new_tokens": 6, "max_input_tokens": 16, **overrides}
    return ProcessParts(Settings(redis_url=redis_server.url, model=str(model_dir), **options))


def submit(parts: ProcessParts, text: str, sentences: int = 1, **fields) -> str:  # type: ignore[no-untyped-def]
    job = Job(
        id=new_job_id(),
        status=JobStatus.QUEUED,
        texts=[text],
        model=parts.settings.model,
        created_at=utc_now(),
        sentences_total=sentences,
        submitted=time.time(),
        route=parts.route.key,
        **fields,
    )
    parts.backends.store.create(job)
    return job.id


def claim(parts: ProcessParts, job_id: str) -> None:
    assert parts.claims.claim(job_id).outcome == "claimed"


def status(parts: ProcessParts, job_id: str) -> str:
    return parts.backends.redis.hget(parts.backends.keys.job(job_id), "status")
