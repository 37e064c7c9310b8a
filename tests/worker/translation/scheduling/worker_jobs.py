"""Helpers of the scheduling tests: a worker context on a real Redis and the tiny test model, and jobs
submitted to its route as the API stores them."""

from __future__ import annotations

import time

from shared.settings import Settings
from shared.store.job_record import Job, new_job_id, utc_now
from shared.store.job_status import JobStatus

SENTENCES = ["今天天气很好。", "谢谢你的帮助！", "明天可能会下雨。", "我们去公园散步吧。", "请把门关上。"]


def make_context(model_dir, redis_server, **overrides):  # type: ignore[no-untyped-def]
    from worker.translation.context import WorkerContext

    options = {"max_new_tokens": 6, "max_input_tokens": 16, **overrides}
    return WorkerContext(Settings(redis_url=redis_server.url, model=str(model_dir), **options))


def submit(ctx, text: str, sentences: int = 1, **fields) -> str:  # type: ignore[no-untyped-def]
    job = Job(
        id=new_job_id(),
        status=JobStatus.QUEUED,
        texts=[text],
        model=ctx.settings.model,
        created_at=utc_now(),
        sentences_total=sentences,
        submitted=time.time(),
        route=ctx.route.key,
        **fields,
    )
    ctx.store.once.create(job)
    return job.id


def claim(ctx, job_id: str) -> None:  # type: ignore[no-untyped-def]
    assert ctx.claims.claim(job_id).outcome == "claimed"


def status(ctx, job_id: str) -> str:  # type: ignore[no-untyped-def]
    return ctx.redis.hget(ctx.keys.job(job_id), "status")
