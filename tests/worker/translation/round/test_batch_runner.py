"""A pass over a round's jobs (worker.translation.round.batch_runner): its plan, where it stops, what it records.
Real Redis and the tiny test model; jobs claimed as a round claims them."""

from __future__ import annotations

import time

import pytest

from shared.errors import ErrorCode
from shared.text.splitter import join_translations, split_text
from tests.worker.translation.worker_jobs import SENTENCES, claim, make_parts, status, submit
from worker.translation.drain import draining
from worker.translation.round.batch_plan import BatchPlan
from worker.translation.round.pass_ends import PassEnd

BIG_TEXT = "".join(f"第{i}句很短。" for i in range(8))  # eight short sentences
LONG_SENTENCE = "请把门关上，我们要开始今天的会议了，大家请坐好。"


def _active(parts, *job_ids):  # type: ignore[no-untyped-def]
    for job_id in job_ids:
        claim(parts, job_id)
    return {w.job.id: w for w in parts.loader.load(list(job_ids))}


@pytest.fixture
def small_batches(model_dir, redis_server):
    """Batches of two sentences at most."""
    return make_parts(model_dir, redis_server, max_batch_sentences=2)


def test_a_sentence_two_jobs_need_is_translated_once_and_both_finish(parts):
    shared, other = SENTENCES[0], SENTENCES[1]
    jobs = [submit(parts, shared), submit(parts, shared + other, sentences=2)]
    active = _active(parts, *jobs)
    assert parts.passes.run(active) is PassEnd.DONE
    assert active == {}
    assert [status(parts, j) for j in jobs] == ["succeeded", "succeeded"]
    expected = parts.engine.translate_ids(parts.engine.token_ids([shared, other]))
    results = [parts.store.get(j).result for j in jobs]
    assert results == [
        [expected[0]],
        [join_translations(split_text(shared + other, parts.settings.max_sentence_chars), expected)],
    ]
    counters, _ = parts.backends.stats.read()
    assert counters["sentences_translated"] == 2  # the shared sentence once
    assert parts.backends.cache.get_many(parts.namespace, [shared, other]) == expected


def test_the_plan_runs_the_first_jobs_first_then_the_shortest_job(small_batches):
    parts = small_batches
    big, small = submit(parts, BIG_TEXT, sentences=8), submit(parts, LONG_SENTENCE)
    active = _active(parts, big, small)
    plan = BatchPlan.make(parts.engine, active, first=frozenset())
    assert len(plan.batches) == 5 and all(len(b) <= 2 for b in plan.batches)
    # By length the small job's long sentence comes last; shortest job first puts it first.
    assert plan.jobs_of(plan.batches[0]) == {small}
    ahead = BatchPlan.make(parts.engine, active, first=frozenset({big}))
    assert all(ahead.jobs_of(b) == {big} for b in ahead.batches[:4]) and ahead.jobs_of(ahead.batches[4]) == {small}


def test_a_sentence_too_long_for_the_model_runs_in_pieces_joined_in_order(model_dir, redis_server):
    parts = make_parts(model_dir, redis_server, max_input_tokens=4)
    job = submit(parts, LONG_SENTENCE)
    active = _active(parts, job)
    plan = BatchPlan.make(parts.engine, active, first=frozenset())
    ids = parts.engine.token_ids([LONG_SENTENCE])[0]
    assert len(plan.pieces) == len(parts.engine.chunks(ids)) > 1
    assert parts.passes.run(active) is PassEnd.DONE
    pieces = parts.engine.translate_ids(parts.engine.chunks(ids))
    assert parts.store.get(job).result == [" ".join(p for p in pieces if p)]


