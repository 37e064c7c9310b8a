"""A round's claims against a real Redis and the real engine (tiny model), without Celery in between."""

import threading
import time

import pytest

from shared.jobs import QUEUED, SUCCEEDED, Job, new_job_id, utc_now
from tests.stack import stack_settings


@pytest.fixture(scope="module")
def loaded_engine(model_dir):
    from worker.engine import TranslationEngine

    return TranslationEngine(stack_settings("redis://unused", model_dir))


def context(redis_server, model_dir, engine, **overrides):
    from worker.context import WorkerContext

    ctx = WorkerContext(stack_settings(redis_server.url, model_dir, **overrides))
    ctx.__dict__["engine"] = engine  # the module's loaded engine stands in for this context's own load
    return ctx


def submit(ctx, text: str) -> str:
    job = Job(
        id=new_job_id(),
        status=QUEUED,
        texts=[text],
        model=ctx.settings.model,
        created_at=utc_now(),
        sentences_total=1,
        submitted=time.time(),
    )
    ctx.store.create(job)
    return job.id


def submit_when_claimed(ctx, claimed_job: str, text: str) -> threading.Thread:
    """Submit a job as soon as `claimed_job` holds a lease: after the round has read the waiting jobs
    (it claims them after reading), and well within its first 10 ms look."""

    def run() -> None:
        deadline = time.monotonic() + 10
        while not ctx.redis.exists(ctx.keys.lease(claimed_job)) and time.monotonic() < deadline:
            time.sleep(0.0005)
        submit(ctx, text)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.parametrize("linger_ms, gathered", [(300, True), (0, False)])
def test_a_burst_still_arriving_joins_the_round(redis_server, model_dir, loaded_engine, linger_ms, gathered):
    from worker.rounds import run_round

    ctx = context(redis_server, model_dir, loaded_engine, burst_linger_ms=linger_ms)
    first, second = submit(ctx, "今天天气很好。"), submit(ctx, "谢谢你的帮助！")
    late = submit_when_claimed(ctx, second, "明天可能会下雨。")
    result = run_round(ctx, first)
    late.join()
    assert result.jobs[:2] == [first, second]
    assert len(result.jobs) == (3 if gathered else 2)
    assert all(ctx.store.get(j).status == SUCCEEDED for j in result.jobs)


def test_a_lone_job_runs_alone_at_once(redis_server, model_dir, loaded_engine):
    """Nothing else was waiting when it was claimed: no burst, so the round does not look again."""
    from worker.rounds import run_round

    ctx = context(redis_server, model_dir, loaded_engine, burst_linger_ms=300)
    lone = submit(ctx, "今天天气很好。")
    result = run_round(ctx, lone)
    assert result.jobs == [lone] and ctx.store.get(lone).status == SUCCEEDED
