"""A round takes in jobs that arrive while its small batch starts: real Redis, the real engine."""

from __future__ import annotations

from shared.settings import Settings
from shared.store.job_record import Job
from tests.worker.translation.worker_jobs import SENTENCES, claim, make_parts, status, submit
from worker.translation.round.claims import LeaseKeeper
from worker.translation.round.pass_ends import REGROUP_STEPS, ArrivalWatch


def _keeper(parts, job_ids):  # type: ignore[no-untyped-def]
    return LeaseKeeper(parts.claims, parts.broker, parts.activity, job_ids)


def test_small_batch_stops_for_arrivals_and_the_round_takes_them_in(parts, caplog):
    first = submit(parts, SENTENCES[0])
    claim(parts, first)  # its message came first, and found nobody else waiting
    arrivals = [submit(parts, s) for s in SENTENCES[1:]]  # then a burst, while its batch starts
    with caplog.at_level("INFO", logger="worker"), _keeper(parts, [first]) as keeper:
        parts.rounds.translate_jobs([first], own_job_id=first, keeper=keeper)
    assert keeper.job_ids == [first, *arrivals]  # their leases were renewed with the round's
    assert "batch of 1 stopped" in caplog.text and "took 4 arriving job(s)" in caplog.text
    # Everyone finished, in one shared batch, with what the engine gives for them.
    redis, keys = parts.backends.redis, parts.backends.keys
    jobs = [Job.from_hash(redis.hgetall(keys.job(j))) for j in [first, *arrivals]]
    assert [j.status for j in jobs] == ["succeeded"] * 5
    assert parts.claims.waiting() == 0
    assert [j.result[0] for j in jobs] == parts.engine.translate_ids(parts.engine.token_ids(SENTENCES))
    histogram = redis.hgetall(keys.histograms)
    assert histogram["batch_size:+Inf"] == "1" and histogram["batch_size:sum"] == "5"


def test_a_round_without_a_keeper_never_stops_for_arrivals(parts):
    """A redelivered job runs alone (it may be poison): arrivals wait for their own messages."""
    first = submit(parts, SENTENCES[0])
    claim(parts, first)
    arrivals = [submit(parts, s) for s in SENTENCES[1:]]
    parts.rounds.translate_jobs([first], own_job_id=first, keeper=None)
    assert status(parts, first) == "succeeded"
    assert [status(parts, j) for j in arrivals] == ["queued"] * 4


def test_arrival_watch_asks_only_during_the_first_steps_and_wants_the_batch_doubled(parts):
    for text in SENTENCES[:2]:
        submit(parts, text)
    assert not ArrivalWatch(parts.claims, batch_size=3)()  # two waiting would not double a batch of three
    watch = ArrivalWatch(parts.claims, batch_size=2)
    assert watch()
    for _ in range(REGROUP_STEPS - 1):
        watch()
    assert not watch()  # past its first steps a batch runs to the end


def test_the_stopped_batchs_jobs_run_first_in_the_new_plan(model_dir, redis_server, caplog):
    """Taking in a large arrival never makes the stopped batch's job wait for the arrival's batches."""
    parts = make_parts(model_dir, redis_server, max_input_tokens=64, max_batch_sentences=4)
    # Two long sentences: a batch of two, under half the budget of four, so it watches for arrivals.
    first = submit(
        parts, "请把门关上，我们要开始今天的会议了，大家请坐好。我们明天早上八点在学校门口见面，不要迟到。", 2
    )
    claim(parts, first)
    arrivals = [submit(parts, s) for s in SENTENCES[:3]]  # three short one-sentence jobs: a batch of their own
    with caplog.at_level("INFO", logger="worker"), _keeper(parts, [first]) as keeper:
        parts.rounds.translate_jobs([first], own_job_id=first, keeper=keeper)
    assert keeper.job_ids == [first, *arrivals]
    assert [status(parts, j) for j in (first, *arrivals)] == ["succeeded"] * 4
    # By length, and shortest job first, the arrivals' batch would run first; the stopped batch's job goes first.
    finished = [r.getMessage() for r in caplog.records if "succeeded" in r.getMessage()]
    assert finished[0].startswith(f"job {first} succeeded"), finished


def test_batches_run_shortest_job_first(model_dir, redis_server, caplog):
    """A one-sentence job sharing a round with a big one finishes with the first batch, not the last."""
    parts = make_parts(model_dir, redis_server, max_batch_sentences=4, max_input_tokens=Settings().max_input_tokens)
    big_text = "".join(f"第{i}句很短。" for i in range(12))  # short sentences: by length their batches go first
    big = submit(parts, big_text, sentences=12)
    small = submit(parts, "请把门关上，我们要开始今天的会议了，大家请坐好。")  # the longest sentence: last by length
    for job_id in (big, small):
        claim(parts, job_id)
    with caplog.at_level("INFO", logger="worker"):
        parts.rounds.translate_jobs([big, small], own_job_id=big)
    finished = [r.getMessage() for r in caplog.records if "succeeded" in r.getMessage()]
    assert finished[0].startswith(f"job {small} succeeded"), finished
    assert status(parts, big) == "succeeded"