def test_a_fair_slice_stops_only_while_others_wait_and_keeps_the_progress(small_batches):
    parts = small_batches
    big = submit(parts, BIG_TEXT, sentences=8)
    active = _active(parts, big)
    assert parts.passes.run(active, fair_slice=1) is PassEnd.DONE  # nobody waits: the slice does not apply
    again = submit(parts, BIG_TEXT.replace("句", "段"), sentences=8)
    active = _active(parts, again)
    submit(parts, SENTENCES[0])  # now one waits
    assert parts.passes.run(active, fair_slice=1) is PassEnd.FAIR_SLICE
    assert status(parts, again) == "running" and active[again].done == 2
    assert parts.job_claims.once.partial_translations([again])[0].keys() == {0, 1}  # saved with the job's progress


def test_a_time_slice_runs_one_batch_at_least(small_batches):
    parts = small_batches
    job = submit(parts, BIG_TEXT, sentences=8)
    active = _active(parts, job)
    assert parts.passes.run(active, deadline=time.monotonic() - 1) is PassEnd.TIME_SLICE
    assert active[job].done == 2


def test_a_draining_worker_stops_before_its_next_batch(parts):
    job = submit(parts, SENTENCES[0])
    active = _active(parts, job)
    draining.set()
    try:
        assert parts.passes.run(active) is PassEnd.DRAIN
    finally:
        draining.clear()
    assert active[job].done == 0 and status(parts, job) == "running"


def test_a_cancelled_job_leaves_the_pass_and_the_others_finish(parts):
    cancelled, other = submit(parts, SENTENCES[0]), submit(parts, SENTENCES[1])
    active = _active(parts, cancelled, other)
    parts.store.once.cancel(cancelled)
    assert parts.passes.run(active) is PassEnd.DONE
    assert [status(parts, cancelled), status(parts, other)] == ["cancelled", "succeeded"]


def test_a_batch_that_fits_no_free_memory_fails_its_jobs(model_dir, redis_server):
    parts = make_parts(model_dir, redis_server, memory_headroom_mb=2**30)  # nothing is ever free
    job = submit(parts, SENTENCES[0])
    active = _active(parts, job)
    assert parts.passes.run(active) is PassEnd.DONE and active == {}
    assert status(parts, job) == "failed" and parts.store.get(job).error["code"] == ErrorCode.RESOURCE_EXHAUSTED


def test_a_job_taken_over_meanwhile_is_dropped_and_its_late_result_refused(model_dir, redis_server, parts):
    job = submit(parts, SENTENCES[0])
    active = _active(parts, job)
    other = make_parts(model_dir, redis_server)  # another worker takes the job over (this one stalled)
    parts.job_claims.drop_lease(job, active[job].fence)
    assert other.claims.claim(job).outcome == "claimed"
    assert parts.passes.run(active) is PassEnd.DONE and active == {}
    assert status(parts, job) == "running" and parts.job_claims.once.holder(job)[0] == other.worker_id
    counters, _ = parts.backends.stats.read()
    assert counters["fenced_writes"] == 1 and "jobs_succeeded" not in counters


def test_the_worker_reads_the_split_stored_with_the_job_not_its_own(parts):
    """A job stores its split (its spans: the API's, or the document stage's); the worker takes its sentences
    from there, whatever its own TRANSQ_MAX_SENTENCE_CHARS would cut (they agree only while both processes
    have the same setting)."""
    from shared.text.splitter import sentences, spans_of

    text = "今天天气很好，我们一起去公园散步，然后去吃晚饭，最后回家休息。"
    api_split = split_text(text, 12)  # an API with a smaller limit cut it in pieces
    assert len(sentences(api_split)) > 1 and len(sentences(split_text(text, parts.settings.max_sentence_chars))) == 1
    job = submit(parts, text, sentences=len(sentences(api_split)), spans=[spans_of(text, api_split)])
    (work,) = _active(parts, job).values()
    assert work.segments == [api_split] and len(work.sentences) == len(sentences(api_split))
    assert parts.passes.run({job: work}) is PassEnd.DONE
    assert status(parts, job) == "succeeded"
    stored = parts.backends.store.get(job)
    assert stored.sentences_done == stored.sentences_total == len(sentences(api_split)) and stored.spans == []
