"""A pass over a round's jobs (worker.translation.round.batch_runner): its plan, where it stops, what it records.
Real Redis and the tiny test model; jobs claimed as a round claims them."""

from __future__ import annotations

import time

import pytest

from shared.errors import ErrorCode
from shared.text.splitter import join_translations, split_text
from tests.worker.translation.scheduling.worker_jobs import SENTENCES, claim, make_context, status, submit
from worker.translation.drain import draining
from worker.translation.round.batch_plan import BatchPlan
from worker.translation.round.batch_runner import translate_pass
from worker.translation.round.job_work import load_works
from worker.translation.round.pass_slicing import PassEnd

BIG_TEXT = "".join(f"第{i}句很短。" for i in range(8))  # eight short sentences
LONG_SENTENCE = "请把门关上，我们要开始今天的会议了，大家请坐好。"


def _active(ctx, *job_ids):  # type: ignore[no-untyped-def]
    for job_id in job_ids:
        claim(ctx, job_id)
    return {w.job.id: w for w in load_works(ctx, list(job_ids))}


@pytest.fixture
def small_batches(model_dir, redis_server):
    """Batches of two sentences at most."""
    return make_context(model_dir, redis_server, max_batch_sentences=2)


def test_a_sentence_two_jobs_need_is_translated_once_and_both_finish(context):
    ctx = context
    shared, other = SENTENCES[0], SENTENCES[1]
    jobs = [submit(ctx, shared), submit(ctx, shared + other, sentences=2)]
    active = _active(ctx, *jobs)
    assert translate_pass(ctx, active) is PassEnd.DONE
    assert active == {}
    assert [status(ctx, j) for j in jobs] == ["succeeded", "succeeded"]
    expected = ctx.engine.translate_ids(ctx.engine.token_ids([shared, other]))
    results = [ctx.store.get(j).result for j in jobs]
    assert results == [
        [expected[0]],
        [join_translations(split_text(shared + other, ctx.settings.max_sentence_chars), expected)],
    ]
    counters, _ = ctx.stats.read()
    assert counters["sentences_translated"] == 2  # the shared sentence once
    assert ctx.cache.get_many(ctx.namespace, [shared, other]) == expected


def test_the_plan_runs_the_first_jobs_first_then_the_shortest_job(small_batches):
    ctx = small_batches
    big, small = submit(ctx, BIG_TEXT, sentences=8), submit(ctx, LONG_SENTENCE)
    active = _active(ctx, big, small)
    plan = BatchPlan.make(ctx.engine, active, first=frozenset())
    assert len(plan.batches) == 5 and all(len(b) <= 2 for b in plan.batches)
    # By length the small job's long sentence comes last; shortest job first puts it first.
    assert plan.jobs_of(plan.batches[0]) == {small}
    ahead = BatchPlan.make(ctx.engine, active, first=frozenset({big}))
    assert all(ahead.jobs_of(b) == {big} for b in ahead.batches[:4]) and ahead.jobs_of(ahead.batches[4]) == {small}


def test_a_sentence_too_long_for_the_model_runs_in_pieces_joined_in_order(model_dir, redis_server):
    ctx = make_context(model_dir, redis_server, max_input_tokens=4)
    job = submit(ctx, LONG_SENTENCE)
    active = _active(ctx, job)
    plan = BatchPlan.make(ctx.engine, active, first=frozenset())
    ids = ctx.engine.token_ids([LONG_SENTENCE])[0]
    assert len(plan.pieces) == len(ctx.engine.chunks(ids)) > 1
    assert translate_pass(ctx, active) is PassEnd.DONE
    pieces = ctx.engine.translate_ids(ctx.engine.chunks(ids))
    assert ctx.store.get(job).result == [" ".join(p for p in pieces if p)]


def test_a_fair_slice_stops_only_while_others_wait_and_keeps_the_progress(small_batches):
    ctx = small_batches
    big = submit(ctx, BIG_TEXT, sentences=8)
    active = _active(ctx, big)
    assert translate_pass(ctx, active, fair_slice=1) is PassEnd.DONE  # nobody waits: the slice does not apply
    again = submit(ctx, BIG_TEXT.replace("句", "段"), sentences=8)
    active = _active(ctx, again)
    submit(ctx, SENTENCES[0])  # now one waits
    assert translate_pass(ctx, active, fair_slice=1) is PassEnd.FAIR_SLICE
    assert status(ctx, again) == "running" and active[again].done == 2
    assert ctx.store.once.partial_translations([again])[0].keys() == {0, 1}  # saved with the job's progress


def test_a_time_slice_runs_one_batch_at_least(small_batches):
    ctx = small_batches
    job = submit(ctx, BIG_TEXT, sentences=8)
    active = _active(ctx, job)
    assert translate_pass(ctx, active, deadline=time.monotonic() - 1) is PassEnd.TIME_SLICE
    assert active[job].done == 2


def test_a_draining_worker_stops_before_its_next_batch(context):
    ctx = context
    job = submit(ctx, SENTENCES[0])
    active = _active(ctx, job)
    draining.set()
    try:
        assert translate_pass(ctx, active) is PassEnd.DRAIN
    finally:
        draining.clear()
    assert active[job].done == 0 and status(ctx, job) == "running"


def test_a_cancelled_job_leaves_the_pass_and_the_others_finish(context):
    ctx = context
    cancelled, other = submit(ctx, SENTENCES[0]), submit(ctx, SENTENCES[1])
    active = _active(ctx, cancelled, other)
    ctx.store.once.cancel(cancelled)
    assert translate_pass(ctx, active) is PassEnd.DONE
    assert [status(ctx, cancelled), status(ctx, other)] == ["cancelled", "succeeded"]


def test_a_batch_that_fits_no_free_memory_fails_its_jobs(model_dir, redis_server):
    ctx = make_context(model_dir, redis_server, memory_headroom_mb=2**30)  # nothing is ever free
    job = submit(ctx, SENTENCES[0])
    active = _active(ctx, job)
    assert translate_pass(ctx, active) is PassEnd.DONE and active == {}
    assert status(ctx, job) == "failed" and ctx.store.get(job).error["code"] == ErrorCode.RESOURCE_EXHAUSTED


def test_a_job_taken_over_meanwhile_is_dropped_and_its_late_result_refused(model_dir, redis_server, context):
    ctx = context
    job = submit(ctx, SENTENCES[0])
    active = _active(ctx, job)
    other = make_context(model_dir, redis_server)  # another worker takes the job over (this one stalled)
    ctx.store.drop_lease(job, active[job].fence)
    assert other.claims.claim(job).outcome == "claimed"
    assert translate_pass(ctx, active) is PassEnd.DONE and active == {}
    assert status(ctx, job) == "running" and ctx.store.once.holder(job)[0] == other.worker_id
    counters, _ = ctx.stats.read()
    assert counters["fenced_writes"] == 1 and "jobs_succeeded" not in counters
